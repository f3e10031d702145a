//! The error every public function of the library returns: each layer's own error, carried
//! through unchanged.

use crate::{distance, geometry, gpu, passes, patch, raster, reindex};
use rxpipe_core::{limits, mesh};
use rxpipe_io as io;

/// Any error rxpipe returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] io::IoError),
    #[error(transparent)]
    Mesh(#[from] mesh::MeshError),
    #[error(transparent)]
    Geometry(#[from] geometry::GeometryError),
    #[error(transparent)]
    Raster(#[from] raster::RasterError),
    #[error(transparent)]
    Pass(#[from] passes::PassError),
    #[error(transparent)]
    Gpu(#[from] gpu::GpuError),
    #[error(transparent)]
    Reindex(#[from] reindex::ReindexError),
    #[error(transparent)]
    Patch(#[from] patch::PatchError),
    #[error(transparent)]
    Distance(#[from] distance::DistanceError),
    #[error(transparent)]
    Memory(#[from] limits::OutOfMemory),
    #[error("{0}")]
    Backend(String),
}
