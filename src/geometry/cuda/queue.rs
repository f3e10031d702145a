//! The triangle queue the geometry kernels write, its size per strategy, and its download.

use super::{DeviceMesh, GpuVertexOut};
use crate::geometry::{GeometryError, GeometryStats, Strategy, VertexOut};
use crate::gpu::{Gpu, GpuError};
use cudarc::driver::CudaSlice;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The triangle queue and, with statistics, the per-vertex invocation counts, on the device.
///
/// The queue is indexed, as a mesh shader's output is: every batch writes the vertices it shaded,
/// once, into its own region of `vertices`, and `corners` holds for input triangle t the positions
/// of its three corners in `vertices` (at 3t, 3t + 1, 3t + 2). So vertex reuse saves the queue's
/// writes as well as the shading. Naive shades every index and writes a flat queue (`corners` is
/// `None`: corner k of triangle t is `vertices[3t + k]`); multi shades every vertex once and its
/// corners are the index buffer, copied when the queue is made. The patch strategy's corners are
/// fixed by the patches and live with the mesh ([`DeviceQueue::corners_for`]).
///
/// A queue made for fused frames only ([`DeviceQueue::fused_only`]) holds no vertices: the fused
/// geometry stage writes the vertices of the triangles that survive setup into the raster
/// stage's buffer, and their corners here.
pub struct DeviceQueue {
    /// the strategy the queue is laid out for
    pub strategy: Strategy,
    /// the mesh whose indices multi's corners are a copy of
    pub source: u64,
    pub vertices: CudaSlice<GpuVertexOut>,
    pub corners: Option<CudaSlice<u32>>,
    pub counts: CudaSlice<u32>,
    /// the sum of `counts`, after `CudaGeometry::sum_counts`
    pub total: CudaSlice<u64>,
    /// whether `counts` is all zero: as made, and after a frame's
    /// `CudaGeometry::reset_counts`; a launch over many meshes clears the counts first only
    /// where one of its queues is not (see `CudaGeometry::prepare_draws`)
    pub counts_zero: Arc<AtomicBool>,
    pub index_count: usize,
    /// made for fused frames: `vertices` is a placeholder of one, and only a fused launch
    /// (kernels/geometry_fused.cu) may shade into the queue
    pub fused_only: bool,
}

/// Vertices of the queue's region for each batch of warp voting with batches of `batch` indices:
/// every round but the last writes at least ten triangles, whose corners use all but at most two
/// of its 32 vertices, so a batch writes at most `batch + 2 * rounds` vertices.
pub(super) fn vcap_per_batch(batch: u32) -> u32 {
    batch + 2 * (batch / 30 + 1)
}

/// Vertices the queue of `strategy` holds for `mesh` (see [`DeviceQueue`]).
pub(super) fn queue_capacity(
    strategy: Strategy,
    mesh: &DeviceMesh,
) -> Result<usize, GeometryError> {
    let n = mesh.index_count;
    let capacity = match strategy {
        Strategy::Naive => n as u64,
        Strategy::Multi => mesh.vertex_count as u64,
        Strategy::WarpVote { batch } => {
            if batch < 3 || batch % 3 != 0 {
                return Err(GeometryError::WarpBatch(batch));
            }
            (n as u64).div_ceil(batch as u64) * vcap_per_batch(batch) as u64
        }
        Strategy::Patch => {
            mesh.patches
                .as_ref()
                .ok_or(GeometryError::NoPatches)?
                .vertex_total as u64
        }
        _ => {
            let (_, max_vertices) = strategy
                .dynamic_limits()
                .expect("a dynamic strategy has batch limits");
            let batches = mesh.batches.as_ref().map_or(0, |b| b.1);
            batches as u64 * max_vertices as u64
        }
    };
    if strategy != Strategy::Naive && capacity > u32::MAX as u64 {
        return Err(GpuError::Limit(format!(
            "{strategy} over {n} indices needs a queue of {capacity} vertices, more than its 32-bit corners address"
        ))
        .into());
    }
    Ok(capacity as usize)
}

pub(super) fn no_corners() -> GpuError {
    GpuError::Limit("the queue has no corners for an indexed strategy".into())
}

impl DeviceQueue {
    /// The corners the raster stage reads for this queue shaded from `mesh` (`None`: flat, three
    /// vertices per triangle): the queue's own, or the mesh's patch corners.
    pub fn corners_for<'a>(&'a self, mesh: &'a DeviceMesh) -> Option<&'a CudaSlice<u32>> {
        match (self.strategy, &mesh.patches) {
            (Strategy::Patch, Some(p)) => Some(&p.corners),
            _ => self.corners.as_ref(),
        }
    }

    /// Whether the queue can take `strategy` over `mesh` as it is, for a fused frame where
    /// `fused`: the same strategy, room enough (vertices, unless fused), and for multi corners
    /// copied from this very mesh.
    pub fn fits(&self, strategy: Strategy, mesh: &DeviceMesh, fused: bool) -> bool {
        self.strategy == strategy
            && (fused
                || !self.fused_only
                    && queue_capacity(strategy, mesh).is_ok_and(|c| self.vertices.len() >= c))
            && self
                .corners
                .as_ref()
                .is_none_or(|c| c.len() >= mesh.index_count)
            && (strategy != Strategy::Multi || self.source == mesh.id)
            // (a queue without counting holds one count)
            && (self.counts.len() >= mesh.vertex_count || self.counts.len() == 1)
    }

    /// Downloads the queue, shaded from `mesh`, as three shaded vertices per triangle, in input
    /// order.
    pub fn download(&self, gpu: &Gpu, mesh: &DeviceMesh) -> Result<Vec<VertexOut>, GpuError> {
        if self.fused_only {
            return Err(GpuError::Limit(
                "the queue was made for fused frames: it holds no shaded vertices".into(),
            ));
        }
        let vertices = gpu.download(&self.vertices, self.vertices.len())?;
        let at = |i: usize| {
            vertices
                .get(i)
                .copied()
                .map(VertexOut::from)
                .ok_or_else(|| {
                    GpuError::Limit(format!(
                        "the queue's corner {i} is outside its {} vertices",
                        vertices.len()
                    ))
                })
        };
        match self.corners_for(mesh) {
            None => (0..self.index_count).map(at).collect(),
            Some(c) => match &mesh.view {
                // a view's corners are the whole mesh's: triangle t's are its source's
                Some(v) => {
                    let all = gpu.download(c, c.len())?;
                    v.sources()
                        .take(self.index_count / 3)
                        .flat_map(|t| (0..3).map(move |k| 3 * t + k))
                        .map(|i| at(all[i] as usize))
                        .collect()
                }
                None => gpu
                    .download(c, self.index_count)?
                    .into_iter()
                    .map(|i| at(i as usize))
                    .collect(),
            },
        }
    }
}

/// A downloaded GPU geometry result.
#[derive(Debug, Clone)]
pub struct GpuGeometry {
    /// three shaded vertices per input triangle, in input order
    pub queue: Vec<VertexOut>,
    /// invocations per input vertex (with counting)
    pub counts: Option<Vec<u32>>,
    pub stats: GeometryStats,
    /// the strategy's kernels, timed with CUDA events (batches built and buffers made before)
    pub kernel_ms: f64,
}

/// A processing program's records left on the device
/// ([`super::CudaGeometry::process_on_device`]).
pub struct DeviceRecords {
    /// vertex i's record at i
    pub records: CudaSlice<GpuVertexOut>,
    /// the strategy's counts (the vertices no index named, run afterwards, are not in them)
    pub stats: GeometryStats,
    /// the strategy's kernels, timed with CUDA events
    pub kernel_ms: f64,
}
