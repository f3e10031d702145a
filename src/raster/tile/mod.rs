//! Binning of setup triangles to screen tiles, and the tile loop: each tile's triangles
//! rasterised ([`coverage`]) and its visible pixels shaded ([`fragments`]) in the tile's own
//! buffers, a band of tiles at a time streamed to the frame.

mod coverage;
mod fragments;

pub(super) use fragments::wide_isa;

use super::material::MaterialShader;
use super::setup::{Setup, SetupTri, PART_SHIFT};
use super::shade::FragmentShader;
use super::{Draw, RasterOutput, RasterSettings, RasterStats};
use coverage::{
    behind, raster_tri, raster_tri_with, tile_max_depth, Lanes, TileView, Visibility, NONE,
    ZMAX_FRAGS, ZMAX_TRIANGLES,
};
use fragments::{blend_tile, shade_tile, TileShading, IN_LANES};
use glam::Vec3;
use rayon::prelude::*;
use rxpipe_core::color::pack_srgb;
use rxpipe_core::material::AlphaMode;

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
    // reuse the target's buffers: every pixel is written below, so no clear is needed (drawn
    // over the target, each tile starts from what the target holds there)
    let under = s.over_target;
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
    let pass = TilePass {
        setup,
        draws,
        fs: &fs,
        ms: &ms,
        lanes,
        // (not with coverage counts, which count hidden fragments too)
        cull_hidden: !s.count_coverage,
    };
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
                        // nothing binned here: background and far depth, or the target's
                        for j in 0..th {
                            let p = j * w + tx as usize;
                            if under {
                                load_words(&mut scolor[p..p + tw], &fcolor[4 * p..]);
                                sdepth[p..p + tw].copy_from_slice(&fdepth[p..p + tw]);
                            } else {
                                scolor[p..p + tw].fill(bg);
                                sdepth[p..p + tw].fill(1.0);
                            }
                        }
                        continue;
                    }
                    let mut zbuf = [1f32; (TILE * TILE) as usize];
                    // the visibility buffer: per pixel the winning triangle (its place in `ids`)
                    // and its barycentrics there; colours are computed once per pixel after the
                    // last triangle
                    let mut win = [NONE; (TILE * TILE) as usize];
                    let mut cbuf = [bg; (TILE * TILE) as usize];
                    if under {
                        for j in 0..th {
                            let (p, l) = (j * w + tx as usize, j * TILE as usize);
                            load_words(&mut cbuf[l..l + tw], &fcolor[4 * p..]);
                            zbuf[l..l + tw].copy_from_slice(&fdepth[p..p + tw]);
                        }
                    }
                    let mut cov = s
                        .count_coverage
                        .then(|| Box::new([0u32; (TILE * TILE) as usize]));
                    let tile = TileView { tx, ty, tw, th };
                    let mut vis = Visibility {
                        z: &mut zbuf,
                        win: &mut win,
                        bary,
                        cov: cov.as_deref_mut(),
                    };
                    let (n, blended) = pass.visible(ids, &tile, &mut vis);
                    frags += n;
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

/// Packed colours (little-endian words, as the tiles keep them) from the frame's bytes: as many
/// as `words` holds.
fn load_words(words: &mut [u32], bytes: &[u8]) {
    for (w, b) in words.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    }
}

/// What every tile's visibility pass reads: the frame's triangles and draws, the shaders (for
/// the lit mode and alpha masks) and how the triangles are scanned.
struct TilePass<'a> {
    setup: &'a Setup,
    draws: &'a [Draw<'a>],
    fs: &'a FragmentShader<'a>,
    ms: &'a MaterialShader<'a>,
    lanes: Lanes,
    /// whether triangles behind every pixel of the tile are skipped
    cull_hidden: bool,
}

impl TilePass<'_> {
    /// Rasterises the tile's triangles `ids` into its visibility buffer `vis`. Returns the
    /// fragments that passed the depth test and whether blended triangles wait for their own
    /// pass (in the lit mode they come after the opaque ones).
    fn visible(&self, ids: &[u32], tile: &TileView, vis: &mut Visibility) -> (u64, bool) {
        let (tw, th) = (tile.tw, tile.th);
        let (mut blended, mut masked) = (false, false);
        // an upper bound of the tile's depths (far until the tile's fragments could
        // cover it, then the buffer's maximum, taken again after every ZMAX_FRAGS
        // fragments or ZMAX_TRIANGLES triangles): a triangle that lies behind it
        // everywhere cannot win a pixel and is not scanned (with cull_hidden)
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
                let t = self.setup.get(id);
                let d = &self.draws[t.draw as usize];
                let mask = d.material.filter(|m| matches!(m.alpha, AlphaMode::Mask(_)));
                masked |= mask.is_some();
                if mask.is_some() != (pass == 1) {
                    continue;
                }
                // the records of a tile lie far apart: fetch the next ones' cache
                // lines while this one is scanned
                if let Some(&next) = ids.get(j + PREFETCH) {
                    prefetch(self.setup.get(next));
                }
                // blended fragments come after the opaque ones (in the lit mode)
                if mask.is_none()
                    && self.fs.lit()
                    && d.material.is_some_and(|m| m.alpha == AlphaMode::Blend)
                {
                    blended = true;
                    continue;
                }
                if self.cull_hidden {
                    tris_since += 1;
                    if tile_frags >= (tw * th) as u64
                        && (tile_frags >= frags_at + ZMAX_FRAGS || tris_since >= ZMAX_TRIANGLES)
                    {
                        zmax = tile_max_depth(vis.z, tw, th);
                        (frags_at, tris_since) = (tile_frags, 0);
                    }
                    if behind(t, zmax, mask.is_some()) {
                        continue;
                    }
                }
                let n = match mask {
                    Some(m) => {
                        raster_tri_with(t, j as u32, tile, vis, Lanes::No, true, |px, py| {
                            self.ms.passes_mask(d, m, t.tri, px, py)
                        })
                    }
                    None => raster_tri(t, j as u32, tile, vis, self.lanes),
                };
                tile_frags += n;
            }
        }
        (tile_frags, blended)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
