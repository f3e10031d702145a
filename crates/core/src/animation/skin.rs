//! Morph targets and skins as maths (glTF 2.0, sections 3.7.2.2 "Morph Targets" and 3.7.3
//! "Skins"): a primitive's vertices shaped by its morph weights and posed by its joints. The
//! loader (`rxpipe::io`) poses a mesh at time 0 with them, the animation ([`super`]) at any
//! other time.

use glam::{Mat3, Mat4, Vec3, Vec4};

/// A primitive's vertex attributes that morphing and skinning move.
pub struct Attributes<'v> {
    pub positions: &'v mut [Vec3],
    pub normals: Option<&'v mut [Vec3]>,
    pub tangents: Option<&'v mut [Vec4]>,
}

/// One morph target's displacements of positions, normals and tangents (each where it has
/// them).
pub type MorphTarget = [Option<Vec<Vec3>>; 3];

/// Adds each morph target's displacements, times its weight (a target without one weighs 0),
/// to the positions, normals and tangents (normals and tangents renormalised).
pub fn morph(targets: &[MorphTarget], weights: &[f32], v: &mut Attributes) {
    let mut moved = (false, false);
    for (t, [dp, dn, dt]) in targets.iter().enumerate() {
        let w = weights.get(t).copied().unwrap_or(0.0);
        if w == 0.0 {
            continue;
        }
        for (p, d) in v.positions.iter_mut().zip(dp.iter().flatten()) {
            *p += w * *d;
        }
        if let (Some(ns), Some(d)) = (v.normals.as_deref_mut(), dn) {
            for (nv, d) in ns.iter_mut().zip(d) {
                *nv += w * *d;
            }
            moved.0 = true;
        }
        if let (Some(ts), Some(d)) = (v.tangents.as_deref_mut(), dt) {
            for (tv, d) in ts.iter_mut().zip(d) {
                *tv += (w * *d).extend(0.0);
            }
            moved.1 = true;
        }
    }
    // (a displaced normal or tangent is a direction again once renormalised; one that the
    // displacements cancelled becomes zero, as `Mesh::transform` leaves a flattened one)
    if moved.0 {
        for nv in v.normals.iter_mut().flat_map(|n| n.iter_mut()) {
            *nv = nv.normalize_or_zero();
        }
    }
    if moved.1 {
        for tv in v.tangents.iter_mut().flat_map(|t| t.iter_mut()) {
            *tv = tv.truncate().normalize_or_zero().extend(tv.w);
        }
    }
}

/// The joint matrices of a skin whose joints are the nodes `joints`, in a pose (`world`: every
/// node's world matrix): each joint's world matrix times its inverse bind matrix. `None` where
/// a joint is not a node of the pose.
pub fn joint_matrices(
    joints: &[usize],
    inverse_bind: &[Mat4],
    world: &[Mat4],
) -> Option<Vec<Mat4>> {
    joints
        .iter()
        .zip(inverse_bind)
        .map(|(&j, ib)| world.get(j).map(|w| *w * *ib))
        .collect()
}

/// Each JOINTS_n / WEIGHTS_n pair of a primitive, read whole (24 bytes a vertex a pair).
pub type JointSets = Vec<(Vec<[u16; 4]>, Vec<[f32; 4]>)>;

/// Moves skinned vertices by their joints: each vertex by the weighted sum of the matrices of
/// the joints it names in `sets` (weights normalised to sum 1), normals by that sum's inverse
/// transpose, tangents by the sum itself. The result is in world space: the skinned node's own
/// transform is ignored, as the specification says. A vertex whose weights are all 0 is placed
/// by `node` (its node's world matrix) instead. `sets` must have passed the loader's checks for
/// `joints` (every id below their count, as many entries as vertices).
pub fn pose(sets: &JointSets, joints: &[Mat4], node: Mat4, v: &mut Attributes) {
    for k in 0..v.positions.len() {
        // the sum of the matrices the vertex names, by weight, and of its weights
        let (mut sum, mut total) = (Mat4::ZERO, 0f32);
        for (ids, weights) in sets {
            for (&id, &wt) in ids[k].iter().zip(&weights[k]) {
                if let Some(m) = joints.get(id as usize).filter(|_| wt != 0.0) {
                    sum += *m * wt;
                    total += wt;
                }
            }
        }
        let m = if total != 0.0 {
            sum * total.recip()
        } else {
            node
        };
        v.positions[k] = m.transform_point3(v.positions[k]);
        let linear = Mat3::from_mat4(m);
        // (the cofactor matrix is the inverse transpose times the determinant: no division, so
        // a flattening joint gives a zero normal instead of infinities)
        let det = linear.determinant();
        let sign = if det < 0.0 { -1.0 } else { 1.0 };
        if let Some(nv) = v.normals.as_deref_mut().map(|ns| &mut ns[k]) {
            let (c0, c1, c2) = (linear.x_axis, linear.y_axis, linear.z_axis);
            let cof = c1.cross(c2) * nv.x + c2.cross(c0) * nv.y + c0.cross(c1) * nv.z;
            *nv = (cof * sign).normalize_or_zero();
        }
        if let Some(tv) = v.tangents.as_deref_mut().map(|ts| &mut ts[k]) {
            let xyz = (linear * tv.truncate()).normalize_or_zero();
            // (a mirroring matrix turns the bitangent's handedness)
            *tv = xyz.extend(tv.w * sign);
        }
    }
}
