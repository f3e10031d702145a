//! The least and the greatest distance between two meshes, after gDist (Chen et al., "gDist:
//! Efficient Distance Computation between 3D Meshes on GPU",
//! ../shared/papers/gdist-gpu-mesh-distance.txt, equations 1 and 2).
//!
//! Both meshes get an f12-BVH ([`bvh::Bvh`]: a full binary tree of boxes over their triangles
//! in Morton order, one or two triangles a leaf). A pair of nodes, one of each tree, is culled
//! when the best its boxes could hold cannot beat what is surely reached already. For the least
//! distance the boxes' gap is the best they could hold, and gDist's enhanced upper bound of
//! tight boxes (the nearest pair of faces at its farthest) is surely reached; for the greatest,
//! the boxes' farthest corners and the farthest pair of faces at its nearest (section 4's
//! bounds, both ways). Exact triangle distances tighten the bound as pairs of leaves are settled.
//!
//! - [`cpu`], the reference: the pairs of nodes expanded breadth first until every thread has
//!   some, then each searched depth first, the more promising child pair first, each pair of
//!   leaves settled by the exact distances of their triangles. One search serves both goals
//!   ([`cpu::Goal`]).
//! - [`cuda`], gDist's algorithm: the front of node pairs expanded breadth first, several levels
//!   an expansion (as many as keep the front within gDist's 2^18 pairs), each thread one child
//!   pair, the global bound kept by an atomic; then every surviving leaf pair's triangles; all in
//!   one cooperative launch.
//!
//! Triangle distances are exact in double precision ([`triangle::tri_tri`] for the least,
//! [`triangle::tri_far2`] for the greatest: the farthest of the nine corner pairs), the same
//! functions on both backends operation for operation, so both find the same distance and, among
//! pairs at that distance, the same one: the least (triangle of A, triangle of B). Where the
//! meshes touch or cross, the least distance is 0 and nothing can beat it: both searches end at
//! the first pair of triangles they measure at 0 (which of several depends on the threads'
//! order), so crossing meshes cost no more than separated ones. A pair is
//! culled only when its hope misses the bound by more than [`SLACK`] relatively, which covers
//! the rounding of either (a relative error of about 1e-8 in the squared distance where two
//! meshes nearly touch far from the origin).
//!
//! Either search may be asked for an answer within a relative error instead
//! ([`cpu::min_distance_rel`], [`cuda::Distance::query_rel`] and their greatest-distance
//! twins; [`rel_keep`] gives the guarantee and why it holds): far fewer pairs where many lie
//! near the answer, not always the same pair on both backends.
//!
//! ```
//! // two unit spheres whose centres are 3 apart: about 1 between them
//! let a = rxpipe::mesh::icosphere(3);
//! let mut b = a.clone();
//! for p in &mut b.positions {
//!     p.x += 3.0;
//! }
//! let c = rxpipe::distance::cpu::run(&a, &b)?;
//! assert!(c.distance > 1.0 && c.distance < 1.01, "{}", c.distance);
//! // where it is reached: a point of each sphere, facing each other
//! assert!(c.points[0].x > 0.99 && c.points[1].x < 2.01);
//! // and the farthest two points, one of each: about 5 apart, on the line of the centres
//! let f = rxpipe::distance::cpu::run_max(&a, &b)?;
//! assert!(f.distance > 4.99 && f.distance <= 5.0, "{}", f.distance);
//! assert!(f.points[0].x < -0.99 && f.points[1].x > 3.99);
//! # Ok::<(), rxpipe::distance::DistanceError>(())
//! ```

pub mod bvh;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod intersect;
pub mod placed;
pub mod triangle;

use glam::DVec3;
use rxpipe_core::mesh::Mesh;

/// The relative margin of culling: a pair of nodes is dropped when its squared lower bound
/// exceeds the squared upper bound times 1 + SLACK.
pub const SLACK: f64 = 1e-6;

/// The largest relative error a search takes ([`rel_keep`]).
pub const MAX_REL_ERROR: f64 = 1000.0;

/// The factor of culling against the best distance measured so far, for a search that may
/// answer within a relative error `rel` of the best distance (0: exact): (1 + SLACK) / (1 +
/// rel)^2, where the bound of the boxes' sure distances is culled against with 1 + SLACK.
///
/// The guarantee (relative error after Quinlan 1994, which gDist names as future work): a pair
/// of nodes is culled against a distance `f` measured between two triangles only when all it
/// could hold misses `f` by more than a factor (1 + rel)^2 (squared distances). So the pair
/// that held the best distance was either measured, or culled against a measured distance
/// within a factor 1 + rel of it, and the answer lies within a factor 1 + rel of the best
/// distance (as distances, not squared). The bound of the boxes' sure distances stays exact:
/// the pair that surely reaches it may lie in the very nodes culled against it, and no pair of
/// triangles is known at it. With `rel` 0 the second test is the first's against a looser
/// bound, so the search is the exact one. With `rel` above 0 the pair found may differ between
/// runs and backends (which measurement culls which pair depends on the threads' order); its
/// distance keeps the guarantee.
pub fn rel_keep(rel: f64) -> Result<f64, DistanceError> {
    if !(0.0..=MAX_REL_ERROR).contains(&rel) {
        return Err(DistanceError::RelError(rel));
    }
    Ok((1.0 + SLACK) / ((1.0 + rel) * (1.0 + rel)))
}

/// The least distance between two meshes, where it is reached, and what the search did.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    pub distance: f64,
    /// the triangles (indices into each mesh's triangles) at that distance: the least pair
    pub triangles: [u32; 2],
    /// a closest point on each of them (the same point where they meet)
    pub points: [DVec3; 2],
    /// triangle pairs whose exact distance was computed
    pub pairs_tested: u64,
}

/// The greatest distance between a point of one mesh and a point of the other (gDist's maximum
/// distance, the meshes' span), where it is reached, and what the search did.
#[derive(Debug, Clone, PartialEq)]
pub struct Farthest {
    pub distance: f64,
    /// the triangles (indices into each mesh's triangles) at that distance: the least pair
    pub triangles: [u32; 2],
    /// the corner of each triangle where it is reached (the farthest distance between two
    /// triangles is always between corners)
    pub points: [DVec3; 2],
    /// triangle pairs whose greatest distance was computed
    pub pairs_tested: u64,
}

/// Why a distance could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum DistanceError {
    #[error("mesh '{0}' has no triangles: a distance needs a triangle on each side")]
    Empty(String),
    #[error(transparent)]
    Mesh(#[from] rxpipe_core::mesh::MeshError),
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    #[error("the GPU's search ended without a pair of triangles (a bug: please report it)")]
    Lost,
    #[error(
        "the GPU's front would hold {pairs} pairs of nodes, more than its 32-bit counts can \
         (the meshes are too large or too evenly close for one query)"
    )]
    Front { pairs: u64 },
    #[error("mesh '{mesh}': its transform takes its positions out of the finite numbers")]
    Placement { mesh: String },
    #[error("relative error {0}: it must be a number from 0 (exact) to {MAX_REL_ERROR}")]
    RelError(f64),
}

/// Checks that `mesh` can take part: valid ([`Mesh::validate`]: indices in range, finite
/// positions) and with at least one triangle.
pub fn check(mesh: &Mesh) -> Result<(), DistanceError> {
    mesh.validate()?;
    if mesh.triangle_count() == 0 {
        return Err(DistanceError::Empty(mesh.name.clone()));
    }
    Ok(())
}

/// Triangle `t` of `mesh` in double precision.
pub fn corners(mesh: &Mesh, t: u32) -> triangle::Tri {
    let i = 3 * t as usize;
    [0, 1, 2].map(|k| mesh.positions[mesh.indices[i + k] as usize].as_dvec3())
}

/// The result for the least pair `triangles`: its distance and closest points.
fn closest(a: &Mesh, b: &Mesh, triangles: [u32; 2], pairs_tested: u64) -> Closest {
    let (d2, x, y) = triangle::tri_tri(&corners(a, triangles[0]), &corners(b, triangles[1]));
    Closest {
        distance: d2.sqrt(),
        triangles,
        points: [x, y],
        pairs_tested,
    }
}

/// The result for the greatest pair `triangles`: its distance and farthest corners.
fn farthest(a: &Mesh, b: &Mesh, triangles: [u32; 2], pairs_tested: u64) -> Farthest {
    let (ca, cb) = (corners(a, triangles[0]), corners(b, triangles[1]));
    let (d2, [i, j]) = triangle::tri_far2(&ca, &cb);
    Farthest {
        distance: d2.sqrt(),
        triangles,
        points: [ca[i], cb[j]],
        pairs_tested,
    }
}
