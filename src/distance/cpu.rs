//! The least and the greatest distance between two meshes on the CPU: the reference. The pairs
//! of BVH nodes are expanded breadth first from the roots until there are enough to share among
//! the threads (as on the GPU), then each is searched depth first, the more promising child pair
//! first; a pair of leaves is settled by its triangles' exact distances. All threads prune
//! against one bound, the best of the boxes' sure bounds and the distances found, kept in an
//! atomic.
//!
//! One search serves both goals ([`Goal`]): for the least distance a pair of nodes hopes for its
//! boxes' gap and surely reaches gDist's enhanced upper bound; for the greatest it hopes for its
//! boxes' farthest corners and surely reaches the farthest pair of their faces. Bounds and
//! results are kept as keys ([`Goal::key`]) that order the better distance first in both.

use super::bvh::Bvh;
use super::triangle::{box_far2, box_lower2, box_near_far2, box_upper2, tri_far2, tri_tri, Aabb};
use super::{check, closest, corners, farthest, Closest, DistanceError, Farthest, SLACK};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many node pairs the breadth-first start aims for per thread before the threads take
/// them: enough for the threads to share the work, few enough that the start, which measures no
/// triangles and computes a sure bound for most pairs, stays short.
const START_PER_THREAD: usize = 32;

/// What a search looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// the least distance between the meshes (their separation)
    Least,
    /// the greatest distance between a point of one and a point of the other (their span)
    Greatest,
}

impl Goal {
    /// A squared distance as a key that orders the better distance first: its bits for the least
    /// (non-negative doubles order as their bits), their complement for the greatest.
    #[inline]
    pub fn key(self, d2: f64) -> u64 {
        match self {
            Goal::Least => d2.to_bits(),
            Goal::Greatest => !d2.to_bits(),
        }
    }

    /// The squared distance of a key.
    #[inline]
    pub fn value(self, key: u64) -> f64 {
        match self {
            Goal::Least => f64::from_bits(key),
            Goal::Greatest => f64::from_bits(!key),
        }
    }

    /// The best that a pair of nodes with boxes `a` and `b` could hold (squared): the boxes' gap
    /// for the least distance, their farthest corners for the greatest.
    #[inline]
    fn hope(self, a: &Aabb, b: &Aabb) -> f64 {
        match self {
            Goal::Least => box_lower2(a, b),
            Goal::Greatest => box_far2(a, b),
        }
    }

    /// What a pair of nodes with tight boxes `a` and `b` surely holds (squared): gDist's enhanced
    /// bounds.
    #[inline]
    fn sure(self, a: &Aabb, b: &Aabb) -> f64 {
        match self {
            Goal::Least => box_upper2(a, b),
            Goal::Greatest => box_near_far2(a, b),
        }
    }

    /// Whether a pair hoping for `hope` may still matter when `bound` is reached (both squared),
    /// culled only beyond the relative factor `keep`: 1 + [`SLACK`] against what is surely
    /// reached, [`super::rel_keep`] against what was measured.
    #[inline]
    fn keep(self, hope: f64, bound: f64, keep: f64) -> bool {
        match self {
            Goal::Least => hope <= bound * keep,
            Goal::Greatest => hope * keep >= bound,
        }
    }

    /// The worst squared distance: where a search's bounds start.
    pub fn worst(self) -> f64 {
        match self {
            Goal::Least => f64::INFINITY,
            Goal::Greatest => 0.0,
        }
    }

    /// The squared distance of two triangles for this goal.
    #[inline]
    fn pair(self, a: &super::triangle::Tri, b: &super::triangle::Tri) -> f64 {
        match self {
            Goal::Least => tri_tri(a, b).0,
            Goal::Greatest => tri_far2(a, b).0,
        }
    }
}

/// The best found so far: the distance's key, the least pair at it, pairs measured.
type Best = (u64, [u32; 2], u64);

const NONE: Best = (u64::MAX, [u32::MAX; 2], 0);

/// The better of two bests (the better key, then the least pair), pairs measured summed.
fn better(x: Best, y: Best) -> Best {
    let n = x.2 + y.2;
    if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
        (y.0, y.1, n)
    } else {
        (x.0, x.1, n)
    }
}

/// What every thread of a search reads: the goal, the meshes, their trees and the shared bounds
/// (keys: of the best squared distance surely reached, and of the best measured between two
/// triangles), the factor of culling against the measured one ([`super::rel_keep`]), and where
/// the pairs measured are counted for a watcher, if one asked.
struct Search<'a> {
    goal: Goal,
    a: &'a Mesh,
    ta: &'a Bvh,
    b: &'a Mesh,
    tb: &'a Bvh,
    bound: AtomicU64,
    found: AtomicU64,
    keep_rel: f64,
    watch: Option<&'a AtomicU64>,
}

impl<'a> Search<'a> {
    /// A search for `goal` from the bound `start` (squared), within the relative error whose
    /// factor is `keep_rel` ([`super::rel_keep`]).
    fn new(
        goal: Goal,
        (a, ta): (&'a Mesh, &'a Bvh),
        (b, tb): (&'a Mesh, &'a Bvh),
        start: f64,
        keep_rel: f64,
    ) -> Search<'a> {
        Search {
            goal,
            a,
            ta,
            b,
            tb,
            bound: AtomicU64::new(goal.key(start)),
            found: AtomicU64::new(goal.key(goal.worst())),
            keep_rel,
            watch: None,
        }
    }

    /// The search with its pairs measured counted into `watch` as it goes.
    fn watched(mut self, watch: Option<&'a AtomicU64>) -> Search<'a> {
        self.watch = watch;
        self
    }
}

impl Search<'_> {
    /// Whether the search is over: the least distance found is 0, which nothing can beat (the
    /// meshes touch or cross). Every thread stops at its next node pair, so crossing meshes
    /// answer after the first crossing pair of triangles found; which one of several crossing
    /// pairs that is depends on the threads' order.
    fn over(&self) -> bool {
        self.goal == Goal::Least && self.found.load(Ordering::Relaxed) == Goal::Least.key(0.0)
    }

    fn keep(&self, hope: f64) -> bool {
        let value = |k: &AtomicU64| self.goal.value(k.load(Ordering::Relaxed));
        !self.over()
            && self.goal.keep(hope, value(&self.bound), 1.0 + SLACK)
            && self.goal.keep(hope, value(&self.found), self.keep_rel)
    }

    fn hope(&self, na: usize, nb: usize) -> f64 {
        self.goal.hope(&self.ta.boxes[na], &self.tb.boxes[nb])
    }

    /// Tightens the shared bound with the sure bound of the pair (na, nb).
    fn sure(&self, na: usize, nb: usize) {
        self.tighten(self.goal.sure(&self.ta.boxes[na], &self.tb.boxes[nb]));
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
        let diag = |b: &Aabb| {
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

    /// Two child pairs with their hopes, the more promising pair first.
    fn best_first(&self, kids: [(usize, usize); 2]) -> ([(usize, usize); 2], [f64; 2]) {
        let h = kids.map(|(x, y)| self.hope(x, y));
        if self.goal.key(h[1]) < self.goal.key(h[0]) {
            ([kids[1], kids[0]], [h[1], h[0]])
        } else {
            (kids, h)
        }
    }

    /// Tightens the shared bound to the squared distance `v` where `v` is better.
    fn tighten(&self, v: f64) {
        self.bound.fetch_min(self.goal.key(v), Ordering::Relaxed);
    }

    /// Depth-first search below the pair (na, nb), whose boxes' hope is `hope`.
    fn descend(&self, na: usize, nb: usize, hope: f64, best: &mut Best) {
        if !self.keep(hope) {
            return;
        }
        let Some(kids) = self.children(na, nb) else {
            let before = best.2;
            for &i in self.ta.leaf(na) {
                let ca = corners(self.a, i);
                for &j in self.tb.leaf(nb) {
                    let d = self.goal.pair(&ca, &corners(self.b, j));
                    *best = better(*best, (self.goal.key(d), [i, j], 1));
                }
            }
            if let Some(w) = self.watch {
                w.fetch_add(best.2 - before, Ordering::Relaxed);
            }
            self.tighten(self.goal.value(best.0));
            self.found.fetch_min(best.0, Ordering::Relaxed);
            return;
        };
        let (kids, h) = self.best_first(kids);
        for ((x, y), h) in kids.into_iter().zip(h) {
            self.descend(x, y, h, best);
        }
    }

    /// The whole search from the roots: the best pair of triangles, if one survives the bound
    /// the search starts with.
    fn run(&self) -> Option<Best> {
        if !self.keep(self.hope(0, 0)) {
            return None;
        }
        // breadth first until the front is large enough to share (or all leaves), each pair's
        // sure bound tightening the bound where its hope beats it (a pair surely holds no more
        // than it hopes for, so the others cannot tighten it)
        let mut front = vec![(self.hope(0, 0), 0usize, 0usize)];
        self.sure(0, 0);
        let start = START_PER_THREAD * rayon::current_num_threads().max(1);
        while front.len() < start {
            let mut next = Vec::with_capacity(2 * front.len());
            let mut split = false;
            for &(h, na, nb) in &front {
                match self.children(na, nb) {
                    None => next.push((h, na, nb)),
                    Some(kids) => {
                        split = true;
                        for (x, y) in kids {
                            let h = self.hope(x, y);
                            if self.goal.key(h) < self.bound.load(Ordering::Relaxed) {
                                self.sure(x, y);
                            }
                            next.push((h, x, y));
                        }
                    }
                }
            }
            next.retain(|&(h, _, _)| self.keep(h));
            front = next;
            if !split {
                break;
            }
        }
        // the most promising first, so that the first results tighten the bound for the rest
        front.sort_by_key(|p| self.goal.key(p.0));
        let best = front
            .par_iter()
            .with_max_len(1)
            .map(|&(h, x, y)| {
                let mut best = NONE;
                self.descend(x, y, h, &mut best);
                best
            })
            .reduce(|| NONE, better);
        (best.1 != NONE.1).then_some(best)
    }
}

/// The least distance between `a` and `b` (their BVHs `ta`, `tb`, built from them).
pub fn min_distance(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh) -> Closest {
    min_distance_within(a, ta, b, tb, f64::INFINITY).expect("a search without a cap finds a pair")
}

/// [`min_distance`] within the relative error `rel`: a pair of triangles whose distance is at
/// most 1 + `rel` times the least ([`super::rel_keep`], which names a `rel` out of range).
/// Where many pairs lie near the least distance (nested spheres) it measures far fewer.
pub fn min_distance_rel(
    a: &Mesh,
    ta: &Bvh,
    b: &Mesh,
    tb: &Bvh,
    rel: f64,
) -> Result<Closest, DistanceError> {
    min_distance_watched(a, ta, b, tb, rel, None)
}

/// [`min_distance_rel`] counting the triangle pairs it measures into `watch` as it goes, for a
/// caller that shows a long search's progress from another thread.
pub fn min_distance_watched(
    a: &Mesh,
    ta: &Bvh,
    b: &Mesh,
    tb: &Bvh,
    rel: f64,
    watch: Option<&AtomicU64>,
) -> Result<Closest, DistanceError> {
    let best = whole_search(Goal::Least, (a, ta), (b, tb), rel, watch)?;
    Ok(closest(a, b, best.1, best.2))
}

/// The whole search for `goal` within the relative error `rel`, from no bound, its pairs
/// counted into `watch`: the best pair of triangles.
fn whole_search(
    goal: Goal,
    a: (&Mesh, &Bvh),
    b: (&Mesh, &Bvh),
    rel: f64,
    watch: Option<&AtomicU64>,
) -> Result<Best, DistanceError> {
    let s = Search::new(goal, a, b, goal.worst(), super::rel_keep(rel)?).watched(watch);
    Ok(s.run().expect("a search from no bound finds a pair"))
}

/// [`min_distance`] where it is at most `cap`, else `None` (or, rarely, a distance above `cap`:
/// a pair the culling's slack let through). The search starts with `cap` as its upper bound, so
/// the node pairs farther apart than it are culled from the first: objects far apart cost a few
/// box tests. Where the distance is at most `cap` the result is [`min_distance`]'s, to the bit.
pub fn min_distance_within(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh, cap: f64) -> Option<Closest> {
    let s = Search::new(Goal::Least, (a, ta), (b, tb), cap * cap, 1.0 + SLACK);
    s.run().map(|best| closest(a, b, best.1, best.2))
}

/// The greatest distance between a point of `a` and a point of `b` (their BVHs `ta`, `tb`,
/// built from them): gDist's maximum distance, reached at a corner of each.
pub fn max_distance(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh) -> Farthest {
    max_distance_rel(a, ta, b, tb, 0.0).expect("0 is a relative error")
}

/// [`max_distance`] within the relative error `rel`: a pair of triangles whose greatest
/// distance is at least the greatest over 1 + `rel` ([`super::rel_keep`], which names a `rel`
/// out of range).
pub fn max_distance_rel(
    a: &Mesh,
    ta: &Bvh,
    b: &Mesh,
    tb: &Bvh,
    rel: f64,
) -> Result<Farthest, DistanceError> {
    max_distance_watched(a, ta, b, tb, rel, None)
}

/// [`max_distance_rel`] counting the triangle pairs it measures into `watch` as it goes.
pub fn max_distance_watched(
    a: &Mesh,
    ta: &Bvh,
    b: &Mesh,
    tb: &Bvh,
    rel: f64,
    watch: Option<&AtomicU64>,
) -> Result<Farthest, DistanceError> {
    let best = whole_search(Goal::Greatest, (a, ta), (b, tb), rel, watch)?;
    Ok(farthest(a, b, best.1, best.2))
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
    let s = Search::new(Goal::Least, (a, ta), (b, tb), cap * cap, 1.0 + SLACK);
    let found = std::sync::atomic::AtomicBool::new(false);
    s.any(0, 0, s.hope(0, 0), cap * cap, &found);
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
        let (kids, l) = self.best_first(kids);
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
    run_rel(a, b, 0.0)
}

/// [`max_distance`] from the meshes: checked, their BVHs built.
pub fn run_max(a: &Mesh, b: &Mesh) -> Result<Farthest, DistanceError> {
    run_max_rel(a, b, 0.0)
}

/// [`min_distance_rel`] from the meshes: checked, their BVHs built.
pub fn run_rel(a: &Mesh, b: &Mesh, rel: f64) -> Result<Closest, DistanceError> {
    run_watched(a, b, rel, None)
}

/// [`max_distance_rel`] from the meshes: checked, their BVHs built.
pub fn run_max_rel(a: &Mesh, b: &Mesh, rel: f64) -> Result<Farthest, DistanceError> {
    run_max_watched(a, b, rel, None)
}

/// [`run_rel`] counting the pairs measured into `watch` ([`min_distance_watched`]).
pub fn run_watched(
    a: &Mesh,
    b: &Mesh,
    rel: f64,
    watch: Option<&AtomicU64>,
) -> Result<Closest, DistanceError> {
    let (ta, tb) = trees(a, b, rel)?;
    min_distance_watched(a, &ta, b, &tb, rel, watch)
}

/// Both meshes' trees, once `rel` is known to be a relative error (before the work).
fn trees(a: &Mesh, b: &Mesh, rel: f64) -> Result<(Bvh, Bvh), DistanceError> {
    super::rel_keep(rel)?;
    Bvh::build_pair(a, b)
}

/// [`run_max_rel`] counting the pairs measured into `watch` ([`max_distance_watched`]).
pub fn run_max_watched(
    a: &Mesh,
    b: &Mesh,
    rel: f64,
    watch: Option<&AtomicU64>,
) -> Result<Farthest, DistanceError> {
    let (ta, tb) = trees(a, b, rel)?;
    max_distance_watched(a, &ta, b, &tb, rel, watch)
}

/// Every pair of triangles for `goal` (for tests and small meshes): the best and the least pair
/// at it.
fn every_pair(goal: Goal, a: &Mesh, b: &Mesh) -> Result<Best, DistanceError> {
    check(a)?;
    check(b)?;
    let nb = b.triangle_count() as u32;
    Ok((0..a.triangle_count() as u32)
        .into_par_iter()
        .map(|i| {
            let ca = corners(a, i);
            (0..nb).fold(NONE, |best, j| {
                let d = goal.pair(&ca, &corners(b, j));
                better(best, (goal.key(d), [i, j], 1))
            })
        })
        .reduce(|| NONE, better))
}

/// Every pair of triangles (for tests and small meshes): the least distance and the least pair
/// at it.
pub fn brute_force(a: &Mesh, b: &Mesh) -> Result<Closest, DistanceError> {
    let best = every_pair(Goal::Least, a, b)?;
    Ok(closest(a, b, best.1, best.2))
}

/// Every pair of triangles (for tests and small meshes): the greatest distance and the least
/// pair at it.
pub fn brute_force_max(a: &Mesh, b: &Mesh) -> Result<Farthest, DistanceError> {
    let best = every_pair(Goal::Greatest, a, b)?;
    Ok(farthest(a, b, best.1, best.2))
}
