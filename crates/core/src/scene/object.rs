//! One mesh placed in a scene.

use crate::mesh::Mesh;
use glam::Mat4;

/// One mesh placed in the scene.
#[derive(Debug, Clone)]
pub struct Object {
    pub mesh: Mesh,
    pub transform: Mat4,
    /// linear RGBA
    pub color: [f32; 4],
}
