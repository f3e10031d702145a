//! A glTF file's animations read into a [`Rig`]: its node tree and, per animation, the channels
//! that move a node's translation, rotation or scale or drive its mesh's morph target weights
//! ([`rxpipe_core::animation`] samples them).
//!
//! Indices are checked on the JSON before the gltf crate's accessors are used (they unwrap), and
//! every accessor as the meshes' are ([`super::gltf_accessor::check_accessor`]). A channel that cannot be
//! played (a bad accessor, unordered key times, weights for a mesh without morph targets) is
//! left out with a note naming the animation and the channel; the file's geometry is drawn
//! either way.

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::json::validation::Checked;
use rxpipe_core::animation::{Channel, Clip, Interpolation, Property, Rig, RigNode, Sampler};

/// The node tree and animations of `doc` (`None` when it has no animation), with notes on what
/// was left out. `data` gives a buffer's bytes.
pub fn read<'a, 's>(
    doc: &'a gltf::Document,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    file: &str,
) -> (Option<Rig>, Vec<String>) {
    let json = doc.as_json();
    if json.animations.is_empty() {
        return (None, Vec::new());
    }
    let nodes = tree(doc);
    let mut notes = Vec::new();
    let mut clips = Vec::new();
    for (a, anim) in json.animations.iter().enumerate() {
        let name = anim.name.clone().unwrap_or_default();
        let mut clip = Clip {
            name: name.clone(),
            channels: Vec::new(),
        };
        for (c, ch) in anim.channels.iter().enumerate() {
            let property = match ch.target.path {
                Checked::Valid(gltf::animation::Property::Translation) => Property::Translation,
                Checked::Valid(gltf::animation::Property::Rotation) => Property::Rotation,
                Checked::Valid(gltf::animation::Property::Scale) => Property::Scale,
                Checked::Valid(gltf::animation::Property::MorphTargetWeights) => {
                    match weights_channels(doc, anim, ch, data.clone()) {
                        Ok(channels) => clip.channels.extend(channels),
                        Err(why) => notes.push(format!(
                            "{file}: animation {a} ('{name}') channel {c} is not played: {why}"
                        )),
                    }
                    continue;
                }
                Checked::Invalid => continue,
            };
            match channel(doc, anim, ch, property, data.clone()) {
                Ok(sampler) => clip.channels.push(Channel {
                    node: ch.target.node.value(),
                    property,
                    sampler,
                }),
                Err(why) => notes.push(format!(
                    "{file}: animation {a} ('{name}') channel {c} is not played: {why}"
                )),
            }
        }
        clips.push(clip);
    }
    (Some(Rig { nodes, clips }), notes)
}

/// The file's node tree: every node's own transform and parent (a node listed as a child twice
/// keeps the last parent; the loader refuses such files).
pub fn tree(doc: &gltf::Document) -> Vec<RigNode> {
    let mut nodes: Vec<RigNode> = doc
        .nodes()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            RigNode {
                parent: None,
                local: Mat4::from_cols_array_2d(&n.transform().matrix()),
                translation: Vec3::from_array(t),
                rotation: Quat::from_array(r),
                scale: Vec3::from_array(s),
            }
        })
        .collect();
    for (p, n) in doc.as_json().nodes.iter().enumerate() {
        for c in n.children.iter().flatten() {
            if let Some(child) = nodes.get_mut(c.value()) {
                child.parent = Some(p);
            }
        }
    }
    nodes
}

/// A channel of a node's morph target weights, as one channel per four weights (each a sampler
/// of four-component values that interpolate as translations do), read and checked: the
/// output holds one weight per morph target of the node's mesh for each key (three for a
/// cubic spline: in-tangents, values, out-tangents).
fn weights_channels<'a, 's>(
    doc: &'a gltf::Document,
    anim: &gltf::json::Animation,
    ch: &gltf::json::animation::Channel,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Vec<Channel>, String> {
    use gltf::accessor::{DataType as T, Dimensions as D};
    let node = ch.target.node.value();
    let targets = doc
        .nodes()
        .nth(node)
        .and_then(|n| n.mesh())
        .and_then(|m| m.primitives().next())
        .map_or(0, |p| p.morph_targets().count());
    if targets == 0 {
        return Err(format!(
            "it drives the weights of node {node}, whose mesh has no morph targets"
        ));
    }
    // the sampler's keys and interpolation as a translation channel reads them, then its
    // output as weights
    let (times, interpolation) = keys(doc, anim, ch, data.clone())?;
    let s = &anim.samplers[ch.sampler.value()];
    let output = doc
        .accessors()
        .nth(s.output.value())
        .ok_or_else(|| format!("accessor {} does not exist", s.output.value()))?;
    let types = [T::F32, T::I8, T::U8, T::I16, T::U16];
    super::gltf_accessor::check_accessor(
        "weights output",
        output.clone(),
        &types,
        D::Scalar,
        false,
    )?;
    // (integer weights are normalized, as the specification says)
    let flat: Vec<f32> = match output.data_type() {
        T::F32 => gltf::accessor::Iter::<f32>::new(output, data).map(|i| i.collect()),
        T::I8 => gltf::accessor::Iter::<i8>::new(output, data)
            .map(|i| i.map(|c| (c as f32 / 127.0).max(-1.0)).collect()),
        T::U8 => gltf::accessor::Iter::<u8>::new(output, data)
            .map(|i| i.map(|c| c as f32 / 255.0).collect()),
        T::I16 => gltf::accessor::Iter::<i16>::new(output, data)
            .map(|i| i.map(|c| (c as f32 / 32767.0).max(-1.0)).collect()),
        _ => gltf::accessor::Iter::<u16>::new(output, data)
            .map(|i| i.map(|c| c as f32 / 65535.0).collect()),
    }
    .ok_or("its output's buffer is missing")?;
    let per = match interpolation {
        Interpolation::CubicSpline => 3,
        _ => 1,
    };
    let entries = times.len() * per;
    if flat.len() != entries * targets {
        return Err(format!(
            "{} output values for {} keys of {targets} weights ({interpolation:?} needs {per} a key)",
            flat.len(),
            times.len()
        ));
    }
    (0..targets.div_ceil(4))
        .map(|chunk| {
            let values = (0..entries)
                .map(|e| {
                    let w = |k: usize| {
                        let i = 4 * chunk + k;
                        if i < targets {
                            flat[e * targets + i]
                        } else {
                            0.0
                        }
                    };
                    Vec4::new(w(0), w(1), w(2), w(3))
                })
                .collect();
            let sampler =
                Sampler::new(interpolation, times.clone(), values).map_err(|e| e.to_string())?;
            Ok(Channel {
                node,
                property: Property::Weights(chunk as u16),
                sampler,
            })
        })
        .collect()
}

/// A channel's key times and interpolation, read and checked (its node a node of the file,
/// its sampler one of the animation's).
fn keys<'a, 's>(
    doc: &'a gltf::Document,
    anim: &gltf::json::Animation,
    ch: &gltf::json::animation::Channel,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<(Vec<f32>, Interpolation), String> {
    use gltf::accessor::{DataType as T, Dimensions as D};
    if ch.target.node.value() >= doc.nodes().len() {
        return Err(format!(
            "it targets node {}, but the file has {}",
            ch.target.node.value(),
            doc.nodes().len()
        ));
    }
    let s = anim
        .samplers
        .get(ch.sampler.value())
        .ok_or_else(|| format!("its sampler {} does not exist", ch.sampler.value()))?;
    let interpolation = match s.interpolation {
        Checked::Valid(gltf::animation::Interpolation::Step) => Interpolation::Step,
        Checked::Valid(gltf::animation::Interpolation::Linear) => Interpolation::Linear,
        Checked::Valid(gltf::animation::Interpolation::CubicSpline) => Interpolation::CubicSpline,
        Checked::Invalid => return Err("its interpolation is not one glTF defines".into()),
    };
    let accessor = |i: usize| {
        doc.accessors()
            .nth(i)
            .ok_or_else(|| format!("accessor {i} does not exist"))
    };
    let input = accessor(s.input.value())?;
    super::gltf_accessor::check_accessor("input", input.clone(), &[T::F32], D::Scalar, false)?;
    let times: Vec<f32> = gltf::accessor::Iter::<f32>::new(input, data.clone())
        .ok_or("its input's buffer is missing")?
        .collect();
    Ok((times, interpolation))
}

/// The sampler of one channel, read and checked.
fn channel<'a, 's>(
    doc: &'a gltf::Document,
    anim: &gltf::json::Animation,
    ch: &gltf::json::animation::Channel,
    property: Property,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Sampler, String> {
    use gltf::accessor::{DataType as T, Dimensions as D};
    let (times, interpolation) = keys(doc, anim, ch, data.clone())?;
    let s = &anim.samplers[ch.sampler.value()];
    let accessor = |i: usize| {
        doc.accessors()
            .nth(i)
            .ok_or_else(|| format!("accessor {i} does not exist"))
    };
    let output = accessor(s.output.value())?;
    let values: Vec<Vec4> = match property {
        Property::Rotation => {
            let types = [T::F32, T::I8, T::U8, T::I16, T::U16];
            super::gltf_accessor::check_accessor(
                "rotation output",
                output.clone(),
                &types,
                D::Vec4,
                false,
            )?;
            // (integer rotations are normalized, whatever the accessor says)
            super::gltf_accessor::read_floats::<4>(output, data, true)
                .ok_or("its output's buffer is missing")?
                .into_iter()
                .map(Vec4::from_array)
                .collect()
        }
        _ => {
            super::gltf_accessor::check_accessor(
                "output",
                output.clone(),
                &[T::F32],
                D::Vec3,
                false,
            )?;
            super::gltf_accessor::read_floats::<3>(output, data, false)
                .ok_or("its output's buffer is missing")?
                .into_iter()
                .map(|v| Vec3::from_array(v).extend(0.0))
                .collect()
        }
    };
    Sampler::new(interpolation, times, values).map_err(|e| e.to_string())
}
