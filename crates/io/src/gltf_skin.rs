//! Morph targets and skins read from glTF (sections 3.7.2.2 "Morph Targets" and 3.7.3
//! "Skins"): every accessor checked against its primitive, so that the maths of
//! [`rxpipe_core::animation::skin`] can pose the vertices at time 0 when the file is loaded.
//!
//! Both are host work. The posed vertices are what every backend then draws, as it draws any
//! mesh, so the CPU and the GPU see the same triangles. Where an animation moves the joints or
//! drives the weights, the loader keeps what posing again takes ([`rxpipe_core::animation::Deformed`]),
//! and the same maths shape the mesh at another time.

use super::gltf_accessor::{check_accessor, read_floats};
use glam::{Mat4, Vec3};
use gltf::accessor::{DataType as T, Dimensions as D};
use rxpipe_core::animation::skin::{JointSets, MorphTarget};

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
