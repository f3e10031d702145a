//! Whether a triangle lies within a distance ε of a set of triangles: the envelope test of the
//! simplification stage.
//!
//! The distance from a point to one triangle is a convex function of the point (the triangle is
//! a convex set), so over a triangle T it is greatest at one of T's corners. Hence T lies within ε
//! of a triangle c as soon as its three corners do, and it lies within ε of a set of triangles as
//! soon as it can be cut into pieces that each have one such triangle of the set. [`cover`] looks
//! for that certificate: it tries the whole triangle, then splits a piece that no single triangle
//! covers into four at its edges' midpoints, down to [`MAX_DEPTH`] levels. A piece corner that is
//! farther than ε from every triangle of the set refutes the whole triangle at once.
//!
//! The test is exact but for the rounding of double-precision arithmetic: a covered triangle's
//! every point is within ε, and a refuted one has a point beyond it. It is conservative where it
//! gives up (a triangle that touches the border of the envelope along a curve may need more
//! levels than it is given): [`Cover::Undecided`] is treated as not covered.

pub use crate::distance::triangle::point_dist2;
use crate::distance::triangle::{point_segment_dist2, Aabb, Tri};
use glam::DVec3;

/// How many times a piece may be split in four before the test gives up.
pub const MAX_DEPTH: u32 = 6;

/// The most pieces one test examines before it gives up.
pub const MAX_PIECES: usize = 1024;

/// What [`cover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cover {
    /// every point is within ε: the indices (into the candidates) of the triangles the pieces
    /// were certified by, each once
    Inside(Vec<u32>),
    /// a point of the triangle is farther than ε from every candidate
    Outside,
    /// neither shown within the test's depth and piece budget
    Undecided,
}

/// Whether `t` lies within `eps2.sqrt()` of the union of `candidates` ([`Cover`]). The caller
/// promises, through `complete`, that the candidates hold every triangle of the surface within ε
/// of `t`: only then does a corner beyond every candidate refute `t` ([`Cover::Outside`]);
/// otherwise such a corner only means that these candidates do not cover it
/// ([`Cover::Undecided`]).
pub fn cover(t: &Tri, candidates: &[Tri], eps2: f64, complete: bool) -> Cover {
    let boxes: Vec<[DVec3; 2]> = candidates.iter().map(tri_box).collect();
    let near: Vec<Near> = candidates.iter().map(Near::new).collect();
    let within = |p: DVec3, j: u32| near[j as usize].within(p, eps2);
    // the squared gap between two boxes
    let gap2 = |a: &[DVec3; 2], b: &[DVec3; 2]| {
        (a[0] - b[1])
            .max(b[0] - a[1])
            .max(DVec3::ZERO)
            .length_squared()
    };
    let mut used: Vec<u32> = Vec::new();
    // each piece's candidates: those whose boxes come within ε of its box, narrowed from its
    // parent's (a piece lies inside its parent), kept one after another in `lists`
    let mut lists: Vec<u32> = Vec::new();
    let mut stack: Vec<(Tri, u32, std::ops::Range<usize>)> = vec![(*t, 0, 0..candidates.len())];
    let mut root = true;
    let mut pieces = 0usize;
    let mut reach: Vec<u32> = Vec::new();
    while let Some((piece, depth, parent)) = stack.pop() {
        pieces += 1;
        if pieces > MAX_PIECES {
            return Cover::Undecided;
        }
        // the candidate that covered the last piece mostly covers its neighbour too
        if let Some(&j) = used.last() {
            if piece.iter().all(|&p| within(p, j)) {
                // (its list is not needed: a covered piece has no children)
                continue;
            }
        }
        let pbox = tri_box(&piece);
        let start = lists.len();
        if root {
            lists.extend(
                (0..candidates.len() as u32).filter(|&j| gap2(&pbox, &boxes[j as usize]) <= eps2),
            );
            root = false;
        } else {
            for k in parent {
                let j = lists[k];
                if gap2(&pbox, &boxes[j as usize]) <= eps2 {
                    lists.push(j);
                }
            }
        }
        let mine = start..lists.len();
        // the candidates within ε of the first corner, narrowed by the others
        reach.clear();
        reach.extend(
            lists[mine.clone()]
                .iter()
                .copied()
                .filter(|&j| within(piece[0], j)),
        );
        let mut unreached = reach.is_empty();
        for &p in &piece[1..] {
            if reach.is_empty() {
                break;
            }
            reach.retain(|&j| within(p, j));
            // no common candidate: is this corner beyond all of them?
            unreached = reach.is_empty() && !lists[mine.clone()].iter().any(|&j| within(p, j));
        }
        if unreached {
            // a corner that no candidate reaches: beyond ε of the surface when the set is
            // complete
            return if complete {
                Cover::Outside
            } else {
                Cover::Undecided
            };
        }
        if let Some(&j) = reach.first() {
            // the last used stays last: it is tried first on the next piece
            used.retain(|&k| k != j);
            used.push(j);
            continue;
        }
        if depth == MAX_DEPTH {
            return Cover::Undecided;
        }
        let [a, b, c] = piece;
        let (ab, bc, ca) = ((a + b) * 0.5, (b + c) * 0.5, (c + a) * 0.5);
        for q in [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]] {
            stack.push((q, depth + 1, mine.clone()));
        }
    }
    Cover::Inside(used)
}

/// A triangle prepared for asking whether points are within a distance of it.
struct Near {
    corners: Tri,
    /// the unit normal; zero for a triangle with no area
    normal: DVec3,
    /// for each edge k (corner k to k + 1), a vector in the plane across it, inwards
    inward: [DVec3; 3],
}

impl Near {
    fn new(t: &Tri) -> Near {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let len = n.length();
        let normal = if len > 0.0 { n / len } else { DVec3::ZERO };
        Near {
            corners: *t,
            normal,
            inward: std::array::from_fn(|k| normal.cross(t[(k + 1) % 3] - t[k])),
        }
    }

    /// Whether `p` is within `eps2.sqrt()` of the triangle: its height over the plane first,
    /// then whether it lies over the triangle (the distance is the height) or beside an edge
    /// (the distance is the nearest of those edges').
    fn within(&self, p: DVec3, eps2: f64) -> bool {
        let t = &self.corners;
        if self.normal == DVec3::ZERO {
            return point_dist2(p, t) <= eps2;
        }
        let h = self.normal.dot(p - t[0]);
        if h * h > eps2 {
            return false;
        }
        let mut best = f64::INFINITY;
        let mut over = true;
        for k in 0..3 {
            if self.inward[k].dot(p - t[k]) < 0.0 {
                over = false;
                best = best.min(point_segment_dist2(p, t[k], t[(k + 1) % 3]));
            }
        }
        if over {
            h * h <= eps2
        } else {
            best <= eps2
        }
    }
}

fn tri_box(t: &Tri) -> [DVec3; 2] {
    [t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2])]
}

/// The box of `t` widened by `eps` on every side, rounded outwards to single precision (the
/// trees' boxes), so that every point within `eps` of `t` lies in it.
pub fn widened_box(t: &Tri, eps: f64) -> Aabb {
    let lo = t[0].min(t[1]).min(t[2]) - DVec3::splat(eps);
    let hi = t[0].max(t[1]).max(t[2]) + DVec3::splat(eps);
    let out = |x: f64, up: bool| {
        let slack = x.abs() * 1e-6 + 1e-30;
        (if up { x + slack } else { x - slack }) as f32
    };
    [
        [out(lo.x, false), out(lo.y, false), out(lo.z, false)],
        [out(hi.x, true), out(hi.y, true), out(hi.z, true)],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(p: [[f64; 3]; 3]) -> Tri {
        p.map(DVec3::from_array)
    }

    #[test]
    fn a_triangle_is_covered_by_itself_and_by_its_halves() {
        let t = tri([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        assert_eq!(cover(&t, &[t], 0.0, true), Cover::Inside(vec![0]));
        // the two halves of a square, the triangle over both of them, lifted by 0.01
        let halves = [
            tri([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]),
            tri([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
        ];
        let over = tri([[0.0, 0.0, 0.01], [1.0, 0.0, 0.01], [0.0, 1.0, 0.01]]);
        match cover(&over, &halves, 0.05 * 0.05, true) {
            Cover::Inside(used) => assert_eq!(used.len(), 2, "{used:?}"),
            other => panic!("{other:?}"),
        }
        // at 0.0101 the pieces across the diagonal would have to be 0.0014 wide, deeper than
        // the test goes: it gives up (and the stage refuses), it does not claim either answer
        assert_eq!(
            cover(&over, &halves, 0.0101 * 0.0101, true),
            Cover::Undecided
        );
        // 0.01 above them is beyond 0.0099: refuted, as every corner is
        assert_eq!(cover(&over, &halves, 0.0099 * 0.0099, true), Cover::Outside);
        // the same without the promise of completeness only gives up
        assert_eq!(
            cover(&over, &halves, 0.0099 * 0.0099, false),
            Cover::Undecided
        );
    }

    #[test]
    fn a_bump_in_the_middle_is_found() {
        // a triangle in a plane, and three triangles of the plane that cover its corners but
        // leave a hole below y = 0.6 between x = 0.3 and 4: its edge's midpoint (2, 0) is 0.46
        // from the nearest of them, and no point of it is more than 0.6 from one
        let t = tri([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]]);
        let near = [
            tri([[-1.0, -1.0, 0.0], [0.6, -1.0, 0.0], [-1.0, 5.0, 0.0]]),
            tri([[0.6, -1.0, 0.0], [5.0, -1.0, 0.0], [5.0, 0.6, 0.0]]),
            tri([[-1.0, 0.6, 0.0], [5.0, 0.6, 0.0], [-1.0, 5.0, 0.0]]),
        ];
        assert_eq!(cover(&t, &near, 0.01, true), Cover::Outside);
        assert!(matches!(cover(&t, &near, 1.0, true), Cover::Inside(_)));
    }

    #[test]
    fn degenerate_triangles_measure_as_their_edges() {
        let line = tri([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
        assert!((point_dist2(DVec3::new(1.0, 3.0, 0.0), &line) - 9.0).abs() < 1e-12);
        let point = tri([[1.0, 1.0, 1.0]; 3]);
        assert!((point_dist2(DVec3::ZERO, &point) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_widened_box_holds_the_triangle_and_its_margin() {
        let t = tri([[1e6, -3.0, 0.5], [1e6 + 1.0, -2.0, 0.25], [1e6, -2.5, 0.75]]);
        let b = widened_box(&t, 0.1);
        for p in t {
            for k in 0..3 {
                assert!(b[0][k] as f64 <= p[k] - 0.1 && b[1][k] as f64 >= p[k] + 0.1);
            }
        }
    }
}
