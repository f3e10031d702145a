//! The least distance between two meshes on the CPU: the reference. The pairs of BVH nodes are
//! expanded breadth first from the roots until there are enough to share among the threads (as
//! on the GPU), then each is searched depth first, the nearer child pair first; a pair of leaves
//! is settled by its triangles' exact distances. All threads prune against one upper bound, the
//! least of the boxes' enhanced bounds and the distances found, kept in an atomic.

use super::bvh::Bvh;
use super::triangle::{box_lower2, box_upper2, tri_tri};
use super::{check, closest, corners, Closest, DistanceError, SLACK};
use crate::Mesh;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many node pairs the breadth-first start aims for before the threads take them.
const START: usize = 4096;

/// The best found so far: squared distance, least pair at it, pairs measured.
type Best = (f64, [u32; 2], u64);

const NONE: Best = (f64::INFINITY, [u32::MAX; 2], 0);

/// The better of two bests (the least distance, then the least pair), pairs measured summed.
fn better(x: Best, y: Best) -> Best {
    let n = x.2 + y.2;
    if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
        (y.0, y.1, n)
    } else {
        (x.0, x.1, n)
    }
}

/// What every thread of a search reads: the meshes, their trees and the shared upper bound
/// (squared, as bits: positive doubles order as their bits).
struct Search<'a> {
    a: &'a Mesh,
    ta: &'a Bvh,
    b: &'a Mesh,
    tb: &'a Bvh,
    upper: AtomicU64,
}

impl Search<'_> {
    fn keep(&self, lower: f64) -> bool {
        lower <= f64::from_bits(self.upper.load(Ordering::Relaxed)) * (1.0 + SLACK)
    }

    fn lower(&self, na: usize, nb: usize) -> f64 {
        box_lower2(&self.ta.boxes[na], &self.tb.boxes[nb])
    }

    /// The child pairs of (na, nb): the node with the larger box split (a leaf never is);
    /// `None` for a pair of leaves.
    fn children(&self, na: usize, nb: usize) -> Option<[(usize, usize); 2]> {
        let (la, lb) = (
            Bvh::level(na) == self.ta.depth,
            Bvh::level(nb) == self.tb.depth,
        );
        if la && lb {
            return None;
        }
        let diag = |b: &super::triangle::Aabb| {
            (0..3)
                .map(|k| (b[1][k] - b[0][k]) as f64)
                .map(|x| x * x)
                .sum::<f64>()
        };
        let split_a = !la && (lb || diag(&self.ta.boxes[na]) >= diag(&self.tb.boxes[nb]));
        Some(if split_a {
            [(2 * na + 1, nb), (2 * na + 2, nb)]
        } else {
            [(na, 2 * nb + 1), (na, 2 * nb + 2)]
        })
    }

    /// Two child pairs with their boxes' lower bounds, the nearer pair first.
    fn nearer_first(&self, kids: [(usize, usize); 2]) -> ([(usize, usize); 2], [f64; 2]) {
        let l = kids.map(|(x, y)| self.lower(x, y));
        if l[1] < l[0] {
            ([kids[1], kids[0]], [l[1], l[0]])
        } else {
            (kids, l)
        }
    }

    /// Lowers the shared upper bound to `v` (squared) where it is lower.
    fn lower_upper(&self, v: f64) {
        self.upper.fetch_min(v.to_bits(), Ordering::Relaxed);
    }

    /// Depth-first search below the pair (na, nb), whose boxes' lower bound is `lower`.
    fn descend(&self, na: usize, nb: usize, lower: f64, best: &mut Best) {
        if !self.keep(lower) {
            return;
        }
        let Some(kids) = self.children(na, nb) else {
            for &i in self.ta.leaf(na) {
                let ca = corners(self.a, i);
                for &j in self.tb.leaf(nb) {
                    let d = tri_tri(&ca, &corners(self.b, j)).0;
                    *best = better(*best, (d, [i, j], 1));
                }
            }
            self.lower_upper(best.0);
            return;
        };
        let (kids, l) = self.nearer_first(kids);
        for ((x, y), l) in kids.into_iter().zip(l) {
            self.descend(x, y, l, best);
        }
    }
}

/// The least distance between `a` and `b` (their BVHs `ta`, `tb`, built from them).
pub fn min_distance(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh) -> Closest {
    min_distance_within(a, ta, b, tb, f64::INFINITY).expect("a search without a cap finds a pair")
}

/// [`min_distance`] where it is at most `cap`, else `None` (or, rarely, a distance above `cap`:
/// a pair the culling's slack let through). The search starts with `cap` as its upper bound, so
/// the node pairs farther apart than it are culled from the first: objects far apart cost a few
/// box tests. Where the distance is at most `cap` the result is [`min_distance`]'s, to the bit.
pub fn min_distance_within(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh, cap: f64) -> Option<Closest> {
    let s = Search {
        a,
        ta,
        b,
        tb,
        upper: AtomicU64::new((cap * cap).to_bits()),
    };
    if !s.keep(s.lower(0, 0)) {
        return None;
    }
    // breadth first until the front is large enough to share (or all leaves), each pair's
    // enhanced bound lowering the upper bound
    let mut front = vec![(0usize, 0usize)];
    s.lower_upper(box_upper2(&ta.boxes[0], &tb.boxes[0]));
    while front.len() < START {
        let mut next = Vec::with_capacity(2 * front.len());
        let mut split = false;
        for &(na, nb) in &front {
            match s.children(na, nb) {
                None => next.push((na, nb)),
                Some(kids) => {
                    split = true;
                    for (x, y) in kids {
                        s.lower_upper(box_upper2(&ta.boxes[x], &tb.boxes[y]));
                        next.push((x, y));
                    }
                }
            }
        }
        next.retain(|&(x, y)| s.keep(s.lower(x, y)));
        front = next;
        if !split {
            break;
        }
    }
    // nearest first, so the first results lower the bound for the rest
    let mut front: Vec<(f64, usize, usize)> = front
        .into_iter()
        .map(|(x, y)| (s.lower(x, y), x, y))
        .collect();
    front.sort_by(|p, q| p.0.total_cmp(&q.0));
    let best = front
        .par_iter()
        .with_max_len(1)
        .map(|&(l, x, y)| {
            let mut best = NONE;
            s.descend(x, y, l, &mut best);
            best
        })
        .reduce(|| NONE, better);
    (best.1 != NONE.1).then(|| closest(a, b, best.1, best.2))
}

/// Whether some triangle of `a` comes within `cap` of some triangle of `b` (a tolerance query:
/// is the least distance at most `cap`?): a pair of triangles whose exact squared distance is at
/// most `cap * cap`. The node pairs are searched depth first, the nearer child pair first, and the
/// search ends at the first such pair; a node pair is culled when its boxes' gap exceeds `cap`
/// (by more than [`SLACK`], as in [`min_distance`]). Far cheaper than the least distance where
/// the meshes cross or nearly touch, where many pairs lie at about the least distance. The
/// answer is whether the least squared distance (before [`min_distance`] takes its root) is at
/// most `cap * cap`, whatever the search's order.
pub fn within(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh, cap: f64) -> bool {
    let s = Search {
        a,
        ta,
        b,
        tb,
        upper: AtomicU64::new((cap * cap).to_bits()),
    };
    let found = std::sync::atomic::AtomicBool::new(false);
    s.any(0, 0, s.lower(0, 0), cap * cap, &found);
    found.into_inner()
}

impl Search<'_> {
    /// [`within`] below (na, nb), whose boxes' lower bound is `lower`: sets `found` at the first
    /// triangle pair within `cap2` (squared); the first levels' two child pairs in parallel.
    fn any(
        &self,
        na: usize,
        nb: usize,
        lower: f64,
        cap2: f64,
        found: &std::sync::atomic::AtomicBool,
    ) {
        if found.load(Ordering::Relaxed) || !self.keep(lower) {
            return;
        }
        let Some(kids) = self.children(na, nb) else {
            for &i in self.ta.leaf(na) {
                let ca = corners(self.a, i);
                for &j in self.tb.leaf(nb) {
                    if tri_tri(&ca, &corners(self.b, j)).0 <= cap2 {
                        found.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            }
            return;
        };
        let (kids, l) = self.nearer_first(kids);
        let go = |k: usize| self.any(kids[k].0, kids[k].1, l[k], cap2, found);
        if Bvh::level(na) + Bvh::level(nb) < PARALLEL_LEVELS {
            rayon::join(|| go(0), || go(1));
        } else {
            go(0);
            go(1);
        }
    }
}

/// How many levels (of both trees together) from the roots [`within`] splits between threads.
const PARALLEL_LEVELS: u32 = 8;

/// [`min_distance`] from the meshes: checked, their BVHs built.
pub fn run(a: &Mesh, b: &Mesh) -> Result<Closest, DistanceError> {
    let (ta, tb) = rayon::join(|| Bvh::build(a), || Bvh::build(b));
    let (ta, tb) = (ta?, tb?);
    Ok(min_distance(a, &ta, b, &tb))
}

/// Every pair of triangles (for tests and small meshes): the least distance and the least pair
/// at it.
pub fn brute_force(a: &Mesh, b: &Mesh) -> Result<Closest, DistanceError> {
    check(a)?;
    check(b)?;
    let nb = b.triangle_count() as u32;
    let best = (0..a.triangle_count() as u32)
        .into_par_iter()
        .map(|i| {
            let ca = corners(a, i);
            (0..nb).fold(NONE, |best, j| {
                better(best, (tri_tri(&ca, &corners(b, j)).0, [i, j], 1))
            })
        })
        .reduce(|| NONE, better);
    Ok(closest(a, b, best.1, best.2))
}
