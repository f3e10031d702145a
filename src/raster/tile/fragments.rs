//! The fragment stage of a tile: the visible pixels grouped and shaded (material lanes, or pixel
//! by pixel), blended and packed; built twice from one body, for the x86-64 baseline and for
//! x86-64-v3 (AVX2, FMA) where the CPU has it, the two giving the same bytes.

use super::coverage::{raster_tri_with, Lanes, TileView, Visibility, NONE};
use super::{TileBary, TILE};
use crate::raster::material::{Corners, MaterialShader, SlotPlan, SurfaceLanes};
use crate::raster::setup::{Setup, SetupTri};
use crate::raster::shade::{pack_lanes, Fragment, FragmentShader};
use crate::raster::Draw;
use glam::Vec3;
use rxpipe_core::color::{pack_with, srgb_lut};
use rxpipe_core::material::lanes::LANES;
use rxpipe_core::material::{AlphaMode, Material};

/// Interpolates triangle `t`'s varyings at barycentrics (l1, l2) of corners 1 and 2,
/// perspective-correct: blends the 1/w-weighted varyings, then multiplies by w. Returns them and
/// the view depth.
#[inline]
pub(super) fn interpolate(t: &SetupTri, l1: f32, l2: f32) -> ([f32; 8], f32) {
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
pub(super) struct TileShading<'a> {
    pub(super) fs: &'a FragmentShader<'a>,
    pub(super) ms: &'a MaterialShader<'a>,
    pub(super) setup: &'a Setup,
    pub(super) ids: &'a [u32],
    pub(super) draws: &'a [Draw<'a>],
    pub(super) tile: &'a TileView,
    pub(super) win: &'a [u32; (TILE * TILE) as usize],
    pub(super) bary: &'a TileBary,
    pub(super) in_lanes: usize,
}

/// Colours every covered pixel of the tile from its visible triangle (see [`shade_tile_body`]),
/// with the x86-64-v3 build of the fragment stage where `wide` (the CPU has it: [`wide_isa`]).
pub(super) fn shade_tile(wide: bool, t: &TileShading, cbuf: &mut [u32; (TILE * TILE) as usize]) {
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
pub(crate) fn wide_isa() -> bool {
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
pub(super) unsafe fn shade_tile_v3(t: &TileShading, cbuf: &mut [u32; (TILE * TILE) as usize]) {
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
pub(super) fn shade_tile_body<const WIDE: bool>(
    t: &TileShading,
    cbuf: &mut [u32; (TILE * TILE) as usize],
) {
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
pub(super) const GROUP_W: usize = 2;

/// The tile's groups of pixels (see [`GROUP_W`]), each as its lanes' places in the tile's
/// buffers, row by row within the block. Blocks cover the tile's rows and columns in use; their
/// lanes past the tile's edge lie within the buffers, where no triangle is ever recorded.
pub(super) fn groups(tile: &TileView) -> impl Iterator<Item = [usize; LANES]> {
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
pub(super) fn plan_for<'p, 'm>(
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
pub(super) const QUEUES: usize = 4;

/// Pixels of one material from groups of several materials, waiting to be shaded together: the
/// first `n` lanes' places in the tile, draws and triangles. (Their colours depend on nothing
/// but their own pixel, so the order they are shaded in does not change them.)
pub(super) struct Queue<'a> {
    pub(super) m: &'a Material,
    pub(super) n: usize,
    pub(super) l: [usize; LANES],
    pub(super) draw: [&'a Draw<'a>; LANES],
    pub(super) tri: [&'a SetupTri; LANES],
}

/// The colours of a queue's pixels into `cbuf`: in lanes where it holds at least `in_lanes`
/// (the lanes past its `n` standing in with copies of its last pixel, their colours dropped),
/// else one by one. `plan` is the texture plan of the last material shaded in lanes. `WIDE`:
/// this is the x86-64-v3 build.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn shade_queue<'m, const WIDE: bool>(
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
pub(super) const IN_LANES: usize = 3;

/// One material's lanes of a group of pixels: each lane's draw, triangle and pixel.
pub(super) struct MaterialLanes<'a> {
    pub(super) m: &'a Material,
    pub(super) draw: [&'a Draw<'a>; LANES],
    pub(super) tri: [&'a SetupTri; LANES],
    pub(super) px: [u32; LANES],
    pub(super) py: [u32; LANES],
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
pub(super) fn apart<const WIDE: bool, R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only in shade_tile_v3, which runs only where wide_isa() found
        // every feature `apart_v3` enables.
        return unsafe { apart_v3(f) };
    }
    apart_base(f)
}

#[inline(never)]
pub(super) fn apart_base<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// # Safety
/// The CPU must have the features enabled here ([`wide_isa`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,movbe")]
#[inline(never)]
pub(super) unsafe fn apart_v3<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The second pass of a tile holding blended triangles (lit mode): each, in submission order (the
/// pipeline submits blended objects after the opaque ones, far to near), is rasterised against
/// the tile's depth without writing it, and every fragment in front is shaded and composited over
/// the colour in linear light. Returns the fragments composited.
#[allow(clippy::too_many_arguments)]
pub(super) fn blend_tile(
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
    let to_linear = rxpipe_core::color::srgb_to_linear_lut();
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

#[cfg(test)]
mod tests {
    use super::super::coverage::raster_tri;
    use super::super::{bin, Bins};
    use super::*;
    use crate::raster::{RasterSettings, RasterStats};

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
        use glam::{Vec2, Vec4};
        use rxpipe_core::material::texture::{Sampler, Texture};
        use rxpipe_core::material::TextureRef;
        use std::sync::Arc;
        let (w, h) = (71u32, 43u32);
        let mut r = crate::raster::test_rng(0x51ed_270b);
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
        s.cull = crate::raster::CullMode::None;
        s.eye = Vec3::new(0.0, 0.0, -3.0);
        let (fs, ms) = (FragmentShader::new(&s), MaterialShader::new(&s));
        let mut stats = RasterStats::default();
        let mut setup = Setup::default();
        crate::raster::setup::setup_all(&draws, &s, &mut stats, &mut setup);
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
}
