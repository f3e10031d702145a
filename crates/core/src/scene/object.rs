//! One mesh placed in a scene, once or as instances.

use crate::mesh::Mesh;
use glam::Mat4;

/// One mesh placed in the scene.
#[derive(Debug, Clone)]
pub struct Object {
    pub mesh: Mesh,
    pub transform: Mat4,
    /// linear RGBA
    pub color: [f32; 4],
    /// Instances (glTF EXT_mesh_gpu_instancing, a scene file's `instances`, an instanced
    /// generator): the mesh drawn once per matrix, placed by `transform * instance`, while the
    /// mesh is held, prepared and made resident once. `None`: drawn once, at `transform`.
    pub instances: Option<Vec<Mat4>>,
}

impl Object {
    /// An object drawn once, at `transform`.
    pub fn new(mesh: Mesh, transform: Mat4, color: [f32; 4]) -> Object {
        Object {
            mesh,
            transform,
            color,
            instances: None,
        }
    }

    /// How many times the object is drawn: once, or once per instance.
    pub fn placement_count(&self) -> usize {
        self.instances.as_ref().map_or(1, Vec::len)
    }

    /// The model matrix of each placement under `transform` (the object's own, or where an
    /// animation puts it): `transform` itself, or `transform * instance` for each instance.
    pub fn placements(&self, transform: Mat4) -> Vec<Mat4> {
        match &self.instances {
            None => vec![transform],
            Some(list) => list.iter().map(|&i| transform * i).collect(),
        }
    }
}
