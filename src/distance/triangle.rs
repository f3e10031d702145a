//! The exact distance between two triangles in double precision, and the distance bounds of two
//! boxes. kernels/distance.cu repeats these functions operation for operation (the kernels are
//! built without contracting products into FMAs), so the GPU and the CPU give the same bits.

use glam::DVec3;

/// Three corners.
pub type Tri = [DVec3; 3];

/// The squared distance between triangles `a` and `b` and a closest point on each: zero, with
/// the crossing point twice, where an edge of one crosses the other.
///
/// Two triangles that do not meet are closest at a vertex of one and a point of the other, or at
/// a point of an edge of each; two that meet have an edge of one crossing the other (or, lying in
/// one plane, edges that cross or a vertex inside the other). So the distance is the least of the
/// six crossings, the nine edge pairs and the six vertices against the other face. A degenerate
/// triangle (no area) has no face of its own: its edges stand for it.
pub fn tri_tri(a: &Tri, b: &Tri) -> (f64, DVec3, DVec3) {
    let na = normal(a);
    let nb = normal(b);
    for i in 0..3 {
        let (p, q) = (a[i], a[(i + 1) % 3]);
        if let Some(x) = crossing(p, q, b, nb) {
            return (0.0, x, x);
        }
    }
    for j in 0..3 {
        let (p, q) = (b[j], b[(j + 1) % 3]);
        if let Some(x) = crossing(p, q, a, na) {
            return (0.0, x, x);
        }
    }
    let mut best = (f64::INFINITY, a[0], b[0]);
    for i in 0..3 {
        for j in 0..3 {
            let (d, x, y) = seg_seg(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3]);
            if d < best.0 {
                best = (d, x, y);
            }
        }
    }
    if nb != DVec3::ZERO {
        for &p in a {
            let y = point_tri(p, b);
            let d = dist2(p, y);
            if d < best.0 {
                best = (d, p, y);
            }
        }
    }
    if na != DVec3::ZERO {
        for &p in b {
            let x = point_tri(p, a);
            let d = dist2(x, p);
            if d < best.0 {
                best = (d, x, p);
            }
        }
    }
    best
}

#[inline]
fn dot(a: DVec3, b: DVec3) -> f64 {
    a.x * b.x + a.y * b.y + a.z * b.z
}

#[inline]
fn cross(a: DVec3, b: DVec3) -> DVec3 {
    DVec3::new(
        a.y * b.z - a.z * b.y,
        a.z * b.x - a.x * b.z,
        a.x * b.y - a.y * b.x,
    )
}

#[inline]
fn dist2(a: DVec3, b: DVec3) -> f64 {
    let d = a - b;
    dot(d, d)
}

/// The (unnormalised) normal of `t`; zero for a degenerate triangle.
#[inline]
pub fn normal(t: &Tri) -> DVec3 {
    cross(t[1] - t[0], t[2] - t[0])
}

/// (`f64::clamp` tests below, then above, as the kernel's rxdi_clamp01)
#[inline]
fn clamp01(x: f64) -> f64 {
    x.clamp(0.0, 1.0)
}

/// Where segment pq crosses triangle `t` of normal `n` (non-zero), if it does and is not in its
/// plane.
pub fn crossing(p: DVec3, q: DVec3, t: &Tri, n: DVec3) -> Option<DVec3> {
    if n == DVec3::ZERO {
        return None;
    }
    let dp = dot(n, p - t[0]);
    let dq = dot(n, q - t[0]);
    if (dp > 0.0 && dq > 0.0) || (dp < 0.0 && dq < 0.0) || dp == dq {
        return None;
    }
    let s = dp / (dp - dq);
    let x = p + (q - p) * s;
    let inside = dot(n, cross(t[1] - t[0], x - t[0])) >= 0.0
        && dot(n, cross(t[2] - t[1], x - t[1])) >= 0.0
        && dot(n, cross(t[0] - t[2], x - t[2])) >= 0.0;
    inside.then_some(x)
}

/// The squared distance between segments p1q1 and p2q2 and their closest points (Ericson,
/// Real-Time Collision Detection, 5.1.9; a segment may be a point).
pub fn seg_seg(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> (f64, DVec3, DVec3) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    let (s, t);
    if a == 0.0 && e == 0.0 {
        (s, t) = (0.0, 0.0);
    } else if a == 0.0 {
        (s, t) = (0.0, clamp01(f / e));
    } else {
        let c = dot(d1, r);
        if e == 0.0 {
            (s, t) = (clamp01(-c / a), 0.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            let s0 = if denom != 0.0 {
                clamp01((b * f - c * e) / denom)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                (s, t) = (clamp01(-c / a), 0.0);
            } else if t0 > 1.0 {
                (s, t) = (clamp01((b - c) / a), 1.0);
            } else {
                (s, t) = (s0, t0);
            }
        }
    }
    let x = p1 + d1 * s;
    let y = p2 + d2 * t;
    (dist2(x, y), x, y)
}

/// The point of triangle `t` (not degenerate) closest to `p` (Ericson, 5.1.5).
pub fn point_tri(p: DVec3, t: &Tri) -> DVec3 {
    let [a, b, c] = *t;
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// The squared distance from `p` to triangle `t` (one with no area is the union of its edges).
pub fn point_dist2(p: DVec3, t: &Tri) -> f64 {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    if n.length_squared() > 0.0 {
        return (point_tri(p, t) - p).length_squared();
    }
    (0..3)
        .map(|k| point_segment_dist2(p, t[k], t[(k + 1) % 3]))
        .fold(f64::INFINITY, f64::min)
}

/// The squared distance from `p` to segment ab (a point, as a segment, against it).
pub fn point_segment_dist2(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    seg_seg(p, p, a, b).0
}

/// An axis-aligned box: least and greatest corner.
pub type Aabb = [[f32; 3]; 2];

/// The squared lower bound of the distance between anything in box `a` and anything in box `b`:
/// the gaps between them along each axis.
#[inline]
pub fn box_lower2(a: &Aabb, b: &Aabb) -> f64 {
    let mut s = 0.0;
    for k in 0..3 {
        let g = (b[0][k] as f64 - a[1][k] as f64).max(a[0][k] as f64 - b[1][k] as f64);
        if g > 0.0 {
            s += g * g;
        }
    }
    s
}

/// The squared greatest distance between a point of box `a` and a point of box `b`: the upper
/// bound of the greatest distance between parts of meshes in them.
#[inline]
pub fn box_far2(a: &Aabb, b: &Aabb) -> f64 {
    let mut s = 0.0;
    for k in 0..3 {
        let g = (a[1][k] as f64 - b[0][k] as f64)
            .abs()
            .max((a[0][k] as f64 - b[1][k] as f64).abs());
        s += g * g;
    }
    s
}

/// The squared upper bound of the least distance between two parts of meshes whose boxes, `a`
/// and `b`, are tight (each face of a box touches a point of its part): some point of each part
/// lies on every face of its box, so the parts are no farther apart than the nearest pair of
/// faces is at its farthest (gDist's enhanced bound, section 4: the least of the 36 face pairs).
#[inline]
pub fn box_upper2(a: &Aabb, b: &Aabb) -> f64 {
    let mut best = f64::INFINITY;
    for i in 0..6 {
        let fa = face(a, i);
        for j in 0..6 {
            let d = box_far2(&fa, &face(b, j));
            if d < best {
                best = d;
            }
        }
    }
    best
}

/// The squared lower bound of the greatest distance between two parts of meshes whose boxes,
/// `a` and `b`, are tight: some point of each part lies on every face of its box, so two of
/// them are at least as far apart as any face of `a` is from any face of `b` (gDist's enhanced
/// bound for the maximum, section 4: the greatest of the 36 face pairs' gaps).
#[inline]
pub fn box_near_far2(a: &Aabb, b: &Aabb) -> f64 {
    let mut best = 0.0;
    for i in 0..6 {
        let fa = face(a, i);
        for j in 0..6 {
            let d = box_lower2(&fa, &face(b, j));
            if d > best {
                best = d;
            }
        }
    }
    best
}

/// The squared greatest distance between triangles `a` and `b`, and the corners where it is
/// reached (indices into each). The distance between two points is convex, so over two triangles
/// it is greatest at a pair of corners: the greatest of the nine, the first in the order (corner
/// of `a`, corner of `b`) among equals.
#[inline]
pub fn tri_far2(a: &Tri, b: &Tri) -> (f64, [usize; 2]) {
    let mut best = (dist2(a[0], b[0]), [0, 0]);
    for (i, &p) in a.iter().enumerate() {
        for (j, &q) in b.iter().enumerate() {
            let d = dist2(p, q);
            if d > best.0 {
                best = (d, [i, j]);
            }
        }
    }
    best
}

/// Face `i` of box `b` as a flat box: axis `i / 2` held at the least (even `i`) or greatest side.
#[inline]
fn face(b: &Aabb, i: usize) -> Aabb {
    let (k, v) = (i / 2, b[i % 2][i / 2]);
    let mut f = *b;
    f[0][k] = v;
    f[1][k] = v;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p: [[f64; 3]; 3]) -> Tri {
        p.map(DVec3::from_array)
    }

    /// Brute force over points of both triangles on a grid of barycentrics: never below the
    /// exact distance, and within the grid's spacing of it.
    fn sampled(a: &Tri, b: &Tri, n: usize) -> f64 {
        let pts = |t: &Tri| {
            let mut v = Vec::new();
            for i in 0..=n {
                for j in 0..=n - i {
                    let (u, w) = (i as f64 / n as f64, j as f64 / n as f64);
                    v.push(t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * w);
                }
            }
            v
        };
        let (pa, pb) = (pts(a), pts(b));
        let mut best = f64::INFINITY;
        for p in &pa {
            for q in &pb {
                best = best.min(p.distance(*q));
            }
        }
        best
    }

    #[test]
    fn known_configurations() {
        // parallel, one above the other: the face distance
        let a = t([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let b = t([[0.1, 0.1, 2.0], [0.5, 0.1, 2.0], [0.1, 0.5, 2.0]]);
        assert_eq!(tri_tri(&a, &b).0, 4.0);
        // crossing (along a segment in the planes z = 0 and x = y): zero, at a point of both
        let c = t([[0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [3.0, 3.0, 0.5]]);
        let (d, x, y) = tri_tri(&a, &c);
        assert_eq!(d, 0.0);
        assert_eq!(x, y);
        assert!(
            x.z.abs() < 1e-12 && (x.x - x.y).abs() < 1e-12 && x.x + x.y <= 1.0,
            "{x}"
        );
        // skew edges: the distance between the lines x = 0, z = 0 and y = 0, z = 3
        let e = t([[-1.0, 5.0, 3.0], [1.0, 5.0, 3.0], [0.0, 9.0, 3.0]]);
        let f = t([[5.0, -1.0, 0.0], [5.0, 1.0, 0.0], [9.0, 0.0, 0.0]]);
        let (d, _, _) = tri_tri(&e, &f);
        // closest: (1, 5, 3) and (5, 1, 0)
        assert!((d - (16.0 + 16.0 + 9.0)).abs() < 1e-12, "{d}");
        // a vertex above the inside of a face
        let g = t([[0.25, 0.25, 1.5], [0.25, 0.3, 7.0], [0.3, 0.25, 9.0]]);
        let (d, x, y) = tri_tri(&a, &g);
        assert!((d - 2.25).abs() < 1e-12, "{d}");
        assert!((x - DVec3::new(0.25, 0.25, 0.0)).length() < 1e-12);
        assert_eq!(y, g[0]);
        // degenerate ones: a point and a segment
        let p = t([[2.0, 2.0, 0.0]; 3]);
        let s = t([[0.0, 3.0, 0.0], [4.0, 3.0, 0.0], [4.0, 3.0, 0.0]]);
        assert!((tri_tri(&p, &s).0 - 1.0).abs() < 1e-12);
        assert!((tri_tri(&p, &a).0 - (1.5f64.powi(2) * 2.0)).abs() < 1e-12);
    }

    #[test]
    fn random_pairs_agree_with_sampling() {
        let mut s = 0x9e37_79b9_u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for k in 0..300 {
            let mut tri = |off: f64| t(std::array::from_fn(|_| [r() + off, r(), r()]));
            let (a, b) = (tri(0.0), tri(if k % 3 == 0 { 0.0 } else { 1.2 }));
            let (d2, x, y) = tri_tri(&a, &b);
            let d = d2.sqrt();
            // the points are on their triangles and as far apart as said
            assert!((x.distance(y) - d).abs() < 1e-9);
            let g = sampled(&a, &b, 40);
            assert!(g >= d - 1e-9, "pair {k}: sampled {g} below exact {d}");
            // the grid's spacing: each triangle's longest edge / 40, one step each
            let edge = |t: &Tri| {
                (0..3)
                    .map(|i| t[i].distance(t[(i + 1) % 3]))
                    .fold(0.0, f64::max)
            };
            let slack = (edge(&a) + edge(&b)) / 40.0;
            assert!(g <= d + slack, "pair {k}: sampled {g}, exact {d}");
        }
    }

    #[test]
    fn box_bounds_hold_for_points_inside() {
        let a: Aabb = [[0.0, 0.0, 0.0], [1.0, 2.0, 1.0]];
        let b: Aabb = [[3.0, 1.0, -1.0], [4.0, 5.0, 0.5]];
        assert_eq!(box_lower2(&a, &b), 4.0);
        assert_eq!(box_lower2(&a, &a), 0.0);
        // the enhanced upper bound is at most the farthest corners' distance, at least the gap
        let up = box_upper2(&a, &b);
        assert!(up >= 4.0 && up <= box_far2(&a, &b), "{up}");
        // faces x = 1 of a and x = 3 of b: at most 2^2 + 5^2 + 2^2 apart
        assert!(up <= 4.0 + 25.0 + 4.0);
        // the bounds of the greatest distance: the farthest corners (0, 0, 1) and (4, 5, -1),
        // and the farthest face pair at its nearest: y = 0 of a against y = 5 of b, 5 apart in
        // y and 2 in x (x in [0, 1] against [3, 4]), overlapping in z
        assert_eq!(box_far2(&a, &b), 16.0 + 25.0 + 4.0);
        assert_eq!(box_near_far2(&a, &b), 25.0 + 4.0);
    }

    #[test]
    fn far_bounds_hold_for_tight_point_sets() {
        let mut s = 0x2545_f491_u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        for k in 0..200 {
            // two clouds of 1 to 12 points, apart or overlapping, and their tight boxes
            let off = (k % 4) as f32 * 0.7;
            let mut cloud = |o: f32| -> Vec<[f32; 3]> {
                let n = 1 + (r() * 12.0) as usize;
                (0..n).map(|_| [r() + o, r() * 2.0, r()]).collect()
            };
            let (pa, pb) = (cloud(0.0), cloud(off));
            let tight = |p: &[[f32; 3]]| -> Aabb {
                let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
                for q in p {
                    for k in 0..3 {
                        b[0][k] = b[0][k].min(q[k]);
                        b[1][k] = b[1][k].max(q[k]);
                    }
                }
                b
            };
            let (ba, bb) = (tight(&pa), tight(&pb));
            let far = pa
                .iter()
                .flat_map(|p| pb.iter().map(move |q| (*p, *q)))
                .map(|(p, q)| {
                    let p = DVec3::from_array(p.map(f64::from));
                    dist2(p, DVec3::from_array(q.map(f64::from)))
                })
                .fold(0.0, f64::max);
            assert!(far <= box_far2(&ba, &bb), "case {k}");
            assert!(box_near_far2(&ba, &bb) <= far, "case {k}");
        }
        // triangles: the greatest of the nine corner pairs, the first among equals
        let a = t([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let b = t([[3.0, 0.0, 0.0], [3.0, 0.0, 2.0], [2.0, 0.0, 0.0]]);
        let (d, c) = tri_far2(&a, &b);
        assert_eq!((d, c), (9.0 + 1.0 + 4.0, [2, 1]));
        let (d, c) = tri_far2(&a, &a);
        assert_eq!((d, c), (2.0, [1, 2]));
    }
}
