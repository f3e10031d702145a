//! The normals stage on the CPU: per vertex, the sum over its corners (from the vertex-face
//! adjacency, in corner order) of the face's weighted normal, in double precision, in parallel
//! over vertices (rayon); flat normals split every triangle into three vertices of its own.
//! Through the patches' queries: [`patch_fv`] adds each owned face's corners to its vertices
//! (patch by patch), [`patch_vf`] sums each owned vertex's faces inside its patch (in parallel
//! over patches).

use super::NormalsMode;
use crate::patch::PatchData;
use glam::{DVec3, Vec3};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;
use rxpipe_core::mesh::VertexFaces;

/// The weighted normal corner `k` of the triangle `p` contributes to its vertex (zero for a
/// degenerate triangle).
pub fn corner_weight(p: [DVec3; 3], k: usize, mode: NormalsMode) -> DVec3 {
    let n = (p[1] - p[0]).cross(p[2] - p[0]);
    let (a, b) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
    match mode {
        NormalsMode::Angle => {
            let l = n.length();
            if l == 0.0 {
                return DVec3::ZERO;
            }
            n * (a.cross(b).length().atan2(a.dot(b)) / l)
        }
        NormalsMode::Max => {
            let d = a.length_squared() * b.length_squared();
            if d == 0.0 {
                return DVec3::ZERO;
            }
            n * (1.0 / d)
        }
        _ => n,
    }
}

/// The corner positions of local face `f` of patch `p`, with its global vertices.
fn patch_face(p: &crate::patch::Patch, f: usize, pos: &[Vec3]) -> ([u16; 3], [DVec3; 3]) {
    let l = p.face_vertices(f);
    (
        l,
        l.map(|v| pos[p.vertices[v as usize] as usize].as_dvec3()),
    )
}

/// Smooth normals through the FV query: every patch's owned faces add their corners' weights to
/// their vertices (patch by patch, face by face: a fixed order), then every sum is normalised.
pub fn patch_fv(mesh: &mut Mesh, mode: NormalsMode, data: &PatchData) {
    let mut acc = vec![DVec3::ZERO; mesh.vertex_count()];
    for p in &data.patches {
        for f in 0..p.owned_faces as usize {
            let (l, q) = patch_face(p, f, &mesh.positions);
            for k in 0..3 {
                acc[p.vertices[l[k] as usize] as usize] += corner_weight(q, k, mode);
            }
        }
    }
    mesh.normals = Some(
        acc.into_par_iter()
            .with_min_len(rxpipe_core::execution::GRAIN)
            .map(unit)
            .collect(),
    );
}

/// Smooth normals through the VF query: every patch sums, for each vertex it owns, the weights
/// of its corners in the patch's faces (ribbon included: the patch holds the vertex's whole
/// fan), in parallel over patches. A vertex no face uses gets a zero normal.
pub fn patch_vf(mesh: &mut Mesh, mode: NormalsMode, data: &PatchData) {
    let pos = &mesh.positions;
    let per_patch: Vec<Vec<DVec3>> = data
        .patches
        .par_iter()
        .map(|p| {
            let owned = p.owned_vertices as usize;
            let mut sum = vec![DVec3::ZERO; owned];
            for f in 0..p.faces.len() {
                let l = p.face_vertices(f);
                if l.iter().all(|&v| v as usize >= owned) {
                    continue;
                }
                let (_, q) = patch_face(p, f, pos);
                for (k, v) in l.into_iter().enumerate() {
                    if let Some(s) = sum.get_mut(v as usize) {
                        *s += corner_weight(q, k, mode);
                    }
                }
            }
            sum
        })
        .collect();
    let mut normals = vec![Vec3::ZERO; mesh.vertex_count()];
    for (p, sums) in data.patches.iter().zip(per_patch) {
        for (v, s) in p.vertices.iter().zip(sums) {
            normals[*v as usize] = unit(s);
        }
    }
    mesh.normals = Some(normals);
}

/// `v` normalised (as `v * (1 / |v|)`) and rounded to float; zero stays zero.
pub fn unit(v: DVec3) -> Vec3 {
    let l = v.length();
    let r = if l > 0.0 { 1.0 / l } else { 0.0 };
    (v * r).as_vec3()
}

/// Flat normals: every triangle gets three vertices of its own with its unit face normal (the
/// topology changes: indices become 0, 1, 2, ...).
pub fn flat(mesh: &mut Mesh) {
    let pos = &mesh.positions;
    let tris = mesh.indices.len() / 3;
    let corners = &mesh.indices[..3 * tris];
    let normals: Vec<Vec3> = corners
        .par_chunks_exact(3)
        .with_min_len(rxpipe_core::execution::GRAIN)
        .flat_map_iter(|t| {
            let p = [0, 1, 2].map(|k| pos[t[k] as usize].as_dvec3());
            std::iter::repeat_n(unit((p[1] - p[0]).cross(p[2] - p[0])), 3)
        })
        .collect();
    let positions = corners.iter().map(|&i| pos[i as usize]).collect();
    // (each attribute follows its corner: new vertex k is corner k)
    fn at_corners<T: Copy>(a: &Option<Vec<T>>, corners: &[u32]) -> Option<Vec<T>> {
        a.as_ref()
            .map(|a| corners.iter().map(|&i| a[i as usize]).collect())
    }
    mesh.uvs = at_corners(&mesh.uvs, corners);
    mesh.uvs1 = at_corners(&mesh.uvs1, corners);
    mesh.colors = at_corners(&mesh.colors, corners);
    mesh.tangents = at_corners(&mesh.tangents, corners);
    mesh.positions = positions;
    mesh.normals = Some(normals);
    mesh.indices = (0..3 * tris as u32).collect();
}

/// Area- or angle-weighted normals of `mesh`, gathered per vertex over `adjacency` (that of
/// `mesh`) in corner order.
pub fn smooth(mesh: &mut Mesh, mode: NormalsMode, adjacency: &VertexFaces) {
    let pos = &mesh.positions;
    let idx = &mesh.indices;
    let corner =
        |t: usize| -> [DVec3; 3] { [0, 1, 2].map(|k| pos[idx[3 * t + k] as usize].as_dvec3()) };
    let normals = (0..mesh.vertex_count())
        .into_par_iter()
        .with_min_len(rxpipe_core::execution::GRAIN)
        .map(|v| {
            let mut s = DVec3::ZERO;
            for &c in adjacency.corners_of(v) {
                let c = c as usize;
                s += corner_weight(corner(c / 3), c % 3, mode);
            }
            unit(s)
        })
        .collect();
    mesh.normals = Some(normals);
}
