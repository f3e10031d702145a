//! EXT_mesh_gpu_instancing: a node that draws its mesh many times, each instance placed by its
//! own translation, rotation and scale (accessors of the node's extension), under the node's
//! transform. The loader draws each instance as an object of its own (the mesh copied, the
//! instance's matrix applied to the copy), so both backends and the frame stages see them as
//! any placed objects.

use super::gltf_accessor::{check_accessor, read_floats};
use glam::{Mat4, Quat, Vec3};
use gltf::accessor::{DataType as T, Dimensions as D};
use serde_json::Value;

/// The extension's name.
pub const NAME: &str = "EXT_mesh_gpu_instancing";

/// The matrix of each instance of `node` (translation, rotation and scale composed, each
/// defaulting to none), or `None` when the node has no instances. Errors say what is wrong
/// with the extension's accessors.
pub fn matrices<'a, 's>(
    doc: &'a gltf::Document,
    node: &gltf::Node<'a>,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Option<Vec<Mat4>>, String> {
    let Some(ext) = node.extension_value(NAME) else {
        return Ok(None);
    };
    let Some(attributes) = ext.get("attributes").and_then(Value::as_object) else {
        return Err(format!("its {NAME} has no attributes"));
    };
    // (translations and scales are floats; rotations floats or normalized signed integers)
    let read = |name: &str, types: &[T], dims: D| -> Result<Option<Vec<[f32; 4]>>, String> {
        let Some(index) = attributes.get(name) else {
            return Ok(None);
        };
        let accessor = index
            .as_u64()
            .and_then(|i| doc.accessors().nth(i as usize))
            .ok_or_else(|| format!("its {NAME} {name} names no accessor of the file"))?;
        check_accessor(name, accessor.clone(), types, dims, false)?;
        let missing = || format!("its {NAME} {name}: its buffer is missing");
        Ok(Some(match dims {
            D::Vec3 => read_floats::<3>(accessor, data.clone(), false)
                .ok_or_else(missing)?
                .into_iter()
                .map(|[x, y, z]| [x, y, z, 0.0])
                .collect(),
            _ => read_floats::<4>(accessor, data.clone(), false).ok_or_else(missing)?,
        }))
    };
    let translation = read("TRANSLATION", &[T::F32], D::Vec3)?;
    let rotation = read("ROTATION", &[T::F32, T::I8, T::I16], D::Vec4)?;
    let scale = read("SCALE", &[T::F32], D::Vec3)?;
    let counts: Vec<usize> = [&translation, &rotation, &scale]
        .into_iter()
        .flatten()
        .map(Vec::len)
        .collect();
    let Some(&n) = counts.first() else {
        return Err(format!(
            "its {NAME} has none of TRANSLATION, ROTATION and SCALE"
        ));
    };
    if counts.iter().any(|&c| c != n) {
        return Err(format!(
            "its {NAME} accessors have different counts ({counts:?}): one per instance"
        ));
    }
    let at = |v: &Option<Vec<[f32; 4]>>, k: usize| v.as_ref().map(|v| v[k]);
    (0..n)
        .map(|k| {
            let t = at(&translation, k).map_or(Vec3::ZERO, |v| Vec3::new(v[0], v[1], v[2]));
            let s = at(&scale, k).map_or(Vec3::ONE, |v| Vec3::new(v[0], v[1], v[2]));
            let r = match at(&rotation, k) {
                None => Quat::IDENTITY,
                Some(q) => glam::Vec4::from_array(q)
                    .try_normalize()
                    .map(Quat::from_vec4)
                    .ok_or_else(|| format!("instance {k}'s rotation {q:?} is not a rotation"))?,
            };
            let m = Mat4::from_scale_rotation_translation(s, r, t);
            if !m.is_finite() {
                return Err(format!("instance {k}'s transform is not finite"));
            }
            Ok(m)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
