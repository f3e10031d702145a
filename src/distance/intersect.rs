//! Whether two triangles meet, decided exactly: every decision is the sign of an orientation
//! determinant, computed by Shewchuk's adaptive predicates (the `robust` crate), so the answer
//! is the true one for the float corners given, touching included, degenerate triangles
//! included. The envelope stage checks its output with it.
//!
//! Two closed triangles meet if and only if an edge of one meets the other: their common part is
//! a convex set, and each of its extreme points lies on the boundary of one of them. A triangle
//! with no area (collinear corners) is the union of its edges, so it is tested as three segments.

use glam::Vec3;
use robust::{orient2d, orient3d, Coord, Coord3D};

/// Three corners.
pub type Corners = [Vec3; 3];

fn c3(p: Vec3) -> Coord3D<f64> {
    Coord3D {
        x: p.x as f64,
        y: p.y as f64,
        z: p.z as f64,
    }
}

/// The sign of the volume of tetrahedron abcd (positive where d lies below abc, seen with abc
/// counter-clockwise, as Shewchuk defines it; only its agreement with other signs matters).
fn o3(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> f64 {
    orient3d(c3(a), c3(b), c3(c), c3(d))
}

/// `p` projected onto the coordinate plane that leaves out axis `k` (exact: a coordinate is
/// dropped).
fn drop(p: Vec3, k: usize) -> Coord<f64> {
    let (x, y) = match k {
        0 => (p.y, p.z),
        1 => (p.z, p.x),
        _ => (p.x, p.y),
    };
    Coord {
        x: x as f64,
        y: y as f64,
    }
}

fn o2(a: Vec3, b: Vec3, c: Vec3, k: usize) -> f64 {
    orient2d(drop(a, k), drop(b, k), drop(c, k))
}

/// Whether the corners are collinear (or coincide): collinear in every coordinate plane.
fn collinear(t: &Corners) -> bool {
    (0..3).all(|k| o2(t[0], t[1], t[2], k) == 0.0)
}

/// Whether segments pq and ab of one coordinate plane (axis `k` left out) meet.
fn segments_meet_2d(p: Vec3, q: Vec3, a: Vec3, b: Vec3, k: usize) -> bool {
    let (s1, s2) = (o2(p, q, a, k), o2(p, q, b, k));
    let (s3, s4) = (o2(a, b, p, k), o2(a, b, q, k));
    if s1 * s2 > 0.0 || s3 * s4 > 0.0 {
        return false;
    }
    if s1 == 0.0 && s2 == 0.0 && s3 == 0.0 && s4 == 0.0 {
        // on one line: their boxes overlap
        let (p, q, a, b) = (drop(p, k), drop(q, k), drop(a, k), drop(b, k));
        let over = |p: f64, q: f64, a: f64, b: f64| p.min(q) <= a.max(b) && a.min(b) <= p.max(q);
        return over(p.x, q.x, a.x, b.x) && over(p.y, q.y, a.y, b.y);
    }
    true
}

/// Whether segments pq and ab meet in space: they lie in one plane and meet in every coordinate
/// plane (one of which shows their plane, or line, without folding it).
fn segments_meet(p: Vec3, q: Vec3, a: Vec3, b: Vec3) -> bool {
    o3(p, q, a, b) == 0.0 && (0..3).all(|k| segments_meet_2d(p, q, a, b, k))
}

/// Whether segment pq meets triangle `t`, which has area.
fn segment_meets_triangle(p: Vec3, q: Vec3, t: &Corners) -> bool {
    let [a, b, c] = *t;
    let (sp, sq) = (o3(a, b, c, p), o3(a, b, c, q));
    if sp * sq > 0.0 {
        return false;
    }
    if sp == 0.0 && sq == 0.0 {
        // in the triangle's plane: look at it in a coordinate plane where it keeps its area
        let k = (0..3)
            .find(|&k| o2(a, b, c, k) != 0.0)
            .expect("a triangle with area shows it in some coordinate plane");
        let inside = |x: Vec3| {
            let s = [o2(a, b, x, k), o2(b, c, x, k), o2(c, a, x, k)];
            !(s.iter().any(|&v| v > 0.0) && s.iter().any(|&v| v < 0.0))
        };
        return inside(p)
            || inside(q)
            || (0..3).any(|e| segments_meet_2d(p, q, t[e], t[(e + 1) % 3], k));
    }
    // the segment reaches the plane at one point: it is inside when the line passes on the same
    // side of every edge
    let s = [o3(p, q, a, b), o3(p, q, b, c), o3(p, q, c, a)];
    !(s.iter().any(|&v| v > 0.0) && s.iter().any(|&v| v < 0.0))
}

/// Whether segment pq meets triangle `t` (of any shape).
fn segment_meets(p: Vec3, q: Vec3, t: &Corners, flat: bool) -> bool {
    if flat {
        (0..3).any(|e| segments_meet(p, q, t[e], t[(e + 1) % 3]))
    } else {
        segment_meets_triangle(p, q, t)
    }
}

/// Whether closed triangles `a` and `b` have a point in common.
pub fn triangles_meet(a: &Corners, b: &Corners) -> bool {
    let (fa, fb) = (collinear(a), collinear(b));
    (0..3).any(|e| segment_meets(a[e], a[(e + 1) % 3], b, fb))
        || (0..3).any(|e| segment_meets(b[e], b[(e + 1) % 3], a, fa))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p: [[f32; 3]; 3]) -> Corners {
        p.map(Vec3::from_array)
    }

    #[test]
    fn crossing_touching_and_apart() {
        let base = t([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        // pierces the middle
        let pierce = t([[0.2, 0.2, -1.0], [0.3, 0.2, 1.0], [0.2, 0.3, 1.0]]);
        assert!(triangles_meet(&base, &pierce) && triangles_meet(&pierce, &base));
        // a corner resting exactly on the face
        let rest = t([[0.25, 0.25, 0.0], [0.3, 0.2, 1.0], [0.2, 0.3, 1.0]]);
        assert!(triangles_meet(&base, &rest));
        // the same lifted by the least float step: apart
        let lift = t([
            [0.25, 0.25, f32::MIN_POSITIVE],
            [0.3, 0.2, 1.0],
            [0.2, 0.3, 1.0],
        ]);
        assert!(!triangles_meet(&base, &lift));
        // beside the hypotenuse, exactly on it, and a float step past it
        let beside = |x: f32| t([[x, 0.5, -1.0], [x, 0.5, 1.0], [x + 1.0, 0.5, 0.0]]);
        assert!(triangles_meet(&base, &beside(0.5)));
        assert!(!triangles_meet(
            &base,
            &beside(f32::from_bits(0.5f32.to_bits() + 1))
        ));
        // sharing an edge, and sharing only a corner
        let edge = t([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.5]]);
        assert!(triangles_meet(&base, &edge));
        let corner = t([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0]]);
        assert!(triangles_meet(&base, &corner));
    }

    #[test]
    fn coplanar_overlap_containment_and_gap() {
        let big = t([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]]);
        let inner = t([[0.5, 0.5, 0.0], [1.0, 0.5, 0.0], [0.5, 1.0, 0.0]]);
        assert!(triangles_meet(&big, &inner) && triangles_meet(&inner, &big));
        let outside = t([[3.0, 3.0, 0.0], [4.0, 3.0, 0.0], [3.0, 4.0, 0.0]]);
        assert!(!triangles_meet(&big, &outside));
        // a slanted plane, to use another coordinate plane
        let a = t([[0.0, 0.0, 0.0], [4.0, 0.0, 4.0], [0.0, 4.0, 0.0]]);
        let b = t([[1.0, 1.0, 1.0], [5.0, 1.0, 5.0], [1.0, 5.0, 1.0]]);
        assert!(triangles_meet(&a, &b));
        let c = t([[3.0, 3.0, 3.0], [5.0, 3.0, 5.0], [3.0, 5.0, 3.0]]);
        assert!(!triangles_meet(&a, &c));
    }

    #[test]
    fn degenerate_triangles_are_their_edges() {
        let base = t([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        // a needle through the face, and one beside it
        let needle = t([[0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [0.2, 0.2, 0.5]]);
        assert!(triangles_meet(&base, &needle) && triangles_meet(&needle, &base));
        let beside = t([[2.0, 0.2, -1.0], [2.0, 0.2, 1.0], [2.0, 0.2, 0.5]]);
        assert!(!triangles_meet(&base, &beside));
        // two needles on one line, overlapping and apart
        let n1 = t([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]);
        let n2 = t([[0.75, 0.75, 0.75], [2.0, 2.0, 2.0], [1.5, 1.5, 1.5]]);
        let n3 = t([[1.25, 1.25, 1.25], [2.0, 2.0, 2.0], [1.5, 1.5, 1.5]]);
        assert!(triangles_meet(&n1, &n2));
        assert!(!triangles_meet(&n1, &n3));
        // a point on the face and beside it
        let on = t([[0.25, 0.25, 0.0]; 3]);
        let off = t([[0.25, 0.25, 0.5]; 3]);
        assert!(triangles_meet(&base, &on) && !triangles_meet(&base, &off));
    }
}
