//! What per-patch culling keeps of each patch: a bounding sphere of its vertices and the cone of
//! its face normals (axis and the cosine of its half-angle), computed once from the object-space
//! positions, in float64, rounded outward.

use super::Patching;
use glam::{DVec3, Vec3};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// One patch's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PatchBound {
    /// bounding sphere (object space)
    pub center: Vec3,
    pub radius: f32,
    /// unit axis of the normal cone
    pub axis: Vec3,
    /// the cosine of the cone's half-angle: every face normal n has `n . axis >= cutoff`; at most
    /// zero when the cone cannot cull (normals spread over a half-space, or a degenerate face)
    pub cutoff: f32,
}

/// The bounds of every patch of a mesh in patch order (each patch a contiguous run of triangles).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PatchBounds {
    /// patch p is triangles `face_start[p]..face_start[p + 1]`
    pub face_start: Vec<u32>,
    pub patches: Vec<PatchBound>,
}

impl PatchBounds {
    /// The bounds of `patching`'s patches over `mesh`, or `None` when the patches are not
    /// contiguous runs of the index buffer (the mesh is not in patch order).
    pub fn build(mesh: &Mesh, patching: &Patching) -> Option<PatchBounds> {
        let of = &patching.patch_of_face;
        if of.len() != mesh.triangle_count() || of.windows(2).any(|w| w[1] < w[0]) {
            return None;
        }
        let n = patching.len();
        let mut face_start = vec![0u32; n + 1];
        for &p in of {
            *face_start.get_mut(p as usize + 1)? += 1;
        }
        for p in 0..n {
            face_start[p + 1] += face_start[p];
        }
        let pos = |i: u32| mesh.positions[i as usize].as_dvec3();
        let patches = (0..n)
            .into_par_iter()
            .map(|p| {
                let tris = face_start[p] as usize..face_start[p + 1] as usize;
                let idx = &mesh.indices[3 * tris.start..3 * tris.end];
                let (mut lo, mut hi) = (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN));
                for &i in idx {
                    lo = lo.min(pos(i));
                    hi = hi.max(pos(i));
                }
                let center = (lo + hi) * 0.5;
                let radius = idx
                    .iter()
                    .map(|&i| pos(i).distance(center))
                    .fold(0.0f64, f64::max);
                let normals: Vec<Option<DVec3>> = idx
                    .chunks_exact(3)
                    .map(|t| {
                        let n = (pos(t[1]) - pos(t[0])).cross(pos(t[2]) - pos(t[0]));
                        (n.length() > 0.0).then(|| n.normalize())
                    })
                    .collect();
                let sum: DVec3 = normals.iter().flatten().sum();
                let (axis, cutoff) = match (normals.iter().all(Option::is_some), sum.length()) {
                    (true, len) if len > 1e-12 => {
                        let axis = sum / len;
                        let c = normals
                            .iter()
                            .flatten()
                            .map(|n| n.dot(axis))
                            .fold(1.0f64, f64::min);
                        (axis, c)
                    }
                    _ => (DVec3::Z, -1.0),
                };
                // rounded outward: a sphere a little larger, a cone a little wider
                let c = center.as_vec3();
                PatchBound {
                    center: c,
                    radius: (radius + c.as_dvec3().distance(center)) as f32 * (1.0 + 1e-6)
                        + f32::MIN_POSITIVE,
                    axis: axis.as_vec3(),
                    cutoff: if cutoff > 0.0 {
                        (cutoff - 1e-6) as f32
                    } else {
                        -1.0
                    },
                }
            })
            .collect();
        Some(PatchBounds {
            face_start,
            patches,
        })
    }
}
