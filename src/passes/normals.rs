//! Vertex normals for meshes that have none: flat (each triangle its own vertices) or smooth
//! (area-weighted average of the adjacent face normals).

use super::{Pass, PassError};
use crate::mesh::Mesh;
use glam::Vec3;

/// Which normals to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NormalsMode {
    /// area-weighted smooth normals, sharing vertices
    #[default]
    Smooth,
    /// one normal per face; vertices are split so every triangle has its own three
    Flat,
}

/// Computes normals where a mesh has none (or always, with `overwrite`).
///
/// ```
/// use rxpipe::passes::{Normals, Pass};
/// let mut m = rxpipe::mesh::icosphere(2);
/// m.normals = None;
/// Normals::default().run(&mut m).unwrap();
/// let n = m.normals.as_ref().unwrap();
/// assert!((n[0] - m.positions[0]).length() < 0.05);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Normals {
    pub mode: NormalsMode,
    pub overwrite: bool,
}

impl Pass for Normals {
    fn name(&self) -> &str {
        "normals"
    }

    fn run(&self, mesh: &mut Mesh) -> Result<(), PassError> {
        if mesh.normals.is_some() && !self.overwrite {
            return Ok(());
        }
        match self.mode {
            NormalsMode::Smooth => {
                let mut n = vec![Vec3::ZERO; mesh.positions.len()];
                for t in mesh.indices.chunks_exact(3) {
                    let [a, b, c] = [t[0], t[1], t[2]].map(|i| mesh.positions[i as usize]);
                    // the cross product's length is twice the area: area weighting for free
                    let f = (b - a).cross(c - a);
                    for &i in t {
                        n[i as usize] += f;
                    }
                }
                for v in &mut n {
                    *v = v.normalize_or_zero();
                }
                mesh.normals = Some(n);
            }
            NormalsMode::Flat => {
                let mut positions = Vec::with_capacity(mesh.indices.len());
                let mut normals = Vec::with_capacity(mesh.indices.len());
                let mut uvs = mesh
                    .uvs
                    .as_ref()
                    .map(|_| Vec::with_capacity(mesh.indices.len()));
                for t in mesh.indices.chunks_exact(3) {
                    let [a, b, c] = [t[0], t[1], t[2]].map(|i| mesh.positions[i as usize]);
                    let f = (b - a).cross(c - a).normalize_or_zero();
                    for &i in t {
                        positions.push(mesh.positions[i as usize]);
                        normals.push(f);
                        if let (Some(u), Some(src)) = (uvs.as_mut(), mesh.uvs.as_ref()) {
                            u.push(src[i as usize]);
                        }
                    }
                }
                mesh.indices = (0..positions.len() as u32).collect();
                mesh.positions = positions;
                mesh.normals = Some(normals);
                mesh.uvs = uvs;
            }
        }
        if mesh
            .normals
            .as_ref()
            .is_some_and(|n| n.len() != mesh.positions.len())
        {
            return Err(PassError::Failed {
                pass: self.name().into(),
                mesh: mesh.name.clone(),
                message: "normal count differs from vertex count".into(),
            });
        }
        Ok(())
    }
}
