//! Binning of setup triangles to screen tiles, and the per-tile rasteriser.

use super::material::{Corners, MaterialShader, SlotPlan, SurfaceLanes};
use super::setup::{edge_is_top_left, pixel_centre, Setup, SetupTri, PART_SHIFT, SUBPIXEL_BITS};
use super::shade::{pack_lanes, Fragment, FragmentShader};
use super::{Draw, RasterOutput, RasterSettings, RasterStats};
use crate::color::{pack_srgb, pack_with, srgb_lut};
use crate::material::lanes::LANES;
use crate::material::{AlphaMode, Material};
use glam::Vec3;
use rayon::prelude::*;

/// Tile edge in pixels.
pub const TILE: u32 = 32;
const TILE_SHIFT: u32 = 5;

/// Setup triangle ids per tile, in submission order: tile `k` holds
/// `ids[offsets[k]..offsets[k + 1]]`. Kept between frames so that its buffers are reused.
#[derive(Default, Clone)]
pub struct Bins {
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub offsets: Vec<u32>,
    pub ids: Vec<u32>,
    /// per setup part: triangles per tile, then (after the scan) where the part's next id goes
    cursors: Vec<Vec<u32>>,
}

/// The tiles a triangle's pixel bounding box touches: x0, y0, x1, y1 (inclusive).
#[inline]
fn span(b: &[u16; 4]) -> (u32, u32, u32, u32) {
    (
        b[0] as u32 >> TILE_SHIFT,
        b[1] as u32 >> TILE_SHIFT,
        b[2] as u32 >> TILE_SHIFT,
        b[3] as u32 >> TILE_SHIFT,
    )
}

/// Counting-sort binning: per setup part count per tile, scan in (tile, part) order, then each
/// part scatters its ids into its own ranges, so order within a tile is submission order.
pub(super) fn bin(setup: &Setup, s: &RasterSettings, bins: &mut Bins) {
    let tiles_x = s.width.div_ceil(TILE);
    let tiles_y = s.height.div_ceil(TILE);
    let ntiles = (tiles_x * tiles_y) as usize;
    bins.tiles_x = tiles_x;
    bins.tiles_y = tiles_y;
    bins.cursors.resize_with(setup.parts.len(), Vec::new);
    setup
        .boxes
        .par_iter()
        .zip(bins.cursors.par_iter_mut())
        .for_each(|(part, n)| {
            n.clear();
            n.resize(ntiles, 0);
            for t in part {
                let (x0, y0, x1, y1) = span(t);
                for ty in y0..=y1 {
                    for tx in x0..=x1 {
                        n[(ty * tiles_x + tx) as usize] += 1;
                    }
                }
            }
        });
    bins.offsets.clear();
    bins.offsets.resize(ntiles + 1, 0);
    let mut acc = 0u32;
    for tile in 0..ntiles {
        bins.offsets[tile] = acc;
        for c in bins.cursors.iter_mut() {
            let n = c[tile];
            c[tile] = acc;
            acc += n;
        }
    }
    bins.offsets[ntiles] = acc;
    bins.ids.clear();
    bins.ids.resize(acc as usize, 0);
    let out = SyncPtr(bins.ids.as_mut_ptr());
    setup
        .boxes
        .par_iter()
        .zip(bins.cursors.par_iter_mut())
        .enumerate()
        .for_each(|(c, (part, next))| {
            let out = &out;
            for (i, t) in part.iter().enumerate() {
                let (x0, y0, x1, y1) = span(t);
                let id = (c as u32) << PART_SHIFT | i as u32;
                for ty in y0..=y1 {
                    for tx in x0..=x1 {
                        let k = (ty * tiles_x + tx) as usize;
                        // SAFETY: the ranges a part owns after the scan are disjoint across parts
                        // and tiles and lie within `ids`.
                        unsafe { *out.0.add(next[k] as usize) = id };
                        next[k] += 1;
                    }
                }
            }
        });
}

struct SyncPtr<T>(*mut T);
unsafe impl<T> Sync for SyncPtr<T> {}
unsafe impl<T> Send for SyncPtr<T> {}

/// Rasterises the frame band by band (a row of tiles, in parallel): each tile of a band is
/// rasterised and shaded in its own buffers and copied into the band's staging rows, and the
/// finished band goes to the frame in one pass of streaming stores, so the frame's 8 bytes per
/// pixel are written once, in whole cache lines, without first being read.
pub(super) fn raster_tiles(
    setup: &Setup,
    bins: &Bins,
    draws: &[Draw],
    s: &RasterSettings,
    stats: &mut RasterStats,
    out: &mut RasterOutput,
) {
    let (w, h) = (s.width as usize, s.height as usize);
    // reuse the target's buffers: every pixel is written below, so no clear is needed
    out.width = s.width;
    out.height = s.height;
    out.color.resize(w * h * 4, 0);
    out.depth.resize(w * h, 1.0);
    match (&mut out.coverage, s.count_coverage) {
        (Some(c), true) => c.resize(w * h, 0),
        (c, true) => *c = Some(vec![0u32; w * h]),
        (c, false) => *c = None,
    }
    let vp = SyncPtr(
        out.coverage
            .as_mut()
            .map_or(std::ptr::null_mut(), |c| c.as_mut_ptr()),
    );
    // packed colours are kept as little-endian words, so that a row of them is the frame's bytes
    let bg = pack_srgb(Vec3::from_array(s.background)).to_le();
    let fs = FragmentShader::new(s);
    let ms = MaterialShader::new(s);
    let wide = !s.baseline_isa && wide_isa();
    // the scans' vector paths: four lanes for small triangles (SSE2, the x86-64 baseline), and
    // eight for the others where the CPU has the wide build's features
    let lanes = if wide { Lanes::Eight } else { Lanes::Four };
    let band = w * TILE as usize;
    let fragments: u64 = out
        .color
        .par_chunks_mut(4 * band)
        .zip(out.depth.par_chunks_mut(band))
        .enumerate()
        .map(|(by, (fcolor, fdepth))| {
            STAGING.with_borrow_mut(|(scolor, sdepth, bary)| {
                scolor.resize(band, 0);
                sdepth.resize(band, 0.0);
                let vp = &vp;
                let ty = by as u32 * TILE;
                let th = TILE.min(s.height - ty) as usize;
                let mut frags = 0u64;
                for bx in 0..bins.tiles_x {
                    let k = (by as u32 * bins.tiles_x + bx) as usize;
                    let tx = bx * TILE;
                    let tw = TILE.min(s.width - tx) as usize;
                    let ids = &bins.ids[bins.offsets[k] as usize..bins.offsets[k + 1] as usize];
                    if ids.is_empty() && !s.count_coverage {
                        // nothing binned here: background and far depth
                        for j in 0..th {
                            let p = j * w + tx as usize;
                            scolor[p..p + tw].fill(bg);
                            sdepth[p..p + tw].fill(1.0);
                        }
                        continue;
                    }
                    let mut zbuf = [1f32; (TILE * TILE) as usize];
                    // the visibility buffer: per pixel the winning triangle (its place in `ids`)
                    // and its barycentrics there; colours are computed once per pixel after the
                    // last triangle
                    let mut win = [NONE; (TILE * TILE) as usize];
                    let mut cbuf = [bg; (TILE * TILE) as usize];
                    let mut cov = s
                        .count_coverage
                        .then(|| Box::new([0u32; (TILE * TILE) as usize]));
                    let tile = TileView { tx, ty, tw, th };
                    let (mut blended, mut masked) = (false, false);
                    // an upper bound of the tile's depths (far until the tile's fragments could
                    // cover it, then the buffer's maximum, taken again after every ZMAX_FRAGS
                    // fragments or ZMAX_TRIANGLES triangles): a triangle that lies behind it
                    // everywhere cannot win a pixel and is not scanned (not with coverage
                    // counts, which count hidden fragments too)
                    let cull_hidden = !s.count_coverage;
                    let (mut zmax, mut frags_at, mut tris_since) = (1f32, 0u64, 0u32);
                    let mut tile_frags = 0u64;
                    // Two passes: the tile's other triangles, then (when there are any) the
                    // alpha-tested ones, whose fragments then mostly meet the surface in front
                    // of them already and skip their alpha test, as on the GPU. A fragment of
                    // the second pass wins a depth tie against a fragment of an earlier
                    // triangle, so the winners are those of one pass in submission order.
                    for pass in 0..2 {
                        if pass == 1 && !masked {
                            break;
                        }
                        for (j, &id) in ids.iter().enumerate() {
                            let t = setup.get(id);
                            let d = &draws[t.draw as usize];
                            let mask = d.material.filter(|m| matches!(m.alpha, AlphaMode::Mask(_)));
                            masked |= mask.is_some();
                            if mask.is_some() != (pass == 1) {
                                continue;
                            }
                            // the records of a tile lie far apart: fetch the next ones' cache
                            // lines while this one is scanned
                            if let Some(&next) = ids.get(j + PREFETCH) {
                                prefetch(setup.get(next));
                            }
                            // blended fragments come after the opaque ones (in the lit mode)
                            if mask.is_none()
                                && fs.lit()
                                && d.material.is_some_and(|m| m.alpha == AlphaMode::Blend)
                            {
                                blended = true;
                                continue;
                            }
                            if cull_hidden {
                                tris_since += 1;
                                if tile_frags >= (tw * th) as u64
                                    && (tile_frags >= frags_at + ZMAX_FRAGS
                                        || tris_since >= ZMAX_TRIANGLES)
                                {
                                    zmax = tile_max_depth(&zbuf, tw, th);
                                    (frags_at, tris_since) = (tile_frags, 0);
                                }
                                if behind(t, zmax, mask.is_some()) {
                                    continue;
                                }
                            }
                            let mut vis = Visibility {
                                z: &mut zbuf,
                                win: &mut win,
                                bary,
                                cov: cov.as_deref_mut(),
                            };
                            let n = match mask {
                                Some(m) => raster_tri_with(
                                    t,
                                    j as u32,
                                    &tile,
                                    &mut vis,
                                    Lanes::No,
                                    true,
                                    |px, py| ms.passes_mask(d, m, t.tri, px, py),
                                ),
                                None => raster_tri(t, j as u32, &tile, &mut vis, lanes),
                            };
                            frags += n;
                            tile_frags += n;
                        }
                    }
                    let shading = TileShading {
                        fs: &fs,
                        ms: &ms,
                        setup,
                        ids,
                        draws,
                        tile: &tile,
                        win: &win,
                        bary,
                        in_lanes: IN_LANES,
                    };
                    shade_tile(wide, &shading, &mut cbuf);
                    if blended {
                        frags += blend_tile(
                            &ms,
                            setup,
                            ids,
                            draws,
                            &tile,
                            &mut zbuf,
                            &mut win,
                            bary,
                            cov.as_deref_mut(),
                            &mut cbuf,
                        );
                    }
                    for j in 0..th {
                        let p = j * w + tx as usize;
                        let l = j * TILE as usize;
                        scolor[p..p + tw].copy_from_slice(&cbuf[l..l + tw]);
                        sdepth[p..p + tw].copy_from_slice(&zbuf[l..l + tw]);
                        if let Some(cov) = &cov {
                            let p = (ty as usize + j) * w + tx as usize;
                            // SAFETY: tiles are disjoint rectangles of the frame; this row segment
                            // of the coverage buffer (which exists when requested) lies inside
                            // the frame and belongs to this tile only.
                            let vrow = unsafe { std::slice::from_raw_parts_mut(vp.0.add(p), tw) };
                            vrow.copy_from_slice(&cov[l..l + tw]);
                        }
                    }
                }
                stream_copy(fcolor, bytemuck::cast_slice(&scolor[..th * w]));
                stream_copy(
                    bytemuck::cast_slice_mut(fdepth),
                    bytemuck::cast_slice(&sdepth[..th * w]),
                );
                frags
            })
        })
        .sum();
    stats.fragments = fragments;
}

/// How far below its corners' least depth a triangle's interpolated depth may round, relative to
/// its largest depth (at least 1): interpolation takes a few roundings of terms of that size.
const Z_SLACK: f32 = 1e-6;

/// Whether every fragment of `t` lies behind `zmax`, an upper bound of the depths it would be
/// tested against: then no fragment passes (`z < depth`, or for the alpha-tested pass, which wins
/// ties, `z <= depth`).
#[inline]
fn behind(t: &SetupTri, zmax: f32, ties: bool) -> bool {
    // (interpolation's rounding grows with the depths: a triangle beyond the far plane may
    // reach far past 1)
    let big = t.z.iter().fold(1f32, |m, z| m.max(z.abs()));
    let lo = t.z[0].min(t.z[1]).min(t.z[2]) - Z_SLACK * big;
    lo > zmax || (lo == zmax && !ties)
}

/// How often a tile's depth bound is taken again once its fragments could cover it: after this
/// many fragments or this many triangles since the last time: often enough that hidden
/// triangles are skipped soon after the tile fills, rarely enough that the bound's scan of the
/// tile stays cheap.
const ZMAX_FRAGS: u64 = 64;
const ZMAX_TRIANGLES: u32 = 16;

/// The largest depth among the tile's `tw` x `th` pixels (eight running maxima, so that the
/// loop runs in vector instructions; depths are never NaN).
fn tile_max_depth(z: &[f32; (TILE * TILE) as usize], tw: usize, th: usize) -> f32 {
    let max = |a: f32, b: f32| if b > a { b } else { a };
    let mut m = [0f32; 8];
    for row in z.chunks_exact(TILE as usize).take(th) {
        let mut eights = row[..tw].chunks_exact(8);
        for c in &mut eights {
            for k in 0..8 {
                m[k] = max(m[k], c[k]);
            }
        }
        for &v in eights.remainder() {
            m[0] = max(m[0], v);
        }
    }
    m.into_iter().fold(0.0, max)
}

/// A tile's barycentrics: per pixel (l1, l2) of its visible triangle.
type TileBary = [[f32; 2]; (TILE * TILE) as usize];

thread_local! {
    /// Each worker's staging rows of one band (colour, depth) and its tiles' barycentrics, kept
    /// between bands and frames (borrowed for a whole band, whose work starts no parallel work of
    /// its own). The barycentrics are never cleared: the fragment stage reads them only where the
    /// tile's visibility buffer names a triangle, and the triangle that won there wrote them.
    static STAGING: std::cell::RefCell<(Vec<u32>, Vec<f32>, Box<TileBary>)> =
        std::cell::RefCell::new((Vec::new(), Vec::new(), Box::new([[0.0; 2]; (TILE * TILE) as usize])));
}

/// Copies `src` to `dst` (of the same length) with non-temporal stores for the whole 64-byte
/// lines of `dst`, so that the destination lines are not read before they are overwritten.
fn stream_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(64).min(dst.len());
        let body = (dst.len() - head) / 64 * 64;
        dst[..head].copy_from_slice(&src[..head]);
        for off in (head..head + body).step_by(16) {
            // SAFETY: SSE2 is part of the x86-64 baseline; off + 16 <= head + body <= len for
            // both slices, and dst + off is 16-byte aligned (dst + head is 64-byte aligned).
            unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(off).cast::<__m128i>());
                _mm_stream_si128(dst.as_mut_ptr().add(off).cast::<__m128i>(), v);
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
        // SAFETY: SSE is part of the x86-64 baseline. Orders the streaming stores before what
        // this thread does next (the band's completion, which the caller synchronises on).
        unsafe { _mm_sfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// How many triangles ahead the tile loop prefetches setup records.
const PREFETCH: usize = 4;

/// Asks for the cache lines of a setup record (a hint; no effect elsewhere than x86-64).
#[inline]
fn prefetch(t: &SetupTri) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (t as *const SetupTri).cast::<i8>();
        for off in (0..std::mem::size_of::<SetupTri>()).step_by(64) {
            // SAFETY: prefetching is a hint and never faults; the addresses lie within the
            // record, and SSE is part of the x86-64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
}

/// The part of the frame a tile covers.
struct TileView {
    tx: u32,
    ty: u32,
    tw: usize,
    th: usize,
}

impl TileView {
    /// The frame pixel at place `l` of the tile's buffers (row by row, TILE to a row).
    #[inline(always)]
    fn pixel(&self, l: usize) -> (u32, u32) {
        (self.tx + (l as u32 % TILE), self.ty + l as u32 / TILE)
    }
}

/// No triangle covers the pixel.
const NONE: u32 = u32::MAX;

/// A tile's depth and visibility buffers (and coverage counts when requested).
struct Visibility<'a> {
    z: &'a mut [f32; (TILE * TILE) as usize],
    win: &'a mut [u32; (TILE * TILE) as usize],
    bary: &'a mut TileBary,
    cov: Option<&'a mut [u32; (TILE * TILE) as usize]>,
}

/// Interpolates triangle `t`'s varyings at barycentrics (l1, l2) of corners 1 and 2,
/// perspective-correct: blends the 1/w-weighted varyings, then multiplies by w. Returns them and
/// the view depth.
#[inline]
fn interpolate(t: &SetupTri, l1: f32, l2: f32) -> ([f32; 8], f32) {
    let [v0, d1, d2] = &t.var;
    let [w0, w1, w2] = t.inv_w;
    let view_z = 1.0 / (w0 + w1 * l1 + w2 * l2);
    let a = std::array::from_fn(|i| (v0[i] + d1[i] * l1 + d2[i] * l2) * view_z);
    (a, view_z)
}

/// What the fragment stage reads of one tile: the frame's shaders, triangles and draws, the
/// tile's place, its visibility buffer and its barycentrics, and from how many pixels a
/// material's queue left at the tile's end is shaded in lanes ([`IN_LANES`]; the tests also take
/// every queue in lanes and every pixel alone).
#[derive(Clone, Copy)]
struct TileShading<'a> {
    fs: &'a FragmentShader<'a>,
    ms: &'a MaterialShader<'a>,
    setup: &'a Setup,
    ids: &'a [u32],
    draws: &'a [Draw<'a>],
    tile: &'a TileView,
    win: &'a [u32; (TILE * TILE) as usize],
    bary: &'a TileBary,
    in_lanes: usize,
}

/// Colours every covered pixel of the tile from its visible triangle (see [`shade_tile_body`]),
/// with the x86-64-v3 build of the fragment stage where `wide` (the CPU has it: [`wide_isa`]).
fn shade_tile(wide: bool, t: &TileShading, cbuf: &mut [u32; (TILE * TILE) as usize]) {
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is true only where wide_isa() found every feature the function enables.
        unsafe { shade_tile_v3(t, cbuf) };
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide; // (only x86-64 has a second build)
    shade_tile_body::<false>(t, cbuf)
}

/// Whether this CPU has x86-64-v3 (AVX2, FMA, BMI1/2, LZCNT, MOVBE), which the fragment stage's
/// second build uses. Rust never fuses a multiply and an add on its own, and the build's
/// operations are those of the baseline build in the same order, so both give the same bytes;
/// the wider instructions make Sponza's material path about a tenth faster.
pub(super) fn wide_isa() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("movbe")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`shade_tile_body`] built for x86-64-v3: the material path is inlined into it (its functions
/// are `#[inline(always)]`), so all of it runs in the wider instructions; groups of several
/// materials run theirs in `apart_v3`, built the same way.
///
/// # Safety
/// The CPU must have the features enabled here ([`wide_isa`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,movbe")]
unsafe fn shade_tile_v3(t: &TileShading, cbuf: &mut [u32; (TILE * TILE) as usize]) {
    shade_tile_body::<true>(t, cbuf)
}

/// Colours every covered pixel of the tile from its visible triangle. The lit mode goes eight
/// pixels at a time, a block of 2 x 4 ([`groups`]): those of draws with a material by the
/// material path, in lanes where all eight share a material ([`MaterialShader::shade_lanes`],
/// the same values as one by one);
/// in a group of several materials, each pixel joins its material's queue ([`Queue`]), which
/// is shaded in lanes when eight have gathered, and at the tile's end in lanes where it holds
/// at least `in_lanes`, else one by one; the others by the plain lit shader four at a time.
/// The other modes go pixel by pixel. `WIDE`: this is the x86-64-v3 build.
#[inline(always)]
fn shade_tile_body<const WIDE: bool>(t: &TileShading, cbuf: &mut [u32; (TILE * TILE) as usize]) {
    let TileShading {
        fs,
        ms,
        setup,
        ids,
        draws,
        tile,
        win,
        bary,
        in_lanes,
    } = *t;
    let n = tile.th * TILE as usize;
    if !fs.lit() {
        for l in 0..n {
            if win[l] == NONE {
                continue;
            }
            let t = setup.get(ids[win[l] as usize]);
            let (a, view_z) = interpolate(t, bary[l][0], bary[l][1]);
            let f = Fragment {
                world: Vec3::new(a[0], a[1], a[2]),
                normal: Vec3::new(a[3], a[4], a[5]),
                extra: a[6],
                face: a[7],
                view_z,
            };
            cbuf[l] = fs.shade(&f, t.front, draws[t.draw as usize].color).to_le();
        }
        return;
    }
    let lut = srgb_lut();
    // the texture plan of the last material shaded in lanes (neighbouring groups mostly share
    // one)
    let mut plan: Option<(&Material, Option<SlotPlan>)> = None;
    // the lanes' surfaces (every lane is set before a group reads them)
    let mut f = SurfaceLanes::default();
    // pixels of groups of several materials, waiting per material
    let mut queues: [Option<Queue>; QUEUES] = Default::default();
    for ls in groups(tile) {
        // the group's pixels of material draws
        let mut todo: [Option<(&Draw, &Material, &SetupTri)>; LANES] = [None; LANES];
        let mut plain = [false; LANES];
        // a visible triangle's draw, material and record (none where its draw has no material)
        let look = |k: u32| {
            let t = setup.get(ids[k as usize]);
            let d = &draws[t.draw as usize];
            d.material.map(|m| (d, m, t))
        };
        let w: [u32; LANES] = std::array::from_fn(|i| win[ls[i]]);
        let one = w[0] != NONE && w.iter().all(|&k| k == w[0]);
        if one {
            // (all eight of one triangle, 76% of Sponza's groups: it is looked up once)
            match look(w[0]) {
                Some(x) => todo = [Some(x); LANES],
                None => plain = [true; LANES],
            }
        } else {
            for i in 0..LANES {
                if w[i] == NONE {
                    continue;
                }
                match look(w[i]) {
                    Some(x) => todo[i] = Some(x),
                    None => plain[i] = true,
                }
            }
        }
        // all eight in lanes where they share one material (96% of Sponza's groups; unless
        // `in_lanes` asks for no lanes)
        let shared = todo[0].map(|(_, m, _)| m).filter(|&m| {
            one || todo
                .iter()
                .all(|x| x.is_some_and(|(_, mi, _)| std::ptr::eq(mi, m)))
        });
        if let Some(m) = shared.filter(|_| in_lanes <= LANES) {
            let lane = |i: usize| todo[i].expect("every lane has this material");
            let lanes = MaterialLanes {
                m,
                draw: std::array::from_fn(|i| lane(i).0),
                tri: std::array::from_fn(|i| lane(i).2),
                px: std::array::from_fn(|i| tile.pixel(ls[i]).0),
                py: std::array::from_fn(|i| tile.pixel(ls[i]).1),
            };
            let c = lanes.shade::<WIDE>(ms, plan_for(&mut plan, m), &mut f, lut);
            for i in 0..LANES {
                cbuf[ls[i]] = c[i].to_le();
            }
        } else {
            // a group of several materials (or with pixels of no material, or none): each
            // pixel of a material waits in that material's queue, which is shaded in lanes when
            // eight have gathered (or at the tile's end, or to make room: `shade_queue`)
            for (i, &x) in todo.iter().enumerate() {
                let Some((d, m, t)) = x else { continue };
                let k = match queues
                    .iter()
                    .position(|q| q.as_ref().is_some_and(|q| std::ptr::eq(q.m, m)))
                {
                    Some(k) => k,
                    None => {
                        // a free queue, else the fullest one shaded to make room
                        let k = queues.iter().position(Option::is_none).unwrap_or_else(|| {
                            let n = |k: usize| queues[k].as_ref().map_or(0, |q| q.n);
                            (0..QUEUES).max_by_key(|&k| n(k)).unwrap_or(0)
                        });
                        if let Some(q) = queues[k].take() {
                            apart::<WIDE, _>(
                                #[inline(always)]
                                || {
                                    shade_queue::<WIDE>(
                                        &q, ms, &mut plan, &mut f, lut, in_lanes, tile, cbuf,
                                    )
                                },
                            );
                        }
                        k
                    }
                };
                let q = queues[k].get_or_insert(Queue {
                    m,
                    n: 0,
                    l: [0; LANES],
                    draw: [d; LANES],
                    tri: [t; LANES],
                });
                (q.l[q.n], q.draw[q.n], q.tri[q.n]) = (ls[i], d, t);
                q.n += 1;
                if q.n == LANES {
                    let q = queues[k].take().expect("the queue just filled");
                    apart::<WIDE, _>(
                        #[inline(always)]
                        || {
                            shade_queue::<WIDE>(
                                &q, ms, &mut plan, &mut f, lut, in_lanes, tile, cbuf,
                            )
                        },
                    );
                }
            }
        }
        // the other pixels four at a time (lanes without a fragment shade a harmless stand-in
        // whose colour is dropped)
        for h in (0..LANES).step_by(4) {
            if plain[h..h + 4] == [false; 4] {
                continue;
            }
            let mut world = [[0f32; 4]; 3];
            let mut normal = [[0f32, 0.0, 0.0, 0.0], [0.0; 4], [1.0; 4]];
            let mut base = [[0f32; 4]; 3];
            for i in 0..4 {
                if !plain[h + i] {
                    continue;
                }
                let l = ls[h + i];
                let t = setup.get(ids[win[l] as usize]);
                let (a, _) = interpolate(t, bary[l][0], bary[l][1]);
                let color = draws[t.draw as usize].color;
                for c in 0..3 {
                    world[c][i] = a[c];
                    normal[c][i] = if t.front { a[3 + c] } else { -a[3 + c] };
                    base[c][i] = color[c];
                }
            }
            let rgba = fs.shade_lit4(&world, &normal, &base);
            for i in 0..4 {
                if plain[h + i] {
                    cbuf[ls[h + i]] = rgba[i].to_le();
                }
            }
        }
    }
    // what the queues hold at the tile's end
    for q in queues.iter().flatten() {
        apart::<WIDE, _>(
            #[inline(always)]
            || shade_queue::<WIDE>(q, ms, &mut plan, &mut f, lut, in_lanes, tile, cbuf),
        );
    }
}

/// The width of a group of pixels that the fragment stage shades together in lanes; its height
/// is `LANES / GROUP_W`. A compact block meets fewer triangle edges than a run of eight along
/// a row, so more of its pixels share one triangle (whose surface is then worked out in lanes)
/// and one material. Of the compact shapes, 2 x 4 holds one triangle most often on the shared
/// scenes (their measurements are in the commit that chose it).
const GROUP_W: usize = 2;

/// The tile's groups of pixels (see [`GROUP_W`]), each as its lanes' places in the tile's
/// buffers, row by row within the block. Blocks cover the tile's rows and columns in use; their
/// lanes past the tile's edge lie within the buffers, where no triangle is ever recorded.
fn groups(tile: &TileView) -> impl Iterator<Item = [usize; LANES]> {
    let (tw, th) = (tile.tw, tile.th);
    (0..th).step_by(LANES / GROUP_W).flat_map(move |y| {
        (0..tw).step_by(GROUP_W).map(move |x| {
            std::array::from_fn(|i| (y + i / GROUP_W) * TILE as usize + x + i % GROUP_W)
        })
    })
}

/// The texture plan of `m` ([`SlotPlan::of`]), kept in `plan` while the materials shaded in
/// lanes repeat (neighbouring groups mostly share one), made anew when another comes.
#[inline(always)]
fn plan_for<'p, 'm>(
    plan: &'p mut Option<(&'m Material, Option<SlotPlan<'m>>)>,
    m: &'m Material,
) -> Option<&'p SlotPlan<'m>> {
    if !plan.as_ref().is_some_and(|(pm, _)| std::ptr::eq(*pm, m)) {
        *plan = Some((m, SlotPlan::of(m)));
    }
    plan.as_ref().and_then(|(_, p)| p.as_ref())
}

/// How many materials' pixels of groups of several materials wait at once in a tile (Sponza's
/// lit frame at 1280x720, fragment stage: 0.678 G instructions with 2, 0.667 G with 4, 0.668 G
/// with 8).
const QUEUES: usize = 4;

/// Pixels of one material from groups of several materials, waiting to be shaded together: the
/// first `n` lanes' places in the tile, draws and triangles. (Their colours depend on nothing
/// but their own pixel, so the order they are shaded in does not change them.)
struct Queue<'a> {
    m: &'a Material,
    n: usize,
    l: [usize; LANES],
    draw: [&'a Draw<'a>; LANES],
    tri: [&'a SetupTri; LANES],
}

/// The colours of a queue's pixels into `cbuf`: in lanes where it holds at least `in_lanes`
/// (the lanes past its `n` standing in with copies of its last pixel, their colours dropped),
/// else one by one. `plan` is the texture plan of the last material shaded in lanes. `WIDE`:
/// this is the x86-64-v3 build.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn shade_queue<'m, const WIDE: bool>(
    q: &Queue<'m>,
    ms: &MaterialShader,
    plan: &mut Option<(&'m Material, Option<SlotPlan<'m>>)>,
    f: &mut SurfaceLanes,
    lut: &[u8; 4096],
    in_lanes: usize,
    tile: &TileView,
    cbuf: &mut [u32; (TILE * TILE) as usize],
) {
    if q.n < in_lanes {
        for j in 0..q.n {
            let ((px, py), t) = (tile.pixel(q.l[j]), q.tri[j]);
            let c = pack_with(lut, ms.shade(q.draw[j], q.m, t.tri, px, py, t.front).0);
            cbuf[q.l[j]] = c.to_le();
        }
        return;
    }
    let mut lanes = MaterialLanes {
        m: q.m,
        draw: q.draw,
        tri: q.tri,
        px: [0; LANES],
        py: [0; LANES],
    };
    for j in 0..LANES {
        let s = j.min(q.n - 1);
        (lanes.draw[j], lanes.tri[j]) = (q.draw[s], q.tri[s]);
        (lanes.px[j], lanes.py[j]) = tile.pixel(q.l[s]);
    }
    let c = lanes.shade::<WIDE>(ms, plan_for(plan, q.m), f, lut);
    for j in 0..q.n {
        cbuf[q.l[j]] = c[j].to_le();
    }
}

/// A material's queue of pixels from groups of several materials, when it is shaded before eight
/// have gathered (at the tile's end, or to make room), goes in lanes (the other lanes standing
/// in with copies) where it holds at least this many, else one by one. On Sponza at 1280x720,
/// about 4,000 of 115,200 groups (2 x 4 blocks) have several materials; a pixel alone took
/// about 2,900 instructions, against about 750 a lane in lanes. The fragment stage's count
/// hardly depends on it (0.6079 G at 2 and 3, 0.6084 G at 5).
const IN_LANES: usize = 3;

/// One material's lanes of a group of pixels: each lane's draw, triangle and pixel.
struct MaterialLanes<'a> {
    m: &'a Material,
    draw: [&'a Draw<'a>; LANES],
    tri: [&'a SetupTri; LANES],
    px: [u32; LANES],
    py: [u32; LANES],
}

impl MaterialLanes<'_> {
    /// The lanes' packed colours: their surfaces (in lanes where they are one triangle's, else
    /// pixel by pixel, with each triangle's corners worked out once for all its lanes), shaded in
    /// lanes. `WIDE`: this is the x86-64-v3 build.
    #[inline(always)]
    fn shade<const WIDE: bool>(
        &self,
        ms: &MaterialShader,
        plan: Option<&SlotPlan>,
        f: &mut SurfaceLanes,
        lut: &[u8; 4096],
    ) -> [u32; LANES] {
        let tangents = self.m.normal_texture.is_some();
        let t0 = self.tri[0];
        if self.tri.iter().all(|&t| std::ptr::eq(t, t0)) {
            let c = Corners::of(self.draw[0], t0.tri, tangents);
            f.set_all(ms, &c, self.px, self.py, t0.front);
        } else {
            // each triangle's corners once, for all its lanes (within a block a triangle's
            // lanes need not be consecutive)
            let mut left = (1u32 << LANES) - 1;
            while left != 0 {
                let i = left.trailing_zeros() as usize;
                let t = self.tri[i];
                let c = Corners::of(self.draw[i], t.tri, tangents);
                for k in i..LANES {
                    if left >> k & 1 == 1 && std::ptr::eq(self.tri[k], t) {
                        f.set(k, ms, &c, self.px[k], self.py[k], t.front);
                        left &= !(1 << k);
                    }
                }
            }
        }
        pack_lanes(lut, &ms.shade_lanes::<WIDE>(self.m, plan, f))
    }
}

/// Runs `f` in a function of its own, built for x86-64-v3 where `WIDE`. The material path of
/// groups of several materials goes through it: inlined into the tile's loop beside the path of
/// groups of one material, this second copy made the compiler's code for the whole loop worse
/// (Sponza's lit frame: 1.00 G instead of 0.87 G instructions, before either shaded anything
/// more in lanes).
#[inline(always)]
fn apart<const WIDE: bool, R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only in shade_tile_v3, which runs only where wide_isa() found
        // every feature `apart_v3` enables.
        return unsafe { apart_v3(f) };
    }
    apart_base(f)
}

#[inline(never)]
fn apart_base<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// # Safety
/// The CPU must have the features enabled here ([`wide_isa`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,movbe")]
#[inline(never)]
unsafe fn apart_v3<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The second pass of a tile holding blended triangles (lit mode): each, in submission order (the
/// pipeline submits blended objects after the opaque ones, far to near), is rasterised against
/// the tile's depth without writing it, and every fragment in front is shaded and composited over
/// the colour in linear light. Returns the fragments composited.
#[allow(clippy::too_many_arguments)]
fn blend_tile(
    ms: &MaterialShader,
    setup: &Setup,
    ids: &[u32],
    draws: &[Draw],
    tile: &TileView,
    zbuf: &mut [f32; (TILE * TILE) as usize],
    win: &mut [u32; (TILE * TILE) as usize],
    bary: &mut TileBary,
    mut cov: Option<&mut [u32; (TILE * TILE) as usize]>,
    cbuf: &mut [u32; (TILE * TILE) as usize],
) -> u64 {
    let lut = srgb_lut();
    let to_linear = crate::color::srgb_to_linear_lut();
    let mut frags = 0;
    for (j, &id) in ids.iter().enumerate() {
        let t = setup.get(id);
        let d = &draws[t.draw as usize];
        let Some(m) = d.material.filter(|m| m.alpha == AlphaMode::Blend) else {
            continue;
        };
        let mut vis = Visibility {
            z: zbuf,
            win,
            bary,
            cov: cov.as_deref_mut(),
        };
        raster_tri_with(t, j as u32, tile, &mut vis, Lanes::No, false, |px, py| {
            let (c, a) = ms.shade(d, m, t.tri, px, py, t.front);
            let l = ((py - tile.ty) * TILE + (px - tile.tx)) as usize;
            let dst = u32::from_le(cbuf[l]);
            let under = Vec3::new(
                to_linear[(dst & 0xff) as usize],
                to_linear[(dst >> 8 & 0xff) as usize],
                to_linear[(dst >> 16 & 0xff) as usize],
            );
            let a = a.clamp(0.0, 1.0);
            cbuf[l] = pack_with(lut, c * a + under * (1.0 - a)).to_le();
            frags += 1;
            // the depth stays the opaque surface's
            false
        });
    }
    frags
}

/// Scans one triangle (number `j` of the tile's list) over its bounding box within the tile,
/// recording it and its barycentrics at each pixel where it passes the depth test. Returns the
/// fragments that passed.
#[inline]
fn raster_tri(t: &SetupTri, j: u32, tile: &TileView, vis: &mut Visibility, lanes: Lanes) -> u64 {
    raster_tri_with(t, j, tile, vis, lanes, false, |_, _| true)
}

/// Which vector paths a scan may take; each leaves exactly what the scalar scan leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lanes {
    /// pixel by pixel
    No,
    /// small triangles four pixels at a time (SSE2: every x86-64 CPU has it)
    Four,
    /// also, the others eight pixels at a time (AVX2: only where [`wide_isa`] holds)
    Eight,
}

/// [`raster_tri`], with the vector paths `lanes` allows (the tests compare them with the scalar
/// scan), and `keep(px, py)` asked of every fragment that passes the depth test before it is
/// recorded (an alpha test; unless `lanes` is [`Lanes::No`] it must keep every fragment). With
/// `ties`, a fragment at the depth of the pixel's winner also passes when its triangle comes
/// before the winner's (`j` lower: it is rasterised after triangles submitted after it).
#[inline]
#[allow(clippy::too_many_arguments)]
fn raster_tri_with(
    t: &SetupTri,
    j: u32,
    tile: &TileView,
    vis: &mut Visibility,
    lanes: Lanes,
    ties: bool,
    mut keep: impl FnMut(u32, u32) -> bool,
) -> u64 {
    let TileView { tx, ty, tw, th } = *tile;
    let x0 = (t.bbox[0] as u32).max(tx);
    let y0 = (t.bbox[1] as u32).max(ty);
    let x1 = (t.bbox[2] as u32).min(tx + tw as u32 - 1);
    let y1 = (t.bbox[3] as u32).min(ty + th as u32 - 1);
    if x0 > x1 || y0 > y1 {
        return 0;
    }
    let (x, y) = (t.x.map(|v| v as i64), t.y.map(|v| v as i64));
    let one = 1i64 << SUBPIXEL_BITS;
    // edge k is opposite corner k: from corner k+1 to corner k+2
    let mut e_row = [0i64; 3];
    let mut dx = [0i64; 3];
    let mut dy = [0i64; 3];
    let (px, py) = (pixel_centre(x0 as i64), pixel_centre(y0 as i64));
    for k in 0..3 {
        let (a, b) = ((k + 1) % 3, (k + 2) % 3);
        let bias = if edge_is_top_left(t.x[a], t.y[a], t.x[b], t.y[b]) {
            0
        } else {
            -1
        };
        e_row[k] = (x[b] - x[a]) * (py - y[a]) - (y[b] - y[a]) * (px - x[a]) + bias;
        dx[k] = -(y[b] - y[a]) * one;
        dy[k] = (x[b] - x[a]) * one;
    }
    let inv_area = 1.0 / t.area as f32;
    #[cfg(not(target_arch = "x86_64"))]
    let _ = lanes;
    #[cfg(target_arch = "x86_64")]
    if lanes != Lanes::No {
        let lt = LaneTri {
            j,
            x0: x0 - tx,
            y0: y0 - ty,
            x1: x1 - tx,
            y1: y1 - ty,
            e_row,
            dx,
            dy,
            inv_area,
            z: t.z,
        };
        // a small triangle's edge functions over its bounding box fit in 32 bits: four pixels at
        // a time
        let span = |v: [i32; 3]| v.iter().max().unwrap() - v.iter().min().unwrap();
        if x1 - x0 < 4 && span(t.x) <= SMALL_SPAN && span(t.y) <= SMALL_SPAN {
            // SAFETY: SSE2 is part of the x86-64 baseline; the bounds lie within the tile.
            return unsafe { raster_small(&lt, vis) };
        }
        if lanes == Lanes::Eight {
            // SAFETY: `Lanes::Eight` is chosen only where wide_isa() found AVX2; the bounds lie
            // within the tile.
            return unsafe { raster_eight(&lt, vis) };
        }
    }
    let mut frags = 0;
    for j_row in y0..=y1 {
        let mut e = e_row;
        let row = ((j_row - ty) * TILE) as usize;
        for i in x0..=x1 {
            if (e[0] | e[1] | e[2]) >= 0 {
                // barycentrics (bias removed is below float precision for any visible triangle)
                let l1 = e[1] as f32 * inv_area;
                let l2 = e[2] as f32 * inv_area;
                let z = t.z[0] + (t.z[1] - t.z[0]) * l1 + (t.z[2] - t.z[0]) * l2;
                let l = row + (i - tx) as usize;
                if let Some(c) = vis.cov.as_deref_mut() {
                    c[l] += 1;
                }
                let front =
                    z < vis.z[l] || (ties && z == vis.z[l] && vis.win[l] != NONE && j < vis.win[l]);
                if front && keep(i, j_row) {
                    vis.z[l] = z;
                    vis.win[l] = j;
                    vis.bary[l] = [l1, l2];
                    frags += 1;
                }
            }
            for k in 0..3 {
                e[k] += dx[k];
            }
        }
        for k in 0..3 {
            e_row[k] += dy[k];
        }
    }
    frags
}

/// Triangles whose corners lie within this many subpixels of each other in x and in y (64
/// pixels) take the 32-bit path: every edge function over the bounding box (and the few pixels
/// left of it that a group of four starts at) is a difference of two products of factors below
/// 2^15, so it fits in an i32.
#[cfg(target_arch = "x86_64")]
const SMALL_SPAN: i32 = 64 << SUBPIXEL_BITS;

/// A triangle clipped to one tile, for the vector scans: its box in tile-local pixels, its edge
/// functions at the first pixel centre of the box and their steps, and what its depth and
/// barycentrics are worked out from.
#[cfg(target_arch = "x86_64")]
struct LaneTri {
    j: u32,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    e_row: [i64; 3],
    dx: [i64; 3],
    dy: [i64; 3],
    inv_area: f32,
    z: [f32; 3],
}

/// [`raster_tri`] for a small triangle whose box within the tile is at most four pixels wide:
/// each row of the box is one group of four lanes (starting at the box's left column, or at
/// column 28 near the tile's right edge), evaluated without branches (SSE2), with the same
/// per-pixel operations in the same order as the scalar path, so depths, winners and barycentrics
/// are identical; lanes outside the box are masked.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn raster_small(s: &LaneTri, vis: &mut Visibility) -> u64 {
    use std::arch::x86_64::*;
    let g = s.x0.min(TILE - 4);
    let lanes = _mm_setr_epi32(0, 1, 2, 3);
    // edge values at the four lanes of the first row (in 32 bits: see SMALL_SPAN)
    let mut e: [__m128i; 3] = std::array::from_fn(|k| {
        let d = s.dx[k] as i32;
        let e = s.e_row[k] as i32 - (s.x0 - g) as i32 * d;
        _mm_add_epi32(_mm_set1_epi32(e), _mm_setr_epi32(0, d, 2 * d, 3 * d))
    });
    let dy = s.dy.map(|d| _mm_set1_epi32(d as i32));
    let x = _mm_add_epi32(_mm_set1_epi32(g as i32), lanes);
    let in_box = _mm_and_si128(
        _mm_cmpgt_epi32(x, _mm_set1_epi32(s.x0 as i32 - 1)),
        _mm_cmplt_epi32(x, _mm_set1_epi32(s.x1 as i32 + 1)),
    );
    let inv_area = _mm_set1_ps(s.inv_area);
    let z0 = _mm_set1_ps(s.z[0]);
    let dz1 = _mm_set1_ps(s.z[1] - s.z[0]);
    let dz2 = _mm_set1_ps(s.z[2] - s.z[0]);
    let jv = _mm_set1_epi32(s.j as i32);
    let mut frags = 0u32;
    for y in s.y0..=s.y1 {
        let l = (y * TILE + g) as usize;
        let any = _mm_or_si128(_mm_or_si128(e[0], e[1]), e[2]);
        let m = _mm_and_si128(in_box, _mm_cmpgt_epi32(any, _mm_set1_epi32(-1)));
        let l1 = _mm_mul_ps(_mm_cvtepi32_ps(e[1]), inv_area);
        let l2 = _mm_mul_ps(_mm_cvtepi32_ps(e[2]), inv_area);
        let z = _mm_add_ps(_mm_add_ps(z0, _mm_mul_ps(dz1, l1)), _mm_mul_ps(dz2, l2));
        if let Some(c) = vis.cov.as_deref_mut() {
            let p = c.as_mut_ptr().add(l).cast::<__m128i>();
            _mm_storeu_si128(p, _mm_sub_epi32(_mm_loadu_si128(p), m));
        }
        let zp = vis.z.as_mut_ptr().add(l);
        let zold = _mm_loadu_ps(zp);
        let pf = _mm_and_ps(_mm_castsi128_ps(m), _mm_cmplt_ps(z, zold));
        let pass = _mm_castps_si128(pf);
        frags += (_mm_movemask_ps(pf) as u32).count_ones();
        _mm_storeu_ps(zp, _mm_or_ps(_mm_and_ps(pf, z), _mm_andnot_ps(pf, zold)));
        let wp = vis.win.as_mut_ptr().add(l).cast::<__m128i>();
        let wold = _mm_loadu_si128(wp);
        _mm_storeu_si128(
            wp,
            _mm_or_si128(_mm_and_si128(pass, jv), _mm_andnot_si128(pass, wold)),
        );
        // barycentrics are (l1, l2) pairs: lanes 0-1, then 2-3
        let bp = vis.bary.as_mut_ptr().add(l).cast::<f32>();
        let halves = [
            (_mm_unpacklo_ps(l1, l2), _mm_unpacklo_ps(pf, pf)),
            (_mm_unpackhi_ps(l1, l2), _mm_unpackhi_ps(pf, pf)),
        ];
        for (h, (b, pm)) in halves.into_iter().enumerate() {
            let q = bp.add(4 * h);
            let old = _mm_loadu_ps(q);
            _mm_storeu_ps(q, _mm_or_ps(_mm_and_ps(pm, b), _mm_andnot_ps(pm, old)));
        }
        for k in 0..3 {
            e[k] = _mm_add_epi32(e[k], dy[k]);
        }
    }
    frags as u64
}

/// [`raster_tri`] in eight lanes (AVX2) for a triangle whose box within the tile is wider than
/// four pixels or which is not small: each row of the box in groups of eight pixels at columns
/// that are multiples of eight, lanes outside the box masked. The edge functions are kept as
/// f64, which holds them exactly (within the guard band they are integers below 2^50, and so are
/// their sums), so each lane's coverage and its barycentrics' conversions to f32 are those of
/// the scalar scan's 64-bit integers, and the depth is the same operations in the same order:
/// the depths, winners, barycentrics and coverage counts are identical. A group that covers no
/// pixel, or whose pixels all fail the depth test, writes nothing.
///
/// # Safety
/// The CPU must have AVX2; the box must lie within the tile.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn raster_eight(s: &LaneTri, vis: &mut Visibility) -> u64 {
    use std::arch::x86_64::*;
    let g0 = s.x0 & !7;
    // each edge's values at the eight lanes of the first group of the first row, as two
    // registers of four f64 (lanes 0-3, 4-7)
    let mut row: [[__m256d; 2]; 3] = std::array::from_fn(|k| {
        let (e, d) = (s.e_row[k] - (s.x0 - g0) as i64 * s.dx[k], s.dx[k]);
        let at = |i: i64| (e + i * d) as f64;
        [
            _mm256_setr_pd(at(0), at(1), at(2), at(3)),
            _mm256_setr_pd(at(4), at(5), at(6), at(7)),
        ]
    });
    let step_x = s.dx.map(|d| _mm256_set1_pd((8 * d) as f64));
    let step_y = s.dy.map(|d| _mm256_set1_pd(d as f64));
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let (lo, hi) = (
        _mm256_set1_epi32(s.x0 as i32 - 1),
        _mm256_set1_epi32(s.x1 as i32 + 1),
    );
    let inv_area = _mm256_set1_ps(s.inv_area);
    let z0 = _mm256_set1_ps(s.z[0]);
    let dz1 = _mm256_set1_ps(s.z[1] - s.z[0]);
    let dz2 = _mm256_set1_ps(s.z[2] - s.z[0]);
    let jv = _mm256_set1_epi32(s.j as i32);
    // eight f64 lanes (two registers) as eight f32 in lane order (the conversion rounds to
    // nearest, as `i64 as f32` does)
    let to_f32 = |v: [__m256d; 2]| {
        _mm256_insertf128_ps::<1>(
            _mm256_castps128_ps256(_mm256_cvtpd_ps(v[0])),
            _mm256_cvtpd_ps(v[1]),
        )
    };
    let mut frags = 0u32;
    for y in s.y0..=s.y1 {
        let mut e = row;
        let mut g = g0;
        while g <= s.x1 {
            let x = _mm256_add_epi32(_mm256_set1_epi32(g as i32), lanes);
            let in_box = _mm256_and_si256(_mm256_cmpgt_epi32(x, lo), _mm256_cmpgt_epi32(hi, x));
            // a lane is covered where none of its three edge values is negative: the sign bits of
            // their OR, which sit in the high 32 bits of each f64 (no value is -0: the sums of
            // integers never give it)
            let or = |h: usize| _mm256_or_pd(_mm256_or_pd(e[0][h], e[1][h]), e[2][h]);
            let high = _mm256_shuffle_ps::<0b11_01_11_01>(
                _mm256_castpd_ps(or(0)),
                _mm256_castpd_ps(or(1)),
            );
            // (the shuffle works within 128-bit halves: lanes 0 1 4 5 2 3 6 7, put in order)
            let high = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(high));
            let m = _mm256_andnot_si256(_mm256_srai_epi32::<31>(high), in_box);
            if _mm256_testz_si256(m, m) == 0 {
                let l = (y * TILE + g) as usize;
                let l1 = _mm256_mul_ps(to_f32(e[1]), inv_area);
                let l2 = _mm256_mul_ps(to_f32(e[2]), inv_area);
                let z = _mm256_add_ps(
                    _mm256_add_ps(z0, _mm256_mul_ps(dz1, l1)),
                    _mm256_mul_ps(dz2, l2),
                );
                if let Some(c) = vis.cov.as_deref_mut() {
                    let p = c.as_mut_ptr().add(l).cast::<__m256i>();
                    _mm256_storeu_si256(p, _mm256_sub_epi32(_mm256_loadu_si256(p), m));
                }
                let zp = vis.z.as_mut_ptr().add(l);
                let zold = _mm256_loadu_ps(zp);
                let pf =
                    _mm256_and_ps(_mm256_castsi256_ps(m), _mm256_cmp_ps::<_CMP_LT_OQ>(z, zold));
                let passed = _mm256_movemask_ps(pf) as u32;
                if passed != 0 {
                    frags += passed.count_ones();
                    _mm256_storeu_ps(zp, _mm256_blendv_ps(zold, z, pf));
                    let wp = vis.win.as_mut_ptr().add(l).cast::<__m256>();
                    let wold = _mm256_loadu_ps(wp.cast());
                    _mm256_storeu_ps(
                        wp.cast(),
                        _mm256_blendv_ps(wold, _mm256_castsi256_ps(jv), pf),
                    );
                    // barycentrics are (l1, l2) pairs: interleaved within 128-bit halves, then
                    // put in order (lanes 0-3, then 4-7)
                    let (a, b) = (_mm256_unpacklo_ps(l1, l2), _mm256_unpackhi_ps(l1, l2));
                    let (ma, mb) = (_mm256_unpacklo_ps(pf, pf), _mm256_unpackhi_ps(pf, pf));
                    let bp = vis.bary.as_mut_ptr().add(l).cast::<f32>();
                    let halves = [
                        (
                            _mm256_permute2f128_ps::<0x20>(a, b),
                            _mm256_permute2f128_ps::<0x20>(ma, mb),
                        ),
                        (
                            _mm256_permute2f128_ps::<0x31>(a, b),
                            _mm256_permute2f128_ps::<0x31>(ma, mb),
                        ),
                    ];
                    for (h, (v, pm)) in halves.into_iter().enumerate() {
                        let q = bp.add(8 * h);
                        _mm256_storeu_ps(q, _mm256_blendv_ps(_mm256_loadu_ps(q), v, pm));
                    }
                }
            }
            for (e, step) in e.iter_mut().zip(&step_x) {
                *e = e.map(|v| _mm256_add_pd(v, *step));
            }
            g += 8;
        }
        for (r, step) in row.iter_mut().zip(&step_y) {
            *r = r.map(|v| _mm256_add_pd(v, *step));
        }
    }
    frags as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector scans (four lanes for small triangles; eight for the others, where the CPU has
    /// AVX2) leave exactly the depths, winners, barycentrics, coverage counts and fragment counts
    /// of the scalar scan: a soup of small, large and huge random triangles (set up by the real setup, so snapped, culled and bounded as in a frame) drawn
    /// into every tile of a small frame, including the partial tiles at its right and bottom.
    #[test]
    fn vector_scans_equal_the_scalar_scan() {
        use crate::geometry::{ShadedGeometry, VertexOut};
        let (w, h) = (70u32, 45u32);
        let mut r = super::super::test_rng(0x2545_f491);
        let mut g = ShadedGeometry::default();
        for i in 0..3000 {
            // small ones mostly, every tenth spans up to half the frame, every hundredth reaches
            // far beyond it (into the guard band, where the edge functions are largest)
            let size = match i {
                _ if i % 100 == 0 => 400.0,
                _ if i % 10 == 0 => 0.5,
                _ => 0.06,
            };
            let (cx, cy) = (r() * 2.2 - 1.1, r() * 2.2 - 1.1);
            for _ in 0..3 {
                let clip = glam::Vec4::new(
                    cx + (r() - 0.5) * size,
                    cy + (r() - 0.5) * size,
                    r() * 0.9,
                    1.0,
                );
                g.vertices.push(VertexOut {
                    clip,
                    ..Default::default()
                });
            }
            g.triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
            if i % 7 == 6 {
                // the one before again: its depths tie with the first's, which must keep them
                g.triangles.push([3 * i - 3, 3 * i - 2, 3 * i - 1]);
            }
        }
        let draws = [Draw::new(&g, [1.0; 4])];
        let mut s = RasterSettings::new(w, h);
        s.cull = super::super::CullMode::None;
        let mut stats = RasterStats::default();
        let mut setup = Setup::default();
        super::super::setup::setup_all(&draws, &s, &mut stats, &mut setup);
        let ids: Vec<u32> = (0..setup.parts.len() as u32)
            .flat_map(|p| {
                (0..setup.parts[p as usize].len() as u32).map(move |i| p << PART_SHIFT | i)
            })
            .collect();
        assert!(ids.len() > 1000, "{} triangles set up", ids.len());
        let mut small = 0;
        for ty in (0..h).step_by(TILE as usize) {
            for tx in (0..w).step_by(TILE as usize) {
                let tile = TileView {
                    tx,
                    ty,
                    tw: TILE.min(w - tx) as usize,
                    th: TILE.min(h - ty) as usize,
                };
                let run = |lanes: Lanes| {
                    let n = (TILE * TILE) as usize;
                    let (mut z, mut win) = (vec![1f32; n], vec![NONE; n]);
                    let (mut bary, mut cov) = (vec![[0f32; 2]; n], vec![0u32; n]);
                    let mut frags = 0;
                    for (j, &id) in ids.iter().enumerate() {
                        let mut vis = Visibility {
                            z: (&mut z[..]).try_into().unwrap(),
                            win: (&mut win[..]).try_into().unwrap(),
                            bary: (&mut bary[..]).try_into().unwrap(),
                            cov: Some((&mut cov[..]).try_into().unwrap()),
                        };
                        frags += raster_tri_with(
                            setup.get(id),
                            j as u32,
                            &tile,
                            &mut vis,
                            lanes,
                            false,
                            |_, _| true,
                        );
                    }
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    let b: Vec<f32> = bary.iter().flatten().copied().collect();
                    (bits(&z), win, bits(&b), cov, frags)
                };
                let scalar = run(Lanes::No);
                assert!(scalar.4 > 0, "tile ({tx}, {ty}) drew nothing");
                assert_eq!(run(Lanes::Four), scalar, "four lanes, tile ({tx}, {ty})");
                if wide_isa() {
                    assert_eq!(run(Lanes::Eight), scalar, "eight lanes, tile ({tx}, {ty})");
                }
            }
        }
        for &id in &ids {
            let t = setup.get(id);
            small += (t.bbox[2] - t.bbox[0] < 4) as u32;
        }
        assert!(
            small as usize * 2 > ids.len(),
            "{small} small of {}",
            ids.len()
        );
    }

    /// The pixels of groups of several materials, queued per material, shade in lanes (with
    /// stand-in lanes) or pixel by pixel, as `in_lanes` says: every choice, in both builds,
    /// gives the colours of the pixels shaded one by one. Five materials (textured with a
    /// normal map, two textured, plain, unlit) on interleaved random triangles, so that most
    /// groups mix them, and a tile's queues (fewer than five) make room for one another; one
    /// material in two draws, with vertex colours and without. The frame's last tiles are 7
    /// pixels wide and 11 high, so that the blocks of lanes reach past a tile's edge.
    #[test]
    fn mixed_groups_shade_as_each_pixel_alone() {
        use crate::geometry::{ShadedGeometry, VertexOut};
        use crate::material::texture::{Sampler, Texture};
        use crate::material::TextureRef;
        use glam::{Vec2, Vec4};
        use std::sync::Arc;
        let (w, h) = (71u32, 43u32);
        let mut r = super::super::test_rng(0x51ed_270b);
        let texture = |size: u32, srgb: bool, seed: u32| {
            let px: Vec<u8> = (0..4 * size * size)
                .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
                .collect();
            let t = Texture::new("t", size, size, &px, srgb, Sampler::default()).unwrap();
            TextureRef::new(Arc::new(t))
        };
        let mapped = Material {
            base_color_texture: Some(texture(32, true, 1)),
            normal_texture: Some(texture(16, false, 2)),
            roughness: 0.4,
            ..Material::default()
        };
        let textured = Material {
            base_color_texture: Some(texture(8, true, 3)),
            metallic: 0.7,
            ..Material::default()
        };
        let plain = Material::plain("plain", Vec4::new(0.3, 0.6, 0.9, 1.0));
        let unlit = Material {
            unlit: true,
            ..textured.clone()
        };
        let rough = Material {
            base_color_texture: Some(texture(16, true, 4)),
            roughness: 0.9,
            ..Material::default()
        };
        // (the last material twice: its second draw has vertex colours, the first none)
        let materials = [&mapped, &textured, &plain, &unlit, &rough, &rough];
        // one geometry per draw, their triangles interleaved in screen space
        let mut geometries: Vec<ShadedGeometry> =
            (0..6).map(|_| ShadedGeometry::default()).collect();
        for i in 0..1200 {
            let g = &mut geometries[i % 6];
            let (cx, cy, size) = (r() * 2.2 - 1.1, r() * 2.2 - 1.1, 0.15 + r() * 0.3);
            let n = g.vertices.len() as u32;
            for _ in 0..3 {
                g.vertices.push(VertexOut {
                    clip: Vec4::new(cx + (r() - 0.5) * size, cy + (r() - 0.5) * size, r(), 1.0),
                    world: Vec3::new(r(), r(), r()) * 2.0 - 1.0,
                    normal: Vec3::new(r() - 0.5, r() - 0.5, 1.0),
                    uv: Vec2::new(r(), r()) * 2.0,
                    extra: 0.0,
                });
                g.sources.push(g.sources.len() as u32);
            }
            g.triangles.push([n, n + 1, n + 2]);
        }
        let colors: Vec<Vec4> = (0..geometries[5].vertices.len())
            .map(|_| Vec4::new(r(), r(), r(), 1.0))
            .collect();
        let draws: Vec<Draw> = geometries
            .iter()
            .zip(materials)
            .enumerate()
            .map(|(k, (g, m))| Draw {
                material: Some(m),
                colors: (k == 5).then_some(colors.as_slice()),
                ..Draw::new(g, [1.0; 4])
            })
            .collect();
        let mut s = RasterSettings::new(w, h);
        s.cull = super::super::CullMode::None;
        s.eye = Vec3::new(0.0, 0.0, -3.0);
        let (fs, ms) = (FragmentShader::new(&s), MaterialShader::new(&s));
        let mut stats = RasterStats::default();
        let mut setup = Setup::default();
        super::super::setup::setup_all(&draws, &s, &mut stats, &mut setup);
        let mut bins = Bins::default();
        bin(&setup, &s, &mut bins);
        let (mut mixed, mut shaded) = (0, 0);
        for k in 0..(bins.tiles_x * bins.tiles_y) as usize {
            let ids = &bins.ids[bins.offsets[k] as usize..bins.offsets[k + 1] as usize];
            let (tx, ty) = (
                k as u32 % bins.tiles_x * TILE,
                k as u32 / bins.tiles_x * TILE,
            );
            let tile = TileView {
                tx,
                ty,
                tw: TILE.min(w - tx) as usize,
                th: TILE.min(h - ty) as usize,
            };
            let n = (TILE * TILE) as usize;
            let (mut z, mut win) = (
                [1f32; (TILE * TILE) as usize],
                [NONE; (TILE * TILE) as usize],
            );
            let mut bary = Box::new([[0f32; 2]; (TILE * TILE) as usize]);
            for (j, &id) in ids.iter().enumerate() {
                let mut vis = Visibility {
                    z: &mut z,
                    win: &mut win,
                    bary: &mut bary,
                    cov: None,
                };
                raster_tri(setup.get(id), j as u32, &tile, &mut vis, Lanes::No);
            }
            let material =
                |l: usize| (win[l] != NONE).then(|| setup.get(ids[win[l] as usize]).draw);
            for ls in groups(&tile) {
                let first = material(ls[0]);
                mixed += (1..LANES).any(|i| material(ls[i]) != first) as u32;
            }
            let shade = |wide: bool, in_lanes: usize| {
                let mut cbuf = [0u32; (TILE * TILE) as usize];
                let t = TileShading {
                    fs: &fs,
                    ms: &ms,
                    setup: &setup,
                    ids,
                    draws: &draws,
                    tile: &tile,
                    win: &win,
                    bary: &bary,
                    in_lanes,
                };
                shade_tile(wide, &t, &mut cbuf);
                cbuf
            };
            // more than eight: every pixel alone
            let want = shade(false, LANES + 1);
            // every covered pixel is shaded (packed colours are opaque, never 0), and none else
            for l in 0..n {
                assert_eq!(want[l] != 0, win[l] != NONE, "tile {k}, pixel {l}");
            }
            for wide in [false, wide_isa()] {
                for in_lanes in [1, IN_LANES, LANES, LANES + 1] {
                    let got = shade(wide, in_lanes);
                    assert_eq!(
                        got[..n],
                        want[..n],
                        "tile {k}, wide {wide}, in_lanes {in_lanes}"
                    );
                }
            }
            shaded += (0..n).filter(|&l| win[l] != NONE).count();
        }
        assert!(
            mixed > 200 && shaded > 1500,
            "{mixed} mixed groups, {shaded} pixels"
        );
    }

    /// Every byte arrives, whatever the destination's alignment and the length.
    #[test]
    fn stream_copy_copies_every_byte() {
        let src: Vec<u8> = (0..700u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = vec![0u8; 800];
        for start in 0..70 {
            for len in [0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 300, 700 - start] {
                buf.fill(0);
                stream_copy(&mut buf[start..start + len], &src[start..start + len]);
                assert_eq!(&buf[start..start + len], &src[start..start + len]);
                assert!(buf[..start].iter().all(|&b| b == 0));
                assert!(buf[start + len..].iter().all(|&b| b == 0));
            }
        }
    }
}
