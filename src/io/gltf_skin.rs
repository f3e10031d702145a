//! Morph targets and skins: a primitive's vertices take the shape its morph weights give and,
//! where its node has a skin, the pose its joints hold (glTF 2.0, sections 3.7.2.2 "Morph
//! Targets" and 3.7.3 "Skins"), at time 0 when the file is loaded.
//!
//! Both are host work. The posed vertices are what every backend then draws, as it draws any
//! mesh, so the CPU and the GPU see the same triangles. Where an animation moves the joints or
//! drives the weights, the loader keeps what posing again takes ([`crate::animation::Deformed`]),
//! and [`morph`] and [`pose`] shape the mesh at another time.

use super::gltf::{check_accessor, read_floats};
use glam::{Mat3, Mat4, Vec3, Vec4};
use gltf::accessor::{DataType as T, Dimensions as D};

/// A primitive's vertex attributes that morphing and skinning move.
pub(crate) struct Attributes<'v> {
    pub positions: &'v mut [Vec3],
    pub normals: Option<&'v mut [Vec3]>,
    pub tangents: Option<&'v mut [Vec4]>,
}

/// One morph target's displacements of positions, normals and tangents (each where it has
/// them).
pub type MorphTarget = [Option<Vec<Vec3>>; 3];

/// A primitive's morph targets, every accessor checked against its `n` vertices; target `t`'s
/// displacements are read only where `read(t)` (the others are empty).
pub(super) fn morph_targets<'a, 's>(
    prim: &gltf::Primitive<'a>,
    n: usize,
    quantized: bool,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    read: impl Fn(usize) -> bool,
) -> Result<Vec<MorphTarget>, String> {
    // the component types of displacements: floats, or with KHR_mesh_quantization signed
    // integers (normalized or not, for positions; normalized for normals and tangents)
    let types: &[T] = if quantized {
        &[T::F32, T::I8, T::I16]
    } else {
        &[T::F32]
    };
    let mut targets = Vec::new();
    for (t, target) in prim.morph_targets().enumerate() {
        let one = |what: &str, a: Option<gltf::Accessor<'a>>| -> Result<_, String> {
            let Some(a) = a else { return Ok(None) };
            let what = format!("morph target {t} {what}");
            check_accessor(&what, a.clone(), types, D::Vec3, quantized)?;
            if a.count() != n {
                return Err(format!(
                    "{what} accessor {} has {} elements for {n} vertices",
                    a.index(),
                    a.count()
                ));
            }
            if !read(t) {
                return Ok(None);
            }
            let d = read_floats::<3>(a, data.clone(), false)
                .ok_or_else(|| format!("{what}: its buffer is missing"))?;
            Ok(Some(d.into_iter().map(Vec3::from_array).collect()))
        };
        targets.push([
            one("POSITION", target.positions())?,
            one("NORMAL", target.normals())?,
            one("TANGENT", target.tangents())?,
        ]);
    }
    Ok(targets)
}

/// Adds each morph target's displacements, times its weight (a target without one weighs 0),
/// to the positions, normals and tangents (normals and tangents renormalised).
pub(crate) fn morph(targets: &[MorphTarget], weights: &[f32], v: &mut Attributes) {
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

/// A skin's joints (their nodes) and each one's inverse bind matrix (the identity where the
/// skin has none), checked.
pub(super) fn joints<'a, 's>(
    skin: &gltf::Skin<'a>,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<(Vec<usize>, Vec<Mat4>), String> {
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    if joints.is_empty() {
        return Err("it has no joints".into());
    }
    let inverse_bind: Vec<Mat4> = match skin.inverse_bind_matrices() {
        None => vec![Mat4::IDENTITY; joints.len()],
        Some(a) => {
            check_accessor("inverseBindMatrices", a.clone(), &[T::F32], D::Mat4, false)?;
            if a.count() < joints.len() {
                return Err(format!(
                    "its inverseBindMatrices accessor {} has {} matrices for {} joints",
                    a.index(),
                    a.count(),
                    joints.len()
                ));
            }
            gltf::accessor::Iter::<[[f32; 4]; 4]>::new(a, data)
                .ok_or("its inverseBindMatrices' buffer is missing")?
                .take(joints.len())
                .map(|m| Mat4::from_cols_array_2d(&m))
                .collect()
        }
    };
    Ok((joints, inverse_bind))
}

/// The joint matrices of a skin whose joints are the nodes `joints`, in a pose (`world`: every
/// node's world matrix): each joint's world matrix times its inverse bind matrix. `None` where
/// a joint is not a node of the pose.
pub(crate) fn joint_matrices(
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

/// A skinned primitive's JOINTS_n / WEIGHTS_n pairs (none: not skinned), checked against its
/// `n` vertices and its skin's `joints` joints: every weight finite, every joint a vertex weighs
/// one of the skin's.
pub(super) fn joint_sets<'a, 's>(
    prim: &gltf::Primitive<'a>,
    n: usize,
    joints: usize,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<JointSets, String> {
    use gltf::Semantic;
    let mut sets: JointSets = Vec::new();
    for set in 0.. {
        let (j, w) = (
            prim.get(&Semantic::Joints(set)),
            prim.get(&Semantic::Weights(set)),
        );
        let (j, w) = match (j, w) {
            (None, None) => break,
            (Some(j), Some(w)) => (j, w),
            _ => {
                return Err(format!(
                    "it has only one of JOINTS_{set} and WEIGHTS_{set}, which go in pairs"
                ))
            }
        };
        check_accessor(
            &format!("JOINTS_{set}"),
            j.clone(),
            &[T::U8, T::U16],
            D::Vec4,
            false,
        )?;
        check_accessor(
            &format!("WEIGHTS_{set}"),
            w.clone(),
            &[T::F32, T::U8, T::U16],
            D::Vec4,
            false,
        )?;
        for a in [&j, &w] {
            if a.count() != n {
                return Err(format!(
                    "JOINTS_{set} or WEIGHTS_{set} accessor {} has {} elements for {n} vertices",
                    a.index(),
                    a.count()
                ));
            }
        }
        let missing = || format!("JOINTS_{set} or WEIGHTS_{set}: its buffer is missing");
        let ids: Vec<[u16; 4]> = match j.data_type() {
            T::U8 => gltf::accessor::Iter::<[u8; 4]>::new(j, data.clone())
                .ok_or_else(missing)?
                .map(|e| e.map(u16::from))
                .collect(),
            _ => gltf::accessor::Iter::<[u16; 4]>::new(j, data.clone())
                .ok_or_else(missing)?
                .collect(),
        };
        let weights = read_floats::<4>(w, data.clone(), true).ok_or_else(missing)?;
        sets.push((ids, weights));
    }
    for k in 0..n {
        for (ids, weights) in &sets {
            for (&id, &wt) in ids[k].iter().zip(&weights[k]) {
                if !wt.is_finite() {
                    return Err(format!("vertex {k} has the joint weight {wt}"));
                }
                if wt != 0.0 && id as usize >= joints {
                    return Err(format!(
                        "vertex {k} names joint {id} (weight {wt}), but the skin has {joints} joint(s)"
                    ));
                }
            }
        }
    }
    Ok(sets)
}

/// Moves skinned vertices by their joints: each vertex by the weighted sum of the matrices of
/// the joints it names in `sets` (weights normalised to sum 1), normals by that sum's inverse
/// transpose, tangents by the sum itself. The result is in world space: the skinned node's own
/// transform is ignored, as the specification says. A vertex whose weights are all 0 is placed
/// by `node` (its node's world matrix) instead. `sets` must have passed [`joint_sets`]'s checks
/// for `joints`.
pub(crate) fn pose(sets: &JointSets, joints: &[Mat4], node: Mat4, v: &mut Attributes) {
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
