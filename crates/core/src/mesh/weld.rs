//! Welding: one vertex for each distinct vertex value of a mesh, unused vertices dropped, every
//! triangle kept in order as the same triple of values. Vertices compare by keys: each attribute
//! word mapped to an order-preserving integer ([`ordered_bits`]), positions optionally snapped
//! to a grid ([`weld_bits`]). The loaders weld triangle soups with [`weld`]; the re-indexing
//! stage (`rxpipe::reindex`) is its parallel and GPU form, checked against it.

use super::{Mesh, MeshError};
use crate::execution::position_first;
use glam::{Vec2, Vec3, Vec4};

/// Why a mesh cannot be welded.
#[derive(Debug, thiserror::Error)]
pub enum WeldError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The mesh has no triangles: there is nothing to keep.
    #[error("mesh '{mesh}': no triangles to re-index")]
    Empty { mesh: String },
    /// An attribute is NaN (positions are checked by [`Mesh::validate`]).
    #[error("mesh '{mesh}': vertex {vertex} has a NaN {attribute}")]
    NaN {
        mesh: String,
        vertex: usize,
        attribute: &'static str,
    },
    /// The weld cell size is not a positive finite number.
    #[error("weld cell size must be positive and finite, got {cell}")]
    WeldCell { cell: f32 },
    /// A position is too far out for the weld grid (its cell index does not fit 32 bits).
    #[error("mesh '{mesh}': vertex {vertex} lies outside the weld grid of cell size {cell}")]
    WeldRange {
        mesh: String,
        vertex: usize,
        cell: f32,
    },
}

/// A welded mesh and how many of the input's vertices its triangles used.
#[derive(Debug, Clone)]
pub struct Welded {
    pub mesh: Mesh,
    /// the input vertices some triangle referenced
    pub used: usize,
}

/// Welds `mesh` on one thread with a hash map: every index of every triangle, in order, looks
/// its vertex's key up and appends the vertex when new, so new vertices come in order of their
/// first reference. `weld` is the grid cell positions snap to; `None` compares them exactly.
pub fn weld(mesh: &Mesh, weld: Option<f32>) -> Result<Welded, WeldError> {
    let keys = Keys::new(mesh, weld)?;
    // (at least 12 words: FxHash mixes the high bits of the last words poorly, and floats
    // differ there; a grid's 3-word positions made the map 25 times slower)
    Ok(if keys.words <= 12 {
        serial_w::<12>(mesh, &keys)
    } else {
        serial_w::<MAX_WORDS>(mesh, &keys)
    })
}

fn serial_w<const W: usize>(mesh: &Mesh, keys: &Keys) -> Welded {
    let mut map: rustc_hash::FxHashMap<[u32; W], u32> = Default::default();
    // vertex index -> new index, so a vertex referenced again is not hashed again
    let mut seen = vec![u32::MAX; mesh.vertex_count()];
    let mut src = Vec::new();
    let mut used = 0usize;
    let indices = mesh
        .indices
        .iter()
        .map(|&i| {
            let s = &mut seen[i as usize];
            if *s == u32::MAX {
                used += 1;
                *s = *map.entry(keys.key_n::<W>(i as usize)).or_insert_with(|| {
                    src.push(i);
                    src.len() as u32 - 1
                });
            }
            *s
        })
        .collect();
    let out = gather_mesh(mesh, &src, indices);
    Welded { mesh: out, used }
}

/// The largest number of 32-bit words of a vertex key (position 3, normal 3, two uv sets 2 each,
/// colour 4, tangent 4).
pub const MAX_WORDS: usize = 18;

/// A float's bits mapped so that unsigned integer order is float order, with `-0.0` taken as
/// `+0.0` (the one policy on signed zeros).
///
/// ```
/// use rxpipe_core::mesh::weld::ordered_bits;
/// assert_eq!(ordered_bits(-0.0), ordered_bits(0.0));
/// assert!(ordered_bits(-1.0) < ordered_bits(-0.5));
/// assert!(ordered_bits(0.5) < ordered_bits(2.0));
/// ```
pub fn ordered_bits(f: f32) -> u32 {
    let b = if f == 0.0 { 0 } else { f.to_bits() };
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// A weld grid coordinate, as an order-preserving 32-bit key; `None` outside the grid's range.
pub fn weld_bits(p: f32, cell: f32) -> Option<u32> {
    let q = (p / cell).round();
    if q.abs() < 2_147_483_520.0 {
        Some((q as i32 as u32) ^ 0x8000_0000)
    } else {
        None
    }
}

/// The comparison keys of a mesh's vertices: the words of each present attribute, checked.
pub struct Keys<'a> {
    mesh: &'a Mesh,
    weld: Option<f32>,
    pub words: usize,
}

impl<'a> Keys<'a> {
    /// Validates the mesh (indices, finite positions, NaN attributes, weld range, not empty).
    pub fn new(mesh: &'a Mesh, weld: Option<f32>) -> Result<Keys<'a>, WeldError> {
        mesh.validate()?;
        if mesh.indices.is_empty() {
            return Err(WeldError::Empty {
                mesh: mesh.name.clone(),
            });
        }
        if let Some(cell) = weld {
            if !(cell.is_finite() && cell > 0.0) {
                return Err(WeldError::WeldCell { cell });
            }
            let out_of_range =
                |p: &glam::Vec3| p.to_array().iter().any(|&c| weld_bits(c, cell).is_none());
            if let Some(vertex) = position_first(&mesh.positions, out_of_range) {
                return Err(WeldError::WeldRange {
                    mesh: mesh.name.clone(),
                    vertex,
                    cell,
                });
            }
        }
        let nan = |attribute: &'static str, vertex: Option<usize>| match vertex {
            Some(vertex) => Err(WeldError::NaN {
                mesh: mesh.name.clone(),
                vertex,
                attribute,
            }),
            None => Ok(()),
        };
        if let Some(n) = &mesh.normals {
            nan("normal", position_first(n, |v| v.is_nan()))?;
        }
        if let Some(t) = &mesh.uvs {
            nan("texture coordinate", position_first(t, |v| v.is_nan()))?;
        }
        if let Some(t) = &mesh.uvs1 {
            nan(
                "second texture coordinate",
                position_first(t, |v| v.is_nan()),
            )?;
        }
        if let Some(c) = &mesh.colors {
            nan("colour", position_first(c, |v| v.is_nan()))?;
        }
        if let Some(t) = &mesh.tangents {
            nan("tangent", position_first(t, |v| v.is_nan()))?;
        }
        Ok(Keys {
            mesh,
            weld,
            words: vertex_floats(mesh),
        })
    }

    /// Vertex `i`'s key; words past `self.words` are zero.
    #[inline]
    pub fn key(&self, i: usize) -> [u32; MAX_WORDS] {
        self.key_n::<MAX_WORDS>(i)
    }

    /// Vertex `i`'s key in `W` words (at least `self.words`; the rest zero).
    #[inline(always)]
    pub fn key_n<const W: usize>(&self, i: usize) -> [u32; W] {
        let mut k = [0u32; W];
        let p = self.mesh.positions[i].to_array();
        for (k, c) in k.iter_mut().zip(p) {
            *k = match self.weld {
                // range checked in `new`
                Some(cell) => weld_bits(c, cell).unwrap_or(0),
                None => ordered_bits(c),
            };
        }
        let mut w = 3;
        attribute_floats(self.mesh, i, |c| {
            k[w] = ordered_bits(c);
            w += 1;
        });
        k
    }
}

/// How many floats a vertex of `mesh` has: position 3, then normal 3, uv 2, second uv 2, colour
/// 4 and tangent 4 where present (the words of its key, and of the GPU methods' vertices).
pub fn vertex_floats(mesh: &Mesh) -> usize {
    3 + 3 * mesh.normals.is_some() as usize
        + 2 * mesh.uvs.is_some() as usize
        + 2 * mesh.uvs1.is_some() as usize
        + 4 * mesh.colors.is_some() as usize
        + 4 * mesh.tangents.is_some() as usize
}

/// Vertex `i` of `mesh` as [`vertex_floats`] floats in that order; the rest zero.
#[inline]
pub fn vertex_words(mesh: &Mesh, i: usize) -> [f32; MAX_WORDS] {
    let mut v = [0f32; MAX_WORDS];
    v[..3].copy_from_slice(&mesh.positions[i].to_array());
    let mut w = 3;
    attribute_floats(mesh, i, |c| {
        v[w] = c;
        w += 1;
    });
    v
}

/// Each float of vertex `i`'s attributes after its position, in [`vertex_floats`]' order:
/// normal, uv, second uv, colour and tangent where present.
#[inline(always)]
fn attribute_floats(mesh: &Mesh, i: usize, mut f: impl FnMut(f32)) {
    if let Some(n) = &mesh.normals {
        n[i].to_array().into_iter().for_each(&mut f);
    }
    if let Some(t) = &mesh.uvs {
        t[i].to_array().into_iter().for_each(&mut f);
    }
    if let Some(t) = &mesh.uvs1 {
        t[i].to_array().into_iter().for_each(&mut f);
    }
    if let Some(c) = &mesh.colors {
        c[i].to_array().into_iter().for_each(&mut f);
    }
    if let Some(t) = &mesh.tangents {
        t[i].to_array().into_iter().for_each(&mut f);
    }
}

/// A mesh like `like` (its name, material and which attributes it has) from vertices laid out as
/// [`vertex_words`] writes them, `floats` each, and `indices`.
pub fn mesh_from_words(like: &Mesh, vert: &[f32], floats: usize, indices: Vec<u32>) -> Mesh {
    use rayon::prelude::*;
    let chunks = || {
        vert.par_chunks_exact(floats)
            .with_min_len(crate::execution::GRAIN)
    };
    let mut at = 3;
    let mut take = |present: bool, n: usize| {
        let o = at;
        at += n * present as usize;
        present.then_some(o)
    };
    let normal = take(like.normals.is_some(), 3);
    let uv = take(like.uvs.is_some(), 2);
    let uv1 = take(like.uvs1.is_some(), 2);
    let color = take(like.colors.is_some(), 4);
    let tangent = take(like.tangents.is_some(), 4);
    let v3 = |o: usize| chunks().map(|c| Vec3::from_slice(&c[o..])).collect();
    let v4 = |o: usize| chunks().map(|c| Vec4::from_slice(&c[o..])).collect();
    let v2 = |o: usize| chunks().map(|c| Vec2::from_slice(&c[o..])).collect();
    Mesh {
        name: like.name.clone(),
        positions: v3(0),
        normals: normal.map(v3),
        uvs: uv.map(v2),
        uvs1: uv1.map(v2),
        colors: color.map(v4),
        tangents: tangent.map(v4),
        indices,
        base_color: like.base_color,
        material: like.material.clone(),
    }
}

/// Builds the output mesh: the vertices `src` of `mesh` in that order, with new `indices`.
pub fn gather_mesh(mesh: &Mesh, src: &[u32], indices: Vec<u32>) -> Mesh {
    use rayon::prelude::*;
    fn pick<T: Copy + Send + Sync>(a: &[T], src: &[u32]) -> Vec<T> {
        src.par_iter()
            .with_min_len(crate::execution::GRAIN)
            .map(|&s| a[s as usize])
            .collect()
    }
    Mesh {
        name: mesh.name.clone(),
        positions: pick(&mesh.positions, src),
        normals: mesh.normals.as_deref().map(|n| pick(n, src)),
        uvs: mesh.uvs.as_deref().map(|t| pick(t, src)),
        uvs1: mesh.uvs1.as_deref().map(|t| pick(t, src)),
        colors: mesh.colors.as_deref().map(|t| pick(t, src)),
        tangents: mesh.tangents.as_deref().map(|t| pick(t, src)),
        indices,
        base_color: mesh.base_color,
        material: mesh.material.clone(),
    }
}
