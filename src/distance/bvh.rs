//! gDist's f12-BVH (section 7.3): a full binary tree over a mesh's triangles in Morton order,
//! each leaf holding one or two consecutive triangles, stored implicitly in breadth-first order
//! (node k's children are 2k + 1 and 2k + 2), each node only its box.

use super::triangle::Aabb;
use super::{check, DistanceError};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// A mesh's f12-BVH.
#[derive(Debug, Clone, PartialEq)]
pub struct Bvh {
    /// the tree's depth: 2^depth leaves, 2^(depth + 1) - 1 nodes
    pub depth: u32,
    /// each node's box, breadth first (the leaves last)
    pub boxes: Vec<Aabb>,
    /// the triangles in Morton order of their centroids; leaf i holds
    /// `order[leaf_start(i)..leaf_start(i + 1)]`
    pub order: Vec<u32>,
    /// the corners (vertex indices) of the triangles in `order`, kept so that a refit reads
    /// them in one sweep: gathered through `order` they are a random read of the mesh's
    /// indices, which a refit of many moved meshes finds out of cache
    corners: Vec<[u32; 3]>,
}

impl Bvh {
    /// The tree over `mesh`'s triangles, after [`check`]ing it (at least one triangle, indices
    /// in range, positions finite). Leaves are the least power of two of at least half the
    /// triangles, so each holds one or two of them.
    pub fn build(mesh: &Mesh) -> Result<Bvh, DistanceError> {
        check(mesh)?;
        Ok(Bvh::of_checked(mesh))
    }

    /// [`Bvh::build`] of two meshes at once (in parallel), as a query between them needs.
    pub fn build_pair(a: &Mesh, b: &Mesh) -> Result<(Bvh, Bvh), DistanceError> {
        let (ta, tb) = rayon::join(|| Bvh::build(a), || Bvh::build(b));
        Ok((ta?, tb?))
    }

    /// [`Bvh::build`] of a mesh that passed [`check`] (the benchmark checks once and times the
    /// building alone).
    pub fn of_checked(mesh: &Mesh) -> Bvh {
        let n = mesh.triangle_count();
        // Morton codes of the centroids on the mesh's box, 10 bits an axis
        let (lo, hi) = mesh.bounds().expect("a mesh with triangles has positions");
        let size = (hi - lo).max(glam::Vec3::splat(f32::MIN_POSITIVE));
        let mut keyed: Vec<(u32, u32)> = (0..n)
            .into_par_iter()
            .map(|t| {
                let b = tri_box(mesh, t);
                let c = (glam::Vec3::from(b[0]) + glam::Vec3::from(b[1])) * 0.5;
                let q =
                    ((c - lo) / size * 1023.0).clamp(glam::Vec3::ZERO, glam::Vec3::splat(1023.0));
                (morton(q.x as u32, q.y as u32, q.z as u32), t as u32)
            })
            .collect();
        keyed.par_sort_unstable();
        let depth = leaf_depth(n);
        let order: Vec<u32> = keyed.into_iter().map(|(_, t)| t).collect();
        let corners = order
            .iter()
            .map(|&t| std::array::from_fn(|k| mesh.indices[3 * t as usize + k]))
            .collect();
        let mut bvh = Bvh {
            depth,
            boxes: vec![[[0f32; 3]; 2]; (2usize << depth) - 1],
            order,
            corners,
        };
        bvh.refit(mesh);
        bvh
    }

    /// Sets every box from `mesh`'s positions, keeping the tree (its triangle order): after the
    /// mesh moved (placed in the world under a transform, or its vertices posed), the boxes are
    /// tight again at the cost of one pass over the triangles and none of the building's sort.
    /// `mesh` has the triangles the tree was built over (the same indices; positions may differ):
    /// the corners are the tree's own, kept in its order, so only `mesh`'s positions are read.
    pub fn refit(&mut self, mesh: &Mesh) {
        assert_eq!(
            mesh.triangle_count(),
            self.order.len(),
            "a tree refits over the triangles it was built for"
        );
        let (n, depth) = (self.order.len(), self.depth);
        let first_leaf = (1usize << depth) - 1;
        let corners = &self.corners;
        self.boxes[first_leaf..]
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, b)| {
                let tris = &corners[leaf_start(n, depth, i)..leaf_start(n, depth, i + 1)];
                *b = tris
                    .iter()
                    .map(|c| corners_box(c.map(|v| mesh.positions[v as usize])))
                    .reduce(union)
                    .expect("every leaf holds a triangle");
            });
        for k in (0..first_leaf).rev() {
            self.boxes[k] = union(self.boxes[2 * k + 1], self.boxes[2 * k + 2]);
        }
    }

    /// The number of triangles.
    pub fn triangles(&self) -> usize {
        self.order.len()
    }

    /// The triangles of leaf node `node` (a node of the last level).
    pub fn leaf(&self, node: usize) -> &[u32] {
        let i = node + 1 - (1usize << self.depth);
        let n = self.order.len();
        &self.order[leaf_start(n, self.depth, i)..leaf_start(n, self.depth, i + 1)]
    }

    /// Calls `f` with every triangle of every leaf whose box meets box `b` (closed boxes:
    /// touching counts), walking down from the root.
    pub fn visit(&self, b: &Aabb, mut f: impl FnMut(u32)) {
        let meets = |n: usize| {
            let nb = &self.boxes[n];
            (0..3).all(|k| nb[0][k] <= b[1][k] && b[0][k] <= nb[1][k])
        };
        let first_leaf = (1usize << self.depth) - 1;
        let mut stack = vec![0usize];
        while let Some(n) = stack.pop() {
            if !meets(n) {
                continue;
            }
            if n >= first_leaf {
                self.leaf(n).iter().for_each(|&t| f(t));
            } else {
                stack.push(2 * n + 2);
                stack.push(2 * n + 1);
            }
        }
    }

    /// The level of node `node` (the root's is 0).
    pub fn level(node: usize) -> u32 {
        usize::BITS - 1 - (node + 1).leading_zeros()
    }
}

/// The depth of the f12-BVH of `n` triangles: 2^depth leaves with n / 2 < 2^depth <= n.
pub fn leaf_depth(n: usize) -> u32 {
    usize::BITS - 1 - n.max(1).leading_zeros()
}

/// Where leaf `i` of the 2^depth leaves over `n` triangles starts: n i / 2^depth (so that each
/// leaf holds one or two of them, the pairs spread evenly). The kernels compute the same.
pub fn leaf_start(n: usize, depth: u32, i: usize) -> usize {
    ((n as u64 * i as u64) >> depth) as usize
}

/// The box of triangle `t`'s corners.
fn tri_box(mesh: &Mesh, t: usize) -> Aabb {
    corners_box([0, 1, 2].map(|k| mesh.positions[mesh.indices[3 * t + k] as usize]))
}

/// The box of three corners.
fn corners_box(c: [glam::Vec3; 3]) -> Aabb {
    [
        (c[0].min(c[1]).min(c[2])).to_array(),
        (c[0].max(c[1]).max(c[2])).to_array(),
    ]
}

fn union(a: Aabb, b: Aabb) -> Aabb {
    [
        std::array::from_fn(|k| a[0][k].min(b[0][k])),
        std::array::from_fn(|k| a[1][k].max(b[1][k])),
    ]
}

/// Interleaves the low 10 bits of x, y and z.
fn morton(x: u32, y: u32, z: u32) -> u32 {
    fn spread(mut v: u32) -> u32 {
        v &= 0x3ff;
        v = (v | v << 16) & 0x0300_00ff;
        v = (v | v << 8) & 0x0300_f00f;
        v = (v | v << 4) & 0x030c_30c3;
        v = (v | v << 2) & 0x0924_9249;
        v
    }
    spread(x) << 2 | spread(y) << 1 | spread(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_hold_one_or_two_triangles_and_boxes_are_tight() {
        for n in [1usize, 2, 3, 5, 8, 13, 100, 1000] {
            let d = leaf_depth(n);
            assert!((1usize << d) <= n && n < (2usize << d), "n {n} depth {d}");
            for i in 0..1usize << d {
                let k = leaf_start(n, d, i + 1) - leaf_start(n, d, i);
                assert!(k == 1 || k == 2, "n {n} leaf {i} holds {k}");
            }
            assert_eq!(leaf_start(n, d, 1 << d), n);
        }
        let mesh = rxpipe_core::mesh::icosphere(2);
        let bvh = Bvh::build(&mesh).unwrap();
        let mut seen: Vec<u32> = (0..1usize << bvh.depth)
            .flat_map(|i| bvh.leaf((1usize << bvh.depth) - 1 + i).to_vec())
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..mesh.triangle_count() as u32).collect::<Vec<_>>());
        // every node's box is the union of its triangles' corners: each face touches a corner
        for node in 0..bvh.boxes.len() {
            let (lvl, b) = (Bvh::level(node), bvh.boxes[node]);
            let span = bvh.depth - lvl;
            let first = ((node + 1) << span) - 1;
            let mut corners = Vec::new();
            for leaf in first..first + (1 << span) {
                for &t in bvh.leaf(leaf) {
                    for k in 0..3 {
                        corners.push(mesh.positions[mesh.indices[3 * t as usize + k] as usize]);
                    }
                }
            }
            for k in 0..3 {
                assert!(corners.iter().all(|c| c[k] >= b[0][k] && c[k] <= b[1][k]));
                assert!(corners.iter().any(|c| c[k] == b[0][k]));
                assert!(corners.iter().any(|c| c[k] == b[1][k]));
            }
        }
    }
}
