//! Mesh-processing passes that run before the geometry stage.
//!
//! A [`Pass`] takes a mesh and returns a processed one; the pipeline runs its passes in order on
//! every object when a scene is prepared (not every frame).

mod normals;

pub use normals::{Normals, NormalsMode};

use crate::mesh::Mesh;

/// Errors raised by passes.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("pass '{pass}' on mesh '{mesh}': {message}")]
    Failed {
        pass: String,
        mesh: String,
        message: String,
    },
}

/// A mesh-processing stage.
pub trait Pass: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &str;
    /// Processes one mesh in place.
    fn run(&self, mesh: &mut Mesh) -> Result<(), PassError>;
}
