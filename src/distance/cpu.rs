//! The least distance between two meshes on the CPU: the reference. Best-first search over pairs
//! of BVH nodes, the nearest box pair first; a pair of leaves is settled by its triangles' exact
//! distances. The search stops when the nearest pair left is farther than the best distance
//! found (by more than [`SLACK`]).

use super::bvh::Bvh;
use super::triangle::{box_lower2, tri_tri};
use super::{check, closest, corners, Closest, DistanceError, SLACK};
use crate::Mesh;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The least distance between `a` and `b` (their BVHs `ta`, `tb`, built from them).
pub fn min_distance(a: &Mesh, ta: &Bvh, b: &Mesh, tb: &Bvh) -> Closest {
    // best: squared distance and least pair at it
    let mut best = (f64::INFINITY, [u32::MAX; 2]);
    let mut tested = 0u64;
    // entries: (lower bound's bits, node of a, node of b); positive doubles order as their bits
    let mut heap = BinaryHeap::new();
    heap.push(Reverse((
        box_lower2(&ta.boxes[0], &tb.boxes[0]).to_bits(),
        0usize,
        0usize,
    )));
    let keep = |lower: f64, best: f64| lower <= best * (1.0 + SLACK);
    while let Some(Reverse((lower, na, nb))) = heap.pop() {
        if !keep(f64::from_bits(lower), best.0) {
            break;
        }
        let (la, lb) = (Bvh::level(na) == ta.depth, Bvh::level(nb) == tb.depth);
        if la && lb {
            for &i in ta.leaf(na) {
                let ca = corners(a, i);
                for &j in tb.leaf(nb) {
                    let d = tri_tri(&ca, &corners(b, j)).0;
                    tested += 1;
                    if d < best.0 || (d == best.0 && [i, j] < best.1) {
                        best = (d, [i, j]);
                    }
                }
            }
            continue;
        }
        // split the node whose box is larger (a leaf is never split)
        let diag = |b: &super::triangle::Aabb| {
            (0..3)
                .map(|k| (b[1][k] - b[0][k]) as f64)
                .map(|x| x * x)
                .sum::<f64>()
        };
        let split_a = !la && (lb || diag(&ta.boxes[na]) >= diag(&tb.boxes[nb]));
        let children = if split_a {
            [(2 * na + 1, nb), (2 * na + 2, nb)]
        } else {
            [(na, 2 * nb + 1), (na, 2 * nb + 2)]
        };
        for (ca, cb) in children {
            let l = box_lower2(&ta.boxes[ca], &tb.boxes[cb]);
            if keep(l, best.0) {
                heap.push(Reverse((l.to_bits(), ca, cb)));
            }
        }
    }
    closest(a, b, best.1, tested)
}

/// [`min_distance`] from the meshes: checked, their BVHs built.
pub fn run(a: &Mesh, b: &Mesh) -> Result<Closest, DistanceError> {
    check(a)?;
    check(b)?;
    let (ta, tb) = rayon::join(|| Bvh::build(a), || Bvh::build(b));
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
            let mut best = (f64::INFINITY, [u32::MAX; 2]);
            for j in 0..nb {
                let d = tri_tri(&ca, &corners(b, j)).0;
                if d < best.0 {
                    best = (d, [i, j]);
                }
            }
            best
        })
        .reduce(
            || (f64::INFINITY, [u32::MAX; 2]),
            |x, y| {
                if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
                    y
                } else {
                    x
                }
            },
        );
    let n = a.triangle_count() as u64 * nb as u64;
    Ok(closest(a, b, best.1, n))
}
