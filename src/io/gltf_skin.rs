//! Morph targets and skins, applied when a glTF file is loaded: a primitive's vertices take the
//! shape its default morph weights give and, where its node has a skin, the pose its joints hold
//! at time 0 (glTF 2.0, sections 3.7.2.2 "Morph Targets" and 3.7.3 "Skins").
//!
//! Both are host work done once per file. The posed vertices are what every backend then
//! draws, as it draws any mesh, so the CPU and the GPU see the same triangles. Animations of
//! the joints or of the weights are not played (the loader says so in a note): the pose is the
//! one the scene shows at time 0, where its node animations also start.

use super::gltf::{check_accessor, read_floats};
use glam::{Mat3, Mat4, Vec3, Vec4};
use gltf::accessor::{DataType as T, Dimensions as D};

/// A primitive's vertex attributes that morphing and skinning move.
pub(super) struct Attributes<'v> {
    pub positions: &'v mut [Vec3],
    pub normals: Option<&'v mut [Vec3]>,
    pub tangents: Option<&'v mut [Vec4]>,
}

/// Adds each morph target's displacements, times its weight, to the primitive's positions,
/// normals and tangents (normals and tangents renormalised). `weights` are the node's, or else
/// the mesh's (a target without one weighs 0). Every target's accessors are checked, and a
/// target whose weight is 0 is not read.
pub(super) fn morph<'a, 's>(
    prim: &gltf::Primitive<'a>,
    weights: &[f32],
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    quantized: bool,
    v: &mut Attributes,
) -> Result<(), String> {
    let n = v.positions.len();
    // the component types of displacements: floats, or with KHR_mesh_quantization signed
    // integers (normalized or not, for positions; normalized for normals and tangents)
    let types: &[T] = if quantized {
        &[T::F32, T::I8, T::I16]
    } else {
        &[T::F32]
    };
    let mut moved = (false, false);
    for (t, target) in prim.morph_targets().enumerate() {
        let w = weights.get(t).copied().unwrap_or(0.0);
        if !w.is_finite() {
            return Err(format!("morph target {t}'s weight is {w}"));
        }
        let read = |what: &str, a: Option<gltf::Accessor<'a>>| -> Result<_, String> {
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
            if w == 0.0 {
                return Ok(None);
            }
            let d = read_floats::<3>(a, data.clone(), false)
                .ok_or_else(|| format!("{what}: its buffer is missing"))?;
            Ok(Some(d))
        };
        let (dp, dn, dt) = (
            read("POSITION", target.positions())?,
            read("NORMAL", target.normals())?,
            read("TANGENT", target.tangents())?,
        );
        for (p, d) in v.positions.iter_mut().zip(dp.iter().flatten()) {
            *p += w * Vec3::from_array(*d);
        }
        if let (Some(ns), Some(d)) = (v.normals.as_deref_mut(), &dn) {
            for (nv, d) in ns.iter_mut().zip(d) {
                *nv += w * Vec3::from_array(*d);
            }
            moved.0 = true;
        }
        if let (Some(ts), Some(d)) = (v.tangents.as_deref_mut(), &dt) {
            for (tv, d) in ts.iter_mut().zip(d) {
                *tv += (w * Vec3::from_array(*d)).extend(0.0);
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
    Ok(())
}

/// A skin's joint matrices at time 0: each joint's world matrix in `pose` (every node's, at
/// time 0) times its inverse bind matrix (the identity where the skin has none).
pub(super) fn joint_matrices<'a, 's>(
    skin: &gltf::Skin<'a>,
    pose: &[Mat4],
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Vec<Mat4>, String> {
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
                .map(|m| Mat4::from_cols_array_2d(&m))
                .collect()
        }
    };
    joints
        .iter()
        .zip(&inverse_bind)
        .map(|(&j, ib)| {
            pose.get(j)
                .map(|w| *w * *ib)
                .ok_or_else(|| format!("its joint {j} is not a node of the file"))
        })
        .collect()
}

/// Moves a skinned primitive's vertices by its joints: each vertex by the weighted sum of the
/// matrices of the joints it names in JOINTS_n / WEIGHTS_n (weights normalised to sum 1),
/// normals by that sum's inverse transpose, tangents by the sum itself. The result is in world
/// space: the skinned node's own transform is ignored, as the specification says. A vertex
/// whose weights are all 0 is placed by `node` (its node's world matrix) instead. Returns
/// false, moving nothing, when the primitive has no JOINTS_0 and WEIGHTS_0.
pub(super) fn skin<'a, 's>(
    prim: &gltf::Primitive<'a>,
    joints: &[Mat4],
    node: Mat4,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    v: &mut Attributes,
) -> Result<bool, String> {
    use gltf::Semantic;
    let n = v.positions.len();
    // each JOINTS_n / WEIGHTS_n pair, read whole (24 bytes a vertex a pair)
    type Set = (Vec<[u16; 4]>, Vec<[f32; 4]>);
    let mut sets: Vec<Set> = Vec::new();
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
    if sets.is_empty() {
        return Ok(false);
    }
    for k in 0..n {
        // the sum of the matrices the vertex names, by weight, and of its weights
        let (mut sum, mut total) = (Mat4::ZERO, 0f32);
        for (ids, weights) in &sets {
            for (&id, &wt) in ids[k].iter().zip(&weights[k]) {
                if !wt.is_finite() {
                    return Err(format!("vertex {k} has the joint weight {wt}"));
                }
                if wt == 0.0 {
                    continue;
                }
                let m = joints.get(id as usize).ok_or_else(|| {
                    format!(
                        "vertex {k} names joint {id} (weight {wt}), but the skin has {} joint(s)",
                        joints.len()
                    )
                })?;
                sum += *m * wt;
                total += wt;
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
    Ok(true)
}
