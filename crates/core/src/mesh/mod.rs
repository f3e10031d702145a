//! The mesh model: positions, optional normals and texture coordinates, and `u32` triangle
//! indices, plus validation and procedural generators.

mod adjacency;
mod generators;
mod spec;
pub mod weld;

pub use adjacency::VertexFaces;
pub use generators::{grid, icosphere, rings, torus};
pub use spec::{from_spec, looks_like_spec, Generator, SPECS};

use glam::{Mat4, Vec2, Vec3, Vec4};
use rayon::prelude::*;
use std::sync::Arc;

/// Errors found by [`Mesh::validate`] and by mesh construction.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum MeshError {
    /// The index buffer length is not a multiple of three.
    #[error("mesh '{mesh}': index count {count} is not a multiple of 3")]
    IndexCount { mesh: String, count: usize },
    /// An index refers past the end of the vertex array.
    #[error("mesh '{mesh}': triangle {triangle} corner {corner} has index {index}, but the mesh has only {vertices} vertices")]
    IndexOutOfRange {
        mesh: String,
        triangle: usize,
        corner: usize,
        index: u32,
        vertices: usize,
    },
    /// A position has a NaN or infinite coordinate.
    #[error("mesh '{mesh}': vertex {vertex} has a non-finite position {position:?}")]
    NonFinitePosition {
        mesh: String,
        vertex: usize,
        position: [f32; 3],
    },
    /// An attribute array's length differs from the position array's.
    #[error("mesh '{mesh}': {attribute} has {len} entries but there are {vertices} positions")]
    AttributeLength {
        mesh: String,
        attribute: &'static str,
        len: usize,
        vertices: usize,
    },
    /// A generator spec that names no generator, or whose output would not fit.
    #[error("{spec}: {message}")]
    Spec { spec: String, message: String },
    /// The mesh has more vertices than a u32 index can address.
    #[error("mesh '{mesh}': {vertices} vertices do not fit in 32-bit indices")]
    TooManyVertices { mesh: String, vertices: usize },
}

/// An indexed triangle mesh.
///
/// ```
/// let m = rxpipe_core::mesh::icosphere(1);
/// assert_eq!(m.vertex_count(), 42);
/// assert_eq!(m.triangle_count(), 80);
/// m.validate().unwrap();
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    /// A name for messages (file name, generator, glTF mesh name).
    pub name: String,
    pub positions: Vec<Vec3>,
    pub normals: Option<Vec<Vec3>>,
    pub uvs: Option<Vec<Vec2>>,
    /// A second texture coordinate set, for materials whose textures read two (glTF: a base
    /// colour on TEXCOORD_0 and an emissive map on TEXCOORD_1). A texture reads this set where
    /// its [`crate::material::TextureRef::uv_set`] is 1. Present only beside `uvs`.
    pub uvs1: Option<Vec<Vec2>>,
    /// Three indices per triangle, counter-clockwise front faces.
    pub indices: Vec<u32>,
    /// Base colour (linear RGBA) where the source gives one (glTF materials).
    pub base_color: Option<[f32; 4]>,
    /// Vertex colours (linear RGBA): glTF COLOR_0, PLY red/green/blue(/alpha), OBJ `v x y z r g b`.
    pub colors: Option<Vec<Vec4>>,
    /// Tangents (glTF TANGENT): xyz a unit vector along increasing u, w the bitangent's sign
    /// (bitangent = w * normal x tangent). A zero tangent means none: the material path then
    /// derives the triangle's frame from its positions and uvs, as for meshes without tangents.
    pub tangents: Option<Vec<Vec4>>,
    /// The material its triangles are drawn with (glTF); `None`: the lit mode's base colour.
    pub material: Option<Arc<crate::material::Material>>,
}

impl Mesh {
    /// A mesh from positions and indices, with no attributes.
    pub fn new(name: impl Into<String>, positions: Vec<Vec3>, indices: Vec<u32>) -> Self {
        Mesh {
            name: name.into(),
            positions,
            indices,
            ..Default::default()
        }
    }

    /// The mesh's name, base colour and material, with no vertices or triangles: what a copy
    /// of the mesh kept elsewhere (on a device) needs beside its arrays.
    pub fn shell(&self) -> Mesh {
        Mesh {
            name: self.name.clone(),
            base_color: self.base_color,
            material: self.material.clone(),
            ..Default::default()
        }
    }

    /// Whether its vertex attributes are positions, normals and uvs alone: those a mesh's device
    /// arrays hold (colours, tangents and a second uv set stay on the host).
    pub fn has_only_device_attributes(&self) -> bool {
        self.colors.is_none() && self.tangents.is_none() && self.uvs1.is_none()
    }

    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The bytes its vertex attributes and indices take (a copy's size, its material shared).
    pub fn bytes(&self) -> usize {
        let n = self.positions.len();
        let per_vertex = 12
            + self.normals.as_ref().map_or(0, |_| 12)
            + self.uvs.as_ref().map_or(0, |_| 8)
            + self.uvs1.as_ref().map_or(0, |_| 8)
            + self.colors.as_ref().map_or(0, |_| 16)
            + self.tangents.as_ref().map_or(0, |_| 16);
        n * per_vertex + 4 * self.indices.len()
    }

    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Checks index ranges, finite positions and attribute lengths; the error names the element.
    pub fn validate(&self) -> Result<(), MeshError> {
        let n = self.positions.len();
        if n > u32::MAX as usize {
            return Err(MeshError::TooManyVertices {
                mesh: self.name.clone(),
                vertices: n,
            });
        }
        if self.indices.len() % 3 != 0 {
            return Err(MeshError::IndexCount {
                mesh: self.name.clone(),
                count: self.indices.len(),
            });
        }
        let check_len = |attribute: &'static str, len: usize| {
            if len != n {
                Err(MeshError::AttributeLength {
                    mesh: self.name.clone(),
                    attribute,
                    len,
                    vertices: n,
                })
            } else {
                Ok(())
            }
        };
        if let Some(nr) = &self.normals {
            check_len("normals", nr.len())?;
        }
        if let Some(uv) = &self.uvs {
            check_len("uvs", uv.len())?;
        }
        if let Some(uv) = &self.uvs1 {
            check_len("uvs1", uv.len())?;
            if self.uvs.is_none() {
                return Err(MeshError::AttributeLength {
                    mesh: self.name.clone(),
                    attribute: "uvs (beside uvs1)",
                    len: 0,
                    vertices: n,
                });
            }
        }
        if let Some(c) = &self.colors {
            check_len("colors", c.len())?;
        }
        if let Some(t) = &self.tangents {
            check_len("tangents", t.len())?;
        }
        // (in parallel over a big mesh; the first bad element is still the one named)
        if let Some(i) = crate::execution::position_first(&self.indices, |&x| x as usize >= n) {
            return Err(MeshError::IndexOutOfRange {
                mesh: self.name.clone(),
                triangle: i / 3,
                corner: i % 3,
                index: self.indices[i],
                vertices: n,
            });
        }
        if let Some(vertex) = crate::execution::position_first(&self.positions, |p| !p.is_finite())
        {
            return Err(MeshError::NonFinitePosition {
                mesh: self.name.clone(),
                vertex,
                position: self.positions[vertex].to_array(),
            });
        }
        Ok(())
    }

    /// The number of distinct vertex indices that triangles reference.
    pub fn referenced_vertex_count(&self) -> usize {
        let mut seen = vec![false; self.positions.len()];
        let mut count = 0;
        for &i in &self.indices {
            if let Some(s) = seen.get_mut(i as usize) {
                if !*s {
                    *s = true;
                    count += 1;
                }
            }
        }
        count
    }

    /// Applies an affine transform to positions (its inverse transpose to normals, its linear
    /// part to tangents; a mirroring transform also flips the bitangents' sign and the winding).
    pub fn transform(&mut self, m: Mat4) {
        for p in &mut self.positions {
            *p = m.transform_point3(*p);
        }
        if let Some(nr) = &mut self.normals {
            let nm = m.inverse().transpose();
            for n in nr {
                *n = nm.transform_vector3(*n).normalize_or_zero();
            }
        }
        let mirror = m.determinant() < 0.0;
        if let Some(tg) = &mut self.tangents {
            for t in tg {
                let xyz = m.transform_vector3(t.truncate()).normalize_or_zero();
                *t = xyz.extend(if mirror { -t.w } else { t.w });
            }
        }
        if mirror {
            for t in self.indices.chunks_exact_mut(3) {
                t.swap(1, 2);
            }
        }
    }

    /// Reorders the vertices: new vertex `k` is old vertex `old_of[k]`, a permutation of
    /// `0..vertex_count()`. The indices are not touched; they must already use the new numbers.
    pub fn permute_vertices(&mut self, old_of: &[u32]) {
        fn gather<T: Copy>(v: &[T], old_of: &[u32]) -> Vec<T> {
            old_of.iter().map(|&o| v[o as usize]).collect()
        }
        debug_assert_eq!(old_of.len(), self.positions.len());
        self.positions = gather(&self.positions, old_of);
        if let Some(n) = &mut self.normals {
            *n = gather(n, old_of);
        }
        if let Some(uv) = &mut self.uvs {
            *uv = gather(uv, old_of);
        }
        if let Some(uv) = &mut self.uvs1 {
            *uv = gather(uv, old_of);
        }
        if let Some(c) = &mut self.colors {
            *c = gather(c, old_of);
        }
        if let Some(t) = &mut self.tangents {
            *t = gather(t, old_of);
        }
    }

    /// Appends another mesh; attributes missing on either side are filled with zeros (colours
    /// with white; a zero tangent is none). The material stays this mesh's.
    pub fn append(&mut self, other: &Mesh) {
        let base = self.positions.len() as u32;
        let (n0, n1) = (self.positions.len(), other.positions.len());
        fn merge<T: Copy>(
            a: &mut Option<Vec<T>>,
            b: &Option<Vec<T>>,
            n0: usize,
            n1: usize,
            fill: T,
        ) {
            match (a.as_mut(), b) {
                (Some(a), Some(b)) => a.extend_from_slice(b),
                (Some(a), None) => a.extend(std::iter::repeat_n(fill, n1)),
                (None, Some(b)) => {
                    let mut v = vec![fill; n0];
                    v.extend_from_slice(b);
                    *a = Some(v);
                }
                (None, None) => {}
            }
        }
        merge(&mut self.normals, &other.normals, n0, n1, Vec3::ZERO);
        merge(&mut self.uvs, &other.uvs, n0, n1, Vec2::ZERO);
        merge(&mut self.uvs1, &other.uvs1, n0, n1, Vec2::ZERO);
        merge(&mut self.colors, &other.colors, n0, n1, Vec4::ONE);
        merge(&mut self.tangents, &other.tangents, n0, n1, Vec4::ZERO);
        self.positions.extend_from_slice(&other.positions);
        self.indices.extend(other.indices.iter().map(|&i| i + base));
    }

    /// Axis-aligned bounds of the positions, or `None` for an empty mesh.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        // (in parallel over a big mesh: a minimum and a maximum, in any order)
        self.positions
            .par_iter()
            .with_min_len(1 << 16)
            .map(|&p| (p, p))
            .reduce_with(|(lo, hi), (a, b)| (lo.min(a), hi.max(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_take_tangents_along_and_mirrors_flip_their_sign() {
        let mut m = Mesh::new("t", vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![0, 1, 2]);
        m.tangents = Some(vec![Vec4::new(1.0, 0.0, 0.0, 1.0); 3]);
        // a quarter turn about z with a scale of 2: x goes to y, kept unit length
        let mut turned = m.clone();
        turned.transform(Mat4::from_scale(Vec3::splat(2.0)) * Mat4::from_rotation_z(1.5707964));
        let t = turned.tangents.unwrap()[0];
        assert!((t - Vec4::new(0.0, 1.0, 0.0, 1.0)).length() < 1e-6, "{t}");
        // a mirror in x: the tangent mirrored, the bitangent's sign and the winding flipped
        m.transform(Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)));
        assert_eq!(m.tangents.unwrap()[0], Vec4::new(-1.0, 0.0, 0.0, -1.0));
        assert_eq!(m.indices, [0, 2, 1]);
    }
}
