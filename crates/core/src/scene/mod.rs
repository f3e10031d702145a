//! A scene as data: a camera, lights, objects placed in the world and their animation. What a
//! frame draws, whoever made it: the loaders (scene files, glTF, meshes: `rxpipe::io::scene`)
//! or a program building one itself ([`Scene::from_meshes`]).

mod camera;
pub(crate) mod object;

pub use camera::{orbit_angles, orbit_direction, Camera};
pub use object::Object;

use crate::mesh::Mesh;
use glam::{Mat4, Vec3};
use rayon::prelude::*;
use std::path::PathBuf;

/// A directional light with an ambient term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Light {
    /// the direction light travels (towards the scene)
    pub direction: Vec3,
    pub color: Vec3,
    pub ambient: f32,
}

impl Default for Light {
    fn default() -> Self {
        Light {
            direction: Vec3::new(-0.4, -1.0, -0.6).normalize(),
            color: Vec3::ONE,
            ambient: 0.15,
        }
    }
}

/// Everything a frame needs besides the pipeline settings.
#[derive(Debug, Clone)]
pub struct Scene {
    pub name: String,
    pub camera: Camera,
    pub light: Light,
    pub objects: Vec<Object>,
    pub background: [f32; 3],
    /// the stages the scene asks for (`passes = ["normals:angle"]`), as
    /// `rxpipe::passes::parse` takes them; checked when a pipeline is built
    pub passes: Vec<String>,
    /// every file the scene was read from: the scene file, its meshes, and the buffers and
    /// images they refer to (what an output must never replace)
    pub sources: Vec<PathBuf>,
    /// punctual lights (a glTF's KHR_lights_punctual) shading materials; none: `light` is the
    /// key light
    pub lights: Vec<crate::material::PunctualLight>,
    /// what the user should know about how the files were read (a glTF texture left out)
    pub notes: Vec<String>,
    /// the glTF animations that move objects (played by the frame at its time)
    pub animation: crate::animation::SceneAnimation,
    /// the views a glTF file offers (its perspective cameras; the first is `camera` as loaded),
    /// which `render --camera` and the viewer's V key choose from; none for other scenes
    pub cameras: Vec<Camera>,
}

impl Scene {
    /// A scene of meshes already in world space, with a camera that frames them.
    pub fn from_meshes(name: &str, meshes: Vec<Mesh>) -> Scene {
        let objects = meshes
            .into_iter()
            .map(colored)
            .map(|m| {
                let color = m.base_color.unwrap_or([0.8, 0.8, 0.8, 1.0]);
                Object::new(m, Mat4::IDENTITY, color)
            })
            .collect();
        let mut s = Scene {
            name: name.into(),
            camera: Camera::framing(Vec3::splat(-1.0), Vec3::splat(1.0)),
            light: Light::default(),
            objects,
            background: [0.06, 0.07, 0.09],
            passes: Vec::new(),
            sources: Vec::new(),
            lights: Vec::new(),
            notes: Vec::new(),
            animation: Default::default(),
            cameras: Vec::new(),
        };
        s.frame_all();
        s
    }

    /// World-space bounds of all objects (every instance of each).
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut b: Option<(Vec3, Vec3)> = None;
        for o in &self.objects {
            // (an instance's bounds: the corners of the mesh's box, placed; the box of the
            // placed vertices where the object is drawn once, as before instances)
            let local = match &o.instances {
                Some(_) => o.mesh.bounds().map(|(lo, hi)| box_corners(lo, hi)),
                None => None,
            };
            for m in o.placements(o.transform) {
                let mut add = |w: Vec3| {
                    b = Some(match b {
                        None => (w, w),
                        Some((lo, hi)) => (lo.min(w), hi.max(w)),
                    })
                };
                match &local {
                    Some(corners) => corners.iter().for_each(|&c| add(m.transform_point3(c))),
                    // (in parallel over a big mesh: a minimum and a maximum, in any order)
                    None => {
                        if let Some((lo, hi)) = o
                            .mesh
                            .positions
                            .par_iter()
                            .with_min_len(1 << 16)
                            .map(|&p| {
                                let w = m.transform_point3(p);
                                (w, w)
                            })
                            .reduce_with(|(a, b), (c, d)| (a.min(c), b.max(d)))
                        {
                            add(lo);
                            add(hi);
                        }
                    }
                }
            }
        }
        b
    }

    /// Poses the objects whose shapes the animations change (skins whose joints they move,
    /// morph target weights they drive) at time `t`: their meshes' vertices. Returns those it
    /// posed, for `rxpipe::Pipeline::prepare_again`.
    pub fn pose_meshes(&mut self, t: f32) -> Vec<usize> {
        let mut meshes: Vec<&mut Mesh> = self.objects.iter_mut().map(|o| &mut o.mesh).collect();
        self.animation.pose_meshes(t, &mut meshes)
    }

    /// Points the camera at the whole scene.
    pub fn frame_all(&mut self) {
        if let Some((lo, hi)) = self.bounds() {
            self.camera = Camera::framing(lo, hi);
        }
    }

    /// The triangles the scene draws: each object's once per placement.
    pub fn triangle_count(&self) -> usize {
        self.objects
            .iter()
            .map(|o| o.mesh.triangle_count() * o.placement_count())
            .sum()
    }

    /// Why the scene cannot draw anything, if it cannot: no triangles at all, or a camera that
    /// sees nothing (what would otherwise be a blank image without a word).
    pub fn undrawable(&self) -> Option<String> {
        if self.triangle_count() == 0 {
            let vertices: usize = self.objects.iter().map(|o| o.mesh.vertex_count()).sum();
            return Some(if self.objects.is_empty() {
                "the scene has no objects to draw".into()
            } else {
                format!("nothing to draw: {vertices} vertices and no triangles")
            });
        }
        self.camera.check().err()
    }
}

/// The eight corners of the box `lo`..`hi`.
fn box_corners(lo: Vec3, hi: Vec3) -> [Vec3; 8] {
    std::array::from_fn(|k| {
        Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        )
    })
}

/// A mesh with vertex colours and no material (PLY, OBJ) gets a plain white dielectric, so that
/// its colours show (the lit mode has no vertex colours).
pub fn colored(mut m: Mesh) -> Mesh {
    if m.colors.is_some() && m.material.is_none() {
        m.material = Some(std::sync::Arc::new(crate::material::Material::plain(
            m.name.clone(),
            glam::Vec4::ONE,
        )));
    }
    m
}
