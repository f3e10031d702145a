//! The normals stage on the CPU: per vertex, the sum over its corners (from the vertex-face
//! adjacency, in corner order) of the face's weighted normal, in double precision, in parallel
//! over vertices (rayon); flat normals split every triangle into three vertices of its own.

use super::NormalsMode;
use crate::mesh::Mesh;
use crate::passes::VertexFaces;
use glam::{DVec3, Vec3};
use rayon::prelude::*;

/// The weighted normal corner `k` of the triangle `p` contributes to its vertex.
pub fn corner_weight(p: [DVec3; 3], k: usize, mode: NormalsMode) -> DVec3 {
    let n = (p[1] - p[0]).cross(p[2] - p[0]);
    match mode {
        NormalsMode::Angle => {
            let l = n.length();
            if l == 0.0 {
                return DVec3::ZERO;
            }
            let (a, b) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
            (n / l) * a.cross(b).length().atan2(a.dot(b))
        }
        _ => n,
    }
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
        .flat_map_iter(|t| {
            let p = [0, 1, 2].map(|k| pos[t[k] as usize].as_dvec3());
            std::iter::repeat_n(unit((p[1] - p[0]).cross(p[2] - p[0])), 3)
        })
        .collect();
    let positions = corners.iter().map(|&i| pos[i as usize]).collect();
    mesh.uvs = mesh
        .uvs
        .as_ref()
        .map(|u| corners.iter().map(|&i| u[i as usize]).collect());
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
