//! What a glTF file holds for rendering, as the loader gives it.

use glam::Mat4;
use rxpipe_core::material::PunctualLight;
use rxpipe_core::mesh::Mesh;
use rxpipe_core::scene::Camera;

/// What a glTF file holds for rendering.
#[derive(Debug, Clone, Default)]
pub struct GltfScene {
    /// every triangle primitive with its material (none where the primitive names none: it
    /// draws in the lit mode), in world space, or in its node's space where an animation moves
    /// the node (or one above it) and the primitive is not skinned
    pub meshes: Vec<Mesh>,
    /// each mesh's model matrix: identity for one in world space, its node's world matrix at
    /// time 0 for an animated one
    pub transforms: Vec<Mat4>,
    /// each animated mesh's node in [`GltfScene::rig`] (`None`: in world space)
    pub nodes: Vec<Option<usize>>,
    /// each mesh's instances (EXT_mesh_gpu_instancing): the mesh drawn once per matrix, placed
    /// by `transform * instance` (its transform then its node's world matrix, or its node's
    /// pose where animated); `None`: drawn once
    pub instances: Vec<Option<Vec<Mat4>>>,
    /// the node tree and the animations, when the file has any
    pub rig: Option<rxpipe_core::animation::Rig>,
    /// the meshes whose shapes the animations change (their `rig` is 0: this file's)
    pub deformed: Vec<rxpipe_core::animation::Deformed>,
    /// KHR_lights_punctual lights placed by their nodes
    pub lights: Vec<PunctualLight>,
    /// the perspective cameras of the scene's nodes, in the order the loader meets them (the
    /// first is the starting view)
    pub cameras: Vec<Camera>,
    /// what the user should know about how the file was read (textures left out)
    pub notes: Vec<String>,
}

impl GltfScene {
    /// A scene of meshes in world space, with notes (what another format's loader gives).
    pub fn of_meshes(meshes: Vec<Mesh>, notes: Vec<String>) -> GltfScene {
        GltfScene {
            transforms: vec![Mat4::IDENTITY; meshes.len()],
            nodes: vec![None; meshes.len()],
            instances: vec![None; meshes.len()],
            meshes,
            notes,
            ..Default::default()
        }
    }

    /// Its meshes, every one in world space (animated ones as posed at time 0), an instanced
    /// one copied once per instance.
    pub fn world_meshes(self) -> Vec<Mesh> {
        let mut out = Vec::with_capacity(self.meshes.len());
        for ((m, t), instances) in self
            .meshes
            .into_iter()
            .zip(self.transforms)
            .zip(self.instances)
        {
            let place = |mut m: Mesh, world: Mat4| {
                if world != Mat4::IDENTITY {
                    m.transform(world);
                }
                m
            };
            match instances {
                None => out.push(place(m, t)),
                Some(list) => out.extend(list.iter().map(|&i| place(m.clone(), t * i))),
            }
        }
        out
    }
}
