//! Triangle setup: trivial rejection, clipping against the near plane and the guard band in
//! homogeneous space, projection to fixed point, culling, bounding boxes.

use super::{CullMode, Draw, RasterSettings, RasterStats};
use crate::geometry::VertexOut;
use glam::{Vec3, Vec4};
use rayon::prelude::*;

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
    /// true when the source triangle faces the camera
    pub front: bool,
    /// the varyings premultiplied by 1 / w: corner 0's, then corner 1's and corner 2's minus
    /// corner 0's, so that interpolating at barycentrics (l1, l2) is `var[0] + var[1] * l1 +
    /// var[2] * l2` (the differences are those the fragment stage would otherwise take per pixel)
    pub var: [Varyings; 3],
}

/// Setup output, kept between frames so that its buffers are reused: one list per chunk of input
/// triangles (filled in parallel, in submission order).
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

/// The varyings of a shaded vertex (not yet divided by w).
#[inline]
fn varyings(v: &VertexOut) -> Varyings {
    [
        v.world.x, v.world.y, v.world.z, v.normal.x, v.normal.y, v.normal.z, v.extra, 0.0,
    ]
}

pub(super) fn setup_all(
    draws: &[Draw],
    s: &RasterSettings,
    stats: &mut RasterStats,
    setup: &mut Setup,
) {
    let mut jobs = Vec::new();
    for (d, draw) in draws.iter().enumerate() {
        let n = draw.geometry.triangles.len();
        stats.triangles_in += n as u64;
        for start in (0..n).step_by(CHUNK) {
            jobs.push((d, start..(start + CHUNK).min(n)));
        }
    }
    setup.parts.resize_with(jobs.len(), Vec::new);
    setup.boxes.resize_with(jobs.len(), Vec::new);
    let counts: Vec<[u64; 3]> = jobs
        .into_par_iter()
        .zip(setup.parts.par_iter_mut().zip(setup.boxes.par_iter_mut()))
        .map(|((d, range), (tris, boxes))| {
            tris.clear();
            let mut counts = [0u64; 3];
            let g = draws[d].geometry;
            for t in range {
                let v = g.triangles[t].map(|i| &g.vertices[i as usize]);
                setup_one(v, d as u32, s, tris, &mut counts);
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
    draw: u32,
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
        emit(v, || src.map(varyings), draw, s, out, counts);
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
    let sv = src.map(varyings);
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
        emit([c[0].p, c[1].p, c[2].p], var, draw, s, out, counts);
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

/// Projects, snaps, culls and bounds one triangle (all corners in front of the near plane and
/// inside the guard band), and keeps it when it covers a pixel centre.
#[inline]
fn emit(
    v: [Vec4; 3],
    var: impl FnOnce() -> [Varyings; 3],
    draw: u32,
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
    let area = (x[1] as i64 - x[0] as i64) * (y[2] as i64 - y[0] as i64)
        - (x[2] as i64 - x[0] as i64) * (y[1] as i64 - y[0] as i64);
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
