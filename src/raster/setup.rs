//! Triangle setup: trivial rejection, clipping against the near plane and the guard band in
//! homogeneous space, projection to fixed point, culling, bounding boxes.

use super::{CullMode, Draw, RasterSettings, RasterStats};
use crate::geometry::VertexOut;
use glam::{Vec3, Vec4};
use rayon::prelude::*;
use std::ops::Range;

/// Sub-pixel precision of snapped vertex positions: 1/256 pixel.
pub const SUBPIXEL_BITS: u32 = 8;
const ONE: i64 = 1 << SUBPIXEL_BITS;
const HALF: i64 = ONE / 2;
/// Vertices are kept within this many pixels of the origin (guard band), so that edge functions
/// fit comfortably in i64.
const GUARD_PX: f32 = 32768.0;

/// Varyings the fragment stage interpolates, per corner: world position (3), normal (3), the
/// extra scalar, and one lane of padding, all multiplied by the corner's 1 / w so that a linear
/// blend followed by one multiply by w is perspective-correct.
pub type Varyings = [f32; 8];

/// A triangle ready for rasterisation and shading. Its corners are ordered so that `area > 0`.
/// It carries its own varyings, so the raster stage reads one record per triangle and never goes
/// back to the shaded vertices.
#[derive(Debug, Clone, Copy)]
pub struct SetupTri {
    /// snapped screen positions (1/256 pixel, y down)
    pub x: [i32; 3],
    pub y: [i32; 3],
    /// NDC depth per corner
    pub z: [f32; 3],
    /// 1 / clip w: corner 0's, then corner 1's and corner 2's minus corner 0's (the plane the
    /// fragment stage interpolates)
    pub inv_w: [f32; 3],
    /// twice the signed area in fixed point squared
    pub area: i64,
    /// pixel bounding box, inclusive: x0, y0, x1, y1
    pub bbox: [u16; 4],
    /// the draw the triangle belongs to
    pub draw: u32,
    /// the source triangle within its draw (the material path reads its corners)
    pub tri: u32,
    /// true when the source triangle faces the camera
    pub front: bool,
    /// the varyings premultiplied by 1 / w: corner 0's, then corner 1's and corner 2's minus
    /// corner 0's, so that interpolating at barycentrics (l1, l2) is `var[0] + var[1] * l1 +
    /// var[2] * l2` (the differences are those the fragment stage would otherwise take per pixel)
    pub var: [Varyings; 3],
}

/// Setup output, kept between frames so that its buffers are reused: one list per chunk of input
/// triangles, of one draw or several small ones (filled in parallel, in submission order).
#[derive(Default, Clone)]
pub struct Setup {
    pub parts: Vec<Vec<SetupTri>>,
    /// per part, the bounding box of each of its triangles (`SetupTri::bbox`), which binning
    /// reads twice: 8 contiguous bytes per triangle instead of a line of each record
    pub boxes: Vec<Vec<[u16; 4]>>,
}

/// Input triangles per setup chunk; setup triangle ids are `chunk << PART_SHIFT | index`.
const CHUNK: usize = 2048;
/// A chunk emits at most 7 triangles per input triangle (a triangle clipped by five planes is a
/// polygon of at most 8 corners).
pub const PART_SHIFT: u32 = 15;
const _: () = assert!(CHUNK * 7 <= 1 << PART_SHIFT);

impl Setup {
    #[inline]
    pub fn get(&self, id: u32) -> &SetupTri {
        &self.parts[(id >> PART_SHIFT) as usize][(id & ((1 << PART_SHIFT) - 1)) as usize]
    }
    /// Setup triangles over all parts.
    pub fn count(&self) -> usize {
        self.parts.iter().map(Vec::len).sum()
    }
}

#[derive(Clone, Copy)]
struct PolyVert {
    p: Vec4,
    b: Vec3,
}

/// The varyings of a shaded vertex (not yet divided by w), with its triangle's value in the last
/// lane (the same at the three corners, so every fragment sees it).
#[inline]
fn varyings(v: &VertexOut, face: f32) -> Varyings {
    [
        v.world.x, v.world.y, v.world.z, v.normal.x, v.normal.y, v.normal.z, v.extra, face,
    ]
}

pub(super) fn setup_all(
    draws: &[Draw],
    s: &RasterSettings,
    stats: &mut RasterStats,
    setup: &mut Setup,
) {
    // jobs of at most CHUNK triangles in submission order; a job takes the spans of as many
    // draws as fill it, so that a scene of many small objects makes few parts (binning counts
    // and scans a whole frame of tiles per part)
    let mut jobs: Vec<Vec<(usize, Range<usize>)>> = Vec::new();
    let mut fill = CHUNK;
    for (d, draw) in draws.iter().enumerate() {
        let n = draw.geometry.triangles.len();
        stats.triangles_in += n as u64;
        let mut start = 0;
        while start < n {
            if fill == CHUNK {
                jobs.push(Vec::new());
                fill = 0;
            }
            let end = start + (CHUNK - fill).min(n - start);
            jobs.last_mut().expect("pushed above").push((d, start..end));
            fill += end - start;
            start = end;
        }
    }
    setup.parts.resize_with(jobs.len(), Vec::new);
    setup.boxes.resize_with(jobs.len(), Vec::new);
    let counts: Vec<[u64; 3]> = jobs
        .into_par_iter()
        .zip(setup.parts.par_iter_mut().zip(setup.boxes.par_iter_mut()))
        .map(|(spans, (tris, boxes))| {
            tris.clear();
            let mut counts = [0u64; 3];
            for (d, range) in spans {
                setup_span(&draws[d], d as u32, range, s, tris, &mut counts);
            }
            // (the part's records are still in the cache)
            boxes.clear();
            boxes.extend(tris.iter().map(|t| t.bbox));
            counts
        })
        .collect();
    for c in counts {
        stats.culled += c[0];
        stats.rejected += c[1];
        stats.clipped += c[2];
    }
    stats.rasterized = setup.count() as u64;
}

/// Sets up triangles `range` of draw `d` into `tris`, counting the culled, rejected and clipped.
fn setup_span(
    draw: &Draw,
    d: u32,
    range: Range<usize>,
    s: &RasterSettings,
    tris: &mut Vec<SetupTri>,
    counts: &mut [u64; 3],
) {
    let g = draw.geometry;
    // a double-sided material culls no face; a mirrored draw's front faces wind the other way
    // on screen, so it culls the other winding and its triangles' `front` is flipped below
    let s = &RasterSettings {
        cull: match (s.cull, draw.mirrored) {
            _ if draw.material.is_some_and(|m| m.double_sided) => CullMode::None,
            (CullMode::Back, true) => CullMode::Front,
            (CullMode::Front, true) => CullMode::Back,
            (cull, _) => cull,
        },
        ..*s
    };
    let first = tris.len();
    let corners = |t: usize| g.triangles[t].map(|i| &g.vertices[i as usize]);
    let faces = draw.faces;
    let face = |t: usize| faces.and_then(|f| f.get(t)).copied().unwrap_or(0.0);
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut t = range.start;
    #[cfg(target_arch = "x86_64")]
    while t + 4 <= range.end {
        let quad = [corners(t), corners(t + 1), corners(t + 2), corners(t + 3)];
        let f = [face(t), face(t + 1), face(t + 2), face(t + 3)];
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { setup_quad(quad, f, d, t as u32, s, tris, counts) };
        t += 4;
    }
    for t in t..range.end {
        setup_one(corners(t), face(t), d, t as u32, s, tris, counts);
    }
    if draw.mirrored {
        for t in &mut tris[first..] {
            t.front = !t.front;
        }
    }
}

/// [`setup_one`] for four consecutive triangles: the tests every triangle takes (finite corners,
/// trivial rejection, the guard band, w > 0) and the projection and snapping of the common case,
/// all corners inside the guard band, four triangles to a register (SSE2), with the scalar path's
/// operations in the same order, so the results are identical; then lane by lane, in order, the
/// scalar cull, bounds and varyings, or the scalar clipping path for a triangle that needs it.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn setup_quad(
    src: [[&VertexOut; 3]; 4],
    faces: [f32; 4],
    draw: u32,
    tri0: u32,
    s: &RasterSettings,
    out: &mut Vec<SetupTri>,
    counts: &mut [u64; 3],
) {
    use std::arch::x86_64::*;
    // corner k of the four triangles, transposed: c[k] = [x, y, z, w], a lane per triangle
    let c: [[__m128; 4]; 3] = std::array::from_fn(|k| {
        let r = src.map(|t| _mm_loadu_ps((&t[k].clip as *const Vec4).cast::<f32>()));
        let t0 = _mm_unpacklo_ps(r[0], r[1]);
        let t1 = _mm_unpacklo_ps(r[2], r[3]);
        let t2 = _mm_unpackhi_ps(r[0], r[1]);
        let t3 = _mm_unpackhi_ps(r[2], r[3]);
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    });
    let zero = _mm_setzero_ps();
    let all = _mm_castsi128_ps(_mm_set1_epi32(-1));
    let abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fff_ffff));
    let (gx, gy) = (
        _mm_set1_ps(GUARD_PX / s.width as f32),
        _mm_set1_ps(GUARD_PX / s.height as f32),
    );
    let mut finite = all;
    let mut positive = all;
    let mut guard = all;
    let mut out_planes = [all; 6];
    for [x, y, z, w] in c {
        for v in [x, y, z, w] {
            finite = _mm_and_ps(finite, _mm_cmpeq_ps(_mm_sub_ps(v, v), zero));
        }
        let nw = _mm_sub_ps(zero, w);
        let outs = [
            _mm_cmplt_ps(x, nw),
            _mm_cmpgt_ps(x, w),
            _mm_cmplt_ps(y, nw),
            _mm_cmpgt_ps(y, w),
            _mm_cmplt_ps(z, zero),
            _mm_cmpgt_ps(z, w),
        ];
        for (o, n) in out_planes.iter_mut().zip(outs) {
            *o = _mm_and_ps(*o, n);
        }
        let inside = _mm_and_ps(
            _mm_cmpge_ps(z, zero),
            _mm_and_ps(
                _mm_cmple_ps(_mm_and_ps(x, abs_mask), _mm_mul_ps(gx, w)),
                _mm_cmple_ps(_mm_and_ps(y, abs_mask), _mm_mul_ps(gy, w)),
            ),
        );
        guard = _mm_and_ps(guard, inside);
        positive = _mm_and_ps(positive, _mm_cmpgt_ps(w, zero));
    }
    let trivially_out = out_planes.iter().fold(zero, |a, &o| _mm_or_ps(a, o));
    let rejected = _mm_movemask_ps(_mm_or_ps(trivially_out, _mm_andnot_ps(finite, all)));
    let inside = _mm_movemask_ps(guard);
    let positive = _mm_movemask_ps(positive);
    // project and snap all four (lanes that do not take this path are discarded)
    let (w, h) = (_mm_set1_ps(s.width as f32), _mm_set1_ps(s.height as f32));
    let scale = _mm_set1_ps(ONE as f32);
    let half = _mm_set1_ps(0.5);
    let sign = _mm_set1_ps(-0.0);
    let snap4 = |v: __m128| _mm_cvttps_epi32(_mm_add_ps(v, _mm_or_ps(_mm_and_ps(v, sign), half)));
    let mut px = [[0i32; 4]; 3];
    let mut py = [[0i32; 4]; 3];
    let mut pz = [[0f32; 4]; 3];
    let mut pw = [[0f32; 4]; 3];
    for k in 0..3 {
        let [x, y, z, cw] = c[k];
        let iw = _mm_div_ps(_mm_set1_ps(1.0), cw);
        let sx = _mm_mul_ps(
            _mm_mul_ps(_mm_add_ps(_mm_mul_ps(_mm_mul_ps(x, iw), half), half), w),
            scale,
        );
        let sy = _mm_mul_ps(
            _mm_mul_ps(_mm_sub_ps(half, _mm_mul_ps(_mm_mul_ps(y, iw), half)), h),
            scale,
        );
        _mm_storeu_si128(px[k].as_mut_ptr().cast(), snap4(sx));
        _mm_storeu_si128(py[k].as_mut_ptr().cast(), snap4(sy));
        _mm_storeu_ps(pz[k].as_mut_ptr(), _mm_mul_ps(z, iw));
        _mm_storeu_ps(pw[k].as_mut_ptr(), iw);
    }
    for (i, t) in src.into_iter().enumerate() {
        let bit = 1 << i;
        if rejected & bit != 0 {
            counts[1] += 1;
        } else if inside & bit == 0 {
            setup_one(t, faces[i], draw, tri0 + i as u32, s, out, counts);
        } else if positive & bit == 0 {
            // (as `emit`: a corner at w = 0)
            counts[1] += 1;
        } else {
            let x = [px[0][i], px[1][i], px[2][i]];
            let y = [py[0][i], py[1][i], py[2][i]];
            let p = Projected {
                x,
                y,
                z: [pz[0][i], pz[1][i], pz[2][i]],
                inv_w: [pw[0][i], pw[1][i], pw[2][i]],
                area: area(x, y),
            };
            let var = || t.map(|v| varyings(v, faces[i]));
            finish(p, var, draw, tri0 + i as u32, s, out, counts);
        }
    }
}

/// Outcode bits: outside x-, x+, y-, y+, near, far.
#[inline]
fn outcode(p: Vec4) -> u8 {
    ((p.x < -p.w) as u8)
        | ((p.x > p.w) as u8) << 1
        | ((p.y < -p.w) as u8) << 2
        | ((p.y > p.w) as u8) << 3
        | ((p.z < 0.0) as u8) << 4
        | ((p.z > p.w) as u8) << 5
}

fn setup_one(
    src: [&VertexOut; 3],
    face: f32,
    draw: u32,
    tri: u32,
    s: &RasterSettings,
    out: &mut Vec<SetupTri>,
    counts: &mut [u64; 3],
) {
    let v = src.map(|v| v.clip);
    let oc = [outcode(v[0]), outcode(v[1]), outcode(v[2])];
    if oc[0] & oc[1] & oc[2] != 0 || !(v[0].is_finite() && v[1].is_finite() && v[2].is_finite()) {
        counts[1] += 1;
        return;
    }
    let (gx, gy) = (GUARD_PX / s.width as f32, GUARD_PX / s.height as f32);
    let inside_guard = |p: Vec4| p.z >= 0.0 && p.x.abs() <= gx * p.w && p.y.abs() <= gy * p.w;
    if v.iter().all(|&p| inside_guard(p)) {
        emit(
            v,
            || src.map(|v| varyings(v, face)),
            draw,
            tri,
            s,
            out,
            counts,
        );
        return;
    }
    counts[2] += 1;
    // Sutherland-Hodgman against near (z >= 0) and the four guard-band planes
    let planes = [
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(-1.0, 0.0, 0.0, gx),
        Vec4::new(1.0, 0.0, 0.0, gx),
        Vec4::new(0.0, -1.0, 0.0, gy),
        Vec4::new(0.0, 1.0, 0.0, gy),
    ];
    let mut poly = [PolyVert {
        p: Vec4::ZERO,
        b: Vec3::ZERO,
    }; 9];
    let mut n = 3;
    for k in 0..3 {
        poly[k] = PolyVert {
            p: v[k],
            b: Vec3::AXES[k],
        };
    }
    let mut next = poly;
    for pl in planes {
        let mut m = 0;
        for i in 0..n {
            let (a, b) = (poly[i], poly[(i + 1) % n]);
            let (da, db) = (pl.dot(a.p), pl.dot(b.p));
            if da >= 0.0 {
                next[m] = a;
                m += 1;
            }
            if (da >= 0.0) != (db >= 0.0) {
                // intersect with the endpoints in a canonical order, so the neighbour that shares
                // this edge computes the identical point
                let (p, q, dp, dq) = if canonical_less(a.p, b.p) {
                    (a, b, da, db)
                } else {
                    (b, a, db, da)
                };
                let t = dp / (dp - dq);
                next[m] = PolyVert {
                    p: p.p + (q.p - p.p) * t,
                    b: p.b + (q.b - p.b) * t,
                };
                m += 1;
            }
        }
        n = m;
        poly = next;
        if n < 3 {
            counts[1] += 1;
            return;
        }
    }
    let sv = src.map(|v| varyings(v, face));
    for k in 1..n - 1 {
        let c = [poly[0], poly[k], poly[k + 1]];
        // varyings are linear in clip space: blend the source vertices' with the corner weights
        let var = || {
            c.map(|c| {
                let mut r = [0f32; 8];
                for (m, src) in sv.iter().enumerate() {
                    for (r, a) in r.iter_mut().zip(src) {
                        *r += c.b[m] * a;
                    }
                }
                r
            })
        };
        emit([c[0].p, c[1].p, c[2].p], var, draw, tri, s, out, counts);
    }
}

#[inline]
fn canonical_less(a: Vec4, b: Vec4) -> bool {
    a.to_array()
        .iter()
        .zip(b.to_array().iter())
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x < y)
}

/// A triangle projected to the screen: snapped corners, NDC depths, 1/w per corner and twice its
/// signed area in fixed point squared.
struct Projected {
    x: [i32; 3],
    y: [i32; 3],
    z: [f32; 3],
    inv_w: [f32; 3],
    area: i64,
}

/// Twice the signed area of snapped corners.
#[inline]
fn area(x: [i32; 3], y: [i32; 3]) -> i64 {
    (x[1] as i64 - x[0] as i64) * (y[2] as i64 - y[0] as i64)
        - (x[2] as i64 - x[0] as i64) * (y[1] as i64 - y[0] as i64)
}

/// Projects, snaps, culls and bounds one triangle (all corners in front of the near plane and
/// inside the guard band), and keeps it when it covers a pixel centre.
#[inline]
fn emit(
    v: [Vec4; 3],
    var: impl FnOnce() -> [Varyings; 3],
    draw: u32,
    tri: u32,
    s: &RasterSettings,
    out: &mut Vec<SetupTri>,
    counts: &mut [u64; 3],
) {
    // a corner at w = 0 (the clip-space origin survives every clip plane) has no projection
    if !(v[0].w > 0.0 && v[1].w > 0.0 && v[2].w > 0.0) {
        counts[1] += 1;
        return;
    }
    let (w, h) = (s.width as f32, s.height as f32);
    let scale = ONE as f32;
    let mut x = [0i32; 3];
    let mut y = [0i32; 3];
    let mut z = [0f32; 3];
    let mut inv_w = [0f32; 3];
    for k in 0..3 {
        let iw = 1.0 / v[k].w;
        inv_w[k] = iw;
        x[k] = snap((v[k].x * iw * 0.5 + 0.5) * w * scale);
        y[k] = snap((0.5 - v[k].y * iw * 0.5) * h * scale);
        z[k] = v[k].z * iw;
    }
    let p = Projected {
        x,
        y,
        z,
        inv_w,
        area: area(x, y),
    };
    finish(p, var, draw, tri, s, out, counts);
}

/// Culls a projected triangle, bounds it, and keeps it with its varyings when it covers a pixel
/// centre.
#[inline]
fn finish(
    p: Projected,
    var: impl FnOnce() -> [Varyings; 3],
    draw: u32,
    tri: u32,
    s: &RasterSettings,
    out: &mut Vec<SetupTri>,
    counts: &mut [u64; 3],
) {
    let Projected {
        x,
        y,
        z,
        inv_w,
        area,
    } = p;
    // with y down, counter-clockwise in NDC has negative area here
    let front = area < 0;
    let keep = area != 0
        && match s.cull {
            CullMode::None => true,
            CullMode::Back => front,
            CullMode::Front => !front,
        };
    if !keep {
        counts[0] += 1;
        return;
    }
    let mut t = SetupTri {
        x,
        y,
        z,
        inv_w,
        area,
        bbox: [0; 4],
        draw,
        tri,
        front,
        var: [[0.0; 8]; 3],
    };
    if area < 0 {
        // order corners so that area > 0
        t.x.swap(1, 2);
        t.y.swap(1, 2);
        t.z.swap(1, 2);
        t.inv_w.swap(1, 2);
        t.area = -area;
    }
    // pixels whose centres (px * 256 + 128) lie within the snapped bounds
    let xmin = *t.x.iter().min().unwrap() as i64;
    let xmax = *t.x.iter().max().unwrap() as i64;
    let ymin = *t.y.iter().min().unwrap() as i64;
    let ymax = *t.y.iter().max().unwrap() as i64;
    let px0 = ((xmin - HALF + ONE - 1).div_euclid(ONE)).max(0);
    let px1 = ((xmax - HALF).div_euclid(ONE)).min(s.width as i64 - 1);
    let py0 = ((ymin - HALF + ONE - 1).div_euclid(ONE)).max(0);
    let py1 = ((ymax - HALF).div_euclid(ONE)).min(s.height as i64 - 1);
    if px0 > px1 || py0 > py1 {
        counts[1] += 1;
        return;
    }
    t.bbox = [px0 as u16, py0 as u16, px1 as u16, py1 as u16];
    let mut var = var();
    for (k, a) in var.iter_mut().enumerate() {
        for a in a.iter_mut() {
            *a *= inv_w[k];
        }
    }
    if area < 0 {
        var.swap(1, 2);
    }
    let v0 = var[0];
    for d in &mut var[1..] {
        for (d, a) in d.iter_mut().zip(v0) {
            *d -= a;
        }
    }
    t.var = var;
    t.inv_w = [t.inv_w[0], t.inv_w[1] - t.inv_w[0], t.inv_w[2] - t.inv_w[0]];
    out.push(t);
}

/// The edge function of edge a -> b at point p (fixed point), and whether the edge is a top or
/// left edge (for corners ordered with positive area, y down). Used by the tile rasteriser and by
/// the brute-force reference in tests.
#[inline]
pub fn edge_is_top_left(ax: i32, ay: i32, bx: i32, by: i32) -> bool {
    let (dx, dy) = (bx - ax, by - ay);
    dy < 0 || (dy == 0 && dx > 0)
}

/// Rounds a screen coordinate (in 1/256 pixel) to fixed point, halves away from zero, with one
/// truncating conversion (`f32::round` is a libm call). Setup only snaps finite coordinates
/// within the guard band, where this equals `as i32`; on x86-64 it is the bare `cvttss2si`,
/// without the saturation checks of `as` (a NaN or an out-of-range value gives i32::MIN there).
#[inline]
pub fn snap(v: f32) -> i32 {
    let r = v + 0.5f32.copysign(v);
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE is part of the x86-64 baseline.
        unsafe { std::arch::x86_64::_mm_cvtt_ss2si(std::arch::x86_64::_mm_set_ss(r)) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        r as i32
    }
}

/// Pixel centre in fixed point.
#[inline]
pub fn pixel_centre(p: i64) -> i64 {
    p * ONE + HALF
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four-triangle path equals the scalar one, record for record and count for count, on
    /// ordinary, culled, clipped, trivially rejected and broken triangles (NaN, infinite, w = 0),
    /// whatever lane they fall in, in all three cull modes.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn quad_setup_equals_the_scalar_setup() {
        let mut r = super::super::test_rng(0x9e37_79b9);
        let mut corner = |kind: u32| -> Vec4 {
            let w = 0.5 + 4.0 * r();
            let p = Vec4::new((r() - 0.5) * 2.2 * w, (r() - 0.5) * 2.2 * w, r() * w, w);
            match kind {
                0 => Vec4::new(f32::NAN, p.y, p.z, p.w),
                1 => Vec4::new(p.x, f32::INFINITY, p.z, p.w),
                2 => Vec4::ZERO,
                3 => Vec4::new(p.x, p.y, -0.3 * p.w, p.w),
                4 => Vec4::new(p.x * 3e4, p.y, p.z, p.w),
                5 => Vec4::new(p.x + 3.0 * p.w, p.y, p.z, p.w),
                // on the near plane exactly
                6 | 7 => Vec4::new(p.x, p.y, 0.0, p.w),
                _ => p,
            }
        };
        let verts: Vec<VertexOut> = (0..4000)
            .map(|i| VertexOut {
                clip: corner(i % 97),
                world: Vec3::new(i as f32, 1.0, 2.0),
                normal: Vec3::new(0.0, 1.0, i as f32 * 0.01),
                extra: i as f32,
                ..Default::default()
            })
            .collect();
        // small triangles from neighbouring vertices, so that many cover a pixel centre
        let tris: Vec<[usize; 3]> = (0..3990).map(|i| [i, i + 1 + i % 5, i + 7]).collect();
        for cull in [CullMode::Back, CullMode::Front, CullMode::None] {
            let mut s = RasterSettings::new(96, 64);
            s.cull = cull;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (mut ca, mut cb) = ([0u64; 3], [0u64; 3]);
            for (n, q) in tris.chunks_exact(4).enumerate() {
                let quad: [[&VertexOut; 3]; 4] = std::array::from_fn(|i| q[i].map(|k| &verts[k]));
                let faces = std::array::from_fn(|i| q[i][0] as f32 * 0.25);
                let t0 = 4 * n as u32;
                // SAFETY: SSE2 is part of the x86-64 baseline.
                unsafe { setup_quad(quad, faces, 3, t0, &s, &mut a, &mut ca) };
                for (i, (t, f)) in quad.into_iter().zip(faces).enumerate() {
                    setup_one(t, f, 3, t0 + i as u32, &s, &mut b, &mut cb);
                }
            }
            assert_eq!(ca, cb, "{cull:?}");
            // every path was taken (culling, unless nothing is culled)
            assert!(ca[1] > 0 && ca[2] > 0, "{cull:?}: {ca:?}");
            assert!(ca[0] > 0 || cull == CullMode::None, "{cull:?}: {ca:?}");
            assert!(b.len() > 100, "{cull:?}: {} kept", b.len());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{cull:?}");
        }
    }
}
