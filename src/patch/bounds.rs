//! What per-patch culling keeps of each patch: a bounding sphere of its vertices and the cone of
//! its face normals (axis and the cosine of its half-angle), computed once from the object-space
//! positions, in float64, rounded outward; and the test of such bounds against a view
//! ([`CullView`]), which the patch-cull stage makes per patch and the GPU's fused geometry stage
//! per batch.
//!
//! - **Outside**: the sphere lies outside one of the six clip planes the raster stage's trivial
//!   rejection uses (in object space, planes of the model-view-projection), by a small relative
//!   margin; then every triangle within has all its corners outside that plane.
//! - **Facing away** (Shirman and Abi-Ezzi's cone test): with `v` from the sphere's centre to the
//!   eye (object space), every face normal n within the cone and every point p within the sphere
//!   has `n . (eye - p) <= |v| cos(angle(axis, v) - half-angle) + radius`; when that bound is
//!   below zero by a margin, every face faces away. The margin (2% of the distance) keeps the
//!   faces nearly edge-on, whose orientation the raster stage's snapped corners decide, so the
//!   image is the one drawn without the test.
//!
//! The test is made in object space, where a face's front is its counter-clockwise side whatever
//! the model matrix: the raster stage takes the other winding as the front of a mirroring one.
//! With culling off, only the outside test runs.

use super::Patching;
use glam::{DVec3, Mat4, Vec3, Vec4};
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

impl PatchBound {
    /// The bounds of the triangles `idx` (three indices each) of `positions`: the sphere around
    /// the box of their corners, and the cone of their face normals about the normals' mean
    /// (none where a face is degenerate or the normals cancel), in float64, rounded outward. (The
    /// GPU's batch bounds, `batch_bounds` in kernels/geometry.cu, are made the same way.)
    pub fn of(positions: &[Vec3], idx: &[u32]) -> PatchBound {
        let pos = |i: u32| positions[i as usize].as_dvec3();
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
    }
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
        let patches = (0..n)
            .into_par_iter()
            .map(|p| {
                let tris = face_start[p] as usize..face_start[p + 1] as usize;
                PatchBound::of(&mesh.positions, &mesh.indices[3 * tris.start..3 * tris.end])
            })
            .collect();
        Some(PatchBounds {
            face_start,
            patches,
        })
    }
}

/// The relative margin of the outside test (as the frustum stage's).
pub const OUTSIDE_MARGIN: f32 = 1e-4;
/// The margin of the facing-away test, relative to the eye's distance from the bounds.
pub const FACING_MARGIN: f32 = 0.02;

/// What the culling test needs of one object for one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CullView {
    /// the six clip planes in object space (x + w, w - x, y + w, w - y, z, w - z >= 0)
    pub planes: [Vec4; 6],
    /// the lengths of their normals
    pub norms: [f32; 6],
    /// the eye in object space
    pub eye: Vec3,
    /// which faces the raster stage culls, in object space: +1 back faces, -1 front faces, 0
    /// none
    pub facing: f32,
}

impl CullView {
    /// The view of an object with `model` for a frame whose culling is `facing`.
    pub fn new(view_proj: Mat4, model: Mat4, eye: Vec3, facing: f32) -> CullView {
        let m = view_proj * model;
        let r = [m.row(0), m.row(1), m.row(2), m.row(3)];
        let planes = [
            r[3] + r[0],
            r[3] - r[0],
            r[3] + r[1],
            r[3] - r[1],
            r[2],
            r[3] - r[2],
        ];
        CullView {
            planes,
            norms: planes.map(|p| p.truncate().length()),
            eye: model.inverse().transform_point3(eye),
            facing,
        }
    }

    /// Whether anything within `b` may show.
    pub fn keeps(&self, b: &PatchBound) -> bool {
        let c = b.center.extend(1.0);
        let size = b.center.abs().element_sum() + b.radius;
        for (p, &n) in self.planes.iter().zip(&self.norms) {
            let slack = OUTSIDE_MARGIN * (n * size + p.w.abs());
            if p.dot(c) < -(b.radius * n) - slack {
                return false;
            }
        }
        if self.facing == 0.0 || b.cutoff <= 0.0 {
            return true;
        }
        let v = self.eye - b.center;
        let d = v.length();
        if d <= b.radius {
            return true;
        }
        let axis = b.axis * self.facing;
        let cos_phi = axis.dot(v) / d;
        // the eye inside the cone's reach: some face may face it
        if cos_phi >= b.cutoff {
            return true;
        }
        let sin_phi = (1.0 - cos_phi * cos_phi).max(0.0).sqrt();
        let sin_theta = (1.0 - b.cutoff * b.cutoff).max(0.0).sqrt();
        // the largest n . v over the cone: |v| cos(phi - theta)
        let best = d * (cos_phi * b.cutoff + sin_phi * sin_theta);
        best + b.radius > -FACING_MARGIN * d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold_their_triangles_and_the_cone_their_normals() {
        let p = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(2.0, 2.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
        ];
        // two counter-clockwise triangles in the z = 0 plane: a sphere around the square's box,
        // a cone about +z as narrow as it gets (rounded outward)
        let b = PatchBound::of(&p, &[0, 1, 2, 1, 3, 2]);
        assert_eq!(b.center, Vec3::new(1.0, 1.0, 0.0));
        assert!(b.radius >= 2f32.sqrt() && b.radius < 2f32.sqrt() * 1.00001);
        assert_eq!(b.axis, Vec3::Z);
        assert!(b.cutoff < 1.0 && b.cutoff > 0.99999);
        // one of them turned over: the normals cancel, no cone
        assert_eq!(PatchBound::of(&p, &[0, 1, 2, 1, 2, 3]).cutoff, -1.0);
        // a face without area: no cone either
        assert_eq!(PatchBound::of(&p, &[0, 1, 2, 0, 4, 3]).cutoff, -1.0);
    }
}
