//! The order in which triangles are fed to the geometry stage, and the vertex layout that goes
//! with it.

use crate::patch::{PatchOptions, Patching};
use rxpipe_core::mesh::Mesh;
use std::fmt;

/// Triangle order fed to the geometry stage. Forsyth order also lays the vertex buffer out in the
/// order the triangles first use it (see [`VertexOrder::arrange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VertexOrder {
    /// as in the file
    #[default]
    Input,
    /// Forsyth's vertex cache optimisation (meshoptimizer), as the paper preprocesses every mesh
    Forsyth,
    /// triangles shuffled with a fixed seed (no locality at all)
    Random(u64),
    /// triangles grouped patch by patch (RXMesh patches of at most this many faces, in patch
    /// order; input order within a patch), vertices in first-use order: what the patch strategy
    /// and the per-patch culling stage work on
    Patch(u32),
}

/// The patch size of `--order patch`: the patching's default limit.
pub const PATCH_FACES: u32 = 512;

/// The seed of the random order the command line and the viewer use.
pub const RANDOM_SEED: u64 = 0x5eed;

impl rxpipe_core::named::Named for VertexOrder {
    const NAMES: &'static [&'static [&'static str]] = &[
        &["input", "file"],
        &["forsyth", "tomf"],
        &["random"],
        &["patch", "patches"],
    ];
    fn from_name(name: &str) -> Option<VertexOrder> {
        VertexOrder::parse(name)
    }
}

impl VertexOrder {
    /// Parses `input`, `forsyth`, `random` (seeded with [`RANDOM_SEED`]) or `patch` (patches of
    /// [`PATCH_FACES`] faces).
    pub fn parse(s: &str) -> Option<VertexOrder> {
        Some(match s.to_ascii_lowercase().as_str() {
            "input" | "file" => VertexOrder::Input,
            "forsyth" | "tomf" => VertexOrder::Forsyth,
            "random" => VertexOrder::Random(RANDOM_SEED),
            "patch" | "patches" => VertexOrder::Patch(PATCH_FACES),
            _ => return None,
        })
    }

    pub fn next(self) -> VertexOrder {
        match self {
            VertexOrder::Input => VertexOrder::Forsyth,
            VertexOrder::Forsyth => VertexOrder::Random(RANDOM_SEED),
            VertexOrder::Random(_) => VertexOrder::Patch(PATCH_FACES),
            VertexOrder::Patch(_) => VertexOrder::Input,
        }
    }

    /// Orders a mesh for the geometry stage: its triangles as [`VertexOrder::apply`] does, and
    /// for Forsyth order also its vertices, renumbered in the order the triangles first use them
    /// (meshoptimizer's vertex fetch optimisation; unused vertices keep their relative order at
    /// the end, so nothing is dropped). The vertex layout changes neither which vertices a
    /// triangle has nor any shading count; it makes every gather of a vertex, in the geometry
    /// stage and in triangle setup, walk memory forward instead of jumping around it. A mesh that
    /// fails [`Mesh::validate`] is left as it is, for validation to report.
    ///
    /// The patch order also lays the vertices out in first-use order, and returns the patching
    /// (renumbered to the new triangle order: patch numbers ascend along the index buffer).
    pub fn arrange(self, m: &mut Mesh) -> Option<Patching> {
        if m.validate().is_err() {
            return None;
        }
        if let VertexOrder::Patch(max_faces) = self {
            let p = crate::patch::cpu::patch_indices(&m.indices, &patch_options(max_faces))
                .expect("patching never fails within its limits");
            return Some(arrange_patches(m, p));
        }
        m.indices = self.apply(&m.indices, m.vertex_count());
        if self == VertexOrder::Forsyth {
            let n = m.vertex_count();
            let old_of = first_use_layout(&mut m.indices, n);
            m.permute_vertices(&old_of);
        }
        None
    }

    /// Reorders the triangles of an index buffer (never the corners within a triangle).
    pub fn apply(self, indices: &[u32], vertex_count: usize) -> Vec<u32> {
        match self {
            VertexOrder::Input => indices.to_vec(),
            VertexOrder::Forsyth => meshopt::optimize_vertex_cache(indices, vertex_count),
            VertexOrder::Patch(max_faces) => patch_order(indices, max_faces).0,
            VertexOrder::Random(seed) => {
                let n = indices.len() / 3;
                let mut perm: Vec<u32> = (0..n as u32).collect();
                let mut s = seed | 1;
                for i in (1..n).rev() {
                    // xorshift64*
                    s ^= s >> 12;
                    s ^= s << 25;
                    s ^= s >> 27;
                    let r = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
                    perm.swap(i, (r % (i as u64 + 1)) as usize);
                }
                perm.iter()
                    .flat_map(|&t| {
                        let t = t as usize * 3;
                        [indices[t], indices[t + 1], indices[t + 2]]
                    })
                    .collect()
            }
        }
    }
}

impl fmt::Display for VertexOrder {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            VertexOrder::Input => "input",
            VertexOrder::Forsyth => "forsyth",
            VertexOrder::Random(_) => "random",
            VertexOrder::Patch(_) => "patch",
        })
    }
}

/// The patching options of the patch order: patches of at most `max_faces` faces, clamped to
/// what a patch may hold.
pub fn patch_options(max_faces: u32) -> PatchOptions {
    PatchOptions {
        max_faces: max_faces.clamp(1, u16::MAX as u32),
        ..Default::default()
    }
}

/// The patch order of a valid mesh from a patching of its index buffer (made on either
/// backend): triangles grouped patch after patch, vertices in first-use order; returns the
/// patching renumbered to the new triangle order.
pub fn arrange_patches(m: &mut Mesh, p: Patching) -> Patching {
    let (indices, patching) = group_by_patch(&m.indices, p);
    m.indices = indices;
    let n = m.vertex_count();
    let old_of = first_use_layout(&mut m.indices, n);
    m.permute_vertices(&old_of);
    patching
}

/// The triangles of `indices` grouped by patch (see [`patch_options`]), patch after patch,
/// input order within each; and the patching renumbered to that order.
fn patch_order(indices: &[u32], max_faces: u32) -> (Vec<u32>, Patching) {
    let p = crate::patch::cpu::patch_indices(indices, &patch_options(max_faces))
        .expect("patching never fails within its limits");
    group_by_patch(indices, p)
}

fn group_by_patch(indices: &[u32], mut p: Patching) -> (Vec<u32>, Patching) {
    let mut order: Vec<u32> = (0..p.patch_of_face.len() as u32).collect();
    order.sort_by_key(|&t| p.patch_of_face[t as usize]);
    let indices = order
        .iter()
        .flat_map(|&t| {
            let t = t as usize * 3;
            [indices[t], indices[t + 1], indices[t + 2]]
        })
        .collect();
    p.patch_of_face.sort_unstable();
    (indices, p)
}

/// Renumbers the vertices of an index buffer in the order its triangles first use them, unused
/// vertices last in their old order. Rewrites `indices` and returns, for each new vertex number,
/// the old one. Indices out of range are left as they are (for validation to report).
pub fn first_use_layout(indices: &mut [u32], vertex_count: usize) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let mut new_of = vec![UNSEEN; vertex_count];
    let mut old_of = Vec::with_capacity(vertex_count);
    for i in indices.iter_mut() {
        let Some(new) = new_of.get_mut(*i as usize) else {
            continue;
        };
        if *new == UNSEEN {
            *new = old_of.len() as u32;
            old_of.push(*i);
        }
        *i = *new;
    }
    old_of.extend((0..vertex_count as u32).filter(|&v| new_of[v as usize] == UNSEEN));
    old_of
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_use_layout_keeps_every_triangle_and_vertex() {
        // vertex 1 is unused; the triangles use 4, 2, 0, 3
        let positions: Vec<glam::Vec3> = (0..5).map(|i| glam::Vec3::splat(i as f32)).collect();
        let mut m = Mesh::new("t", positions.clone(), vec![4, 2, 0, 0, 2, 3]);
        let old_of = first_use_layout(&mut m.indices, 5);
        assert_eq!(old_of, vec![4, 2, 0, 3, 1]);
        assert_eq!(m.indices, vec![0, 1, 2, 2, 1, 3]);
        m.permute_vertices(&old_of);
        let corners: Vec<f32> = m
            .indices
            .iter()
            .map(|&i| m.positions[i as usize].x)
            .collect();
        assert_eq!(corners, vec![4.0, 2.0, 0.0, 0.0, 2.0, 3.0]);
        assert_eq!(m.positions[4].x, 1.0, "the unused vertex is kept, last");
    }

    #[test]
    fn an_invalid_mesh_is_left_for_validation() {
        let p = vec![glam::Vec3::ZERO; 3];
        let mut bad_index = Mesh::new("t", p.clone(), vec![0, 1, 7]);
        VertexOrder::Forsyth.arrange(&mut bad_index);
        assert_eq!(bad_index.indices, vec![0, 1, 7]);
        let mut short_normals = Mesh::new("t", p, vec![2, 1, 0]);
        short_normals.normals = Some(vec![glam::Vec3::Y]);
        VertexOrder::Forsyth.arrange(&mut short_normals);
        assert_eq!(short_normals.indices, vec![2, 1, 0]);
        assert!(short_normals.validate().is_err());
    }

    #[test]
    fn forsyth_arrangement_walks_the_vertices_forward() {
        let mut m = rxpipe_core::mesh::from_spec("icosphere:3").unwrap();
        let before = m.clone();
        VertexOrder::Forsyth.arrange(&mut m);
        // the same triangles (as position triples), in some order
        let key = |m: &Mesh| {
            let mut t: Vec<[[u32; 3]; 3]> = m
                .indices
                .chunks_exact(3)
                .map(|t| {
                    t.iter()
                        .map(|&i| m.positions[i as usize].to_array().map(f32::to_bits))
                        .collect::<Vec<_>>()
                        .try_into()
                        .unwrap()
                })
                .collect();
            t.sort_unstable();
            t
        };
        assert_eq!(key(&m), key(&before));
        // every index is at most one past the largest index before it
        let mut next = 0;
        for &i in &m.indices {
            assert!(i <= next, "index {i} before vertex {next} was first used");
            next = next.max(i + 1);
        }
    }
}
