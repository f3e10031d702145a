//! Node animation (glTF 2.0 animations): keyframed translations, rotations and scales of a
//! file's nodes, sampled at a time, move the objects under those nodes.
//!
//! A file's node tree is kept as a [`Rig`]; each glTF animation is a [`Clip`] of channels, one
//! per animated node property, each with its sampler (key times, values, interpolation). All of
//! a file's clips play together, from time 0, each held at its last key after its end (where two
//! channels drive one property, the later one wins). The scene's [`SceneAnimation`] binds
//! objects to their nodes: an object's model matrix at time `t` is its placement (a scene file's
//! transform) times its node's world matrix at `t`.
//!
//! Sampling follows the specification's appendix on interpolation: STEP holds a key's value,
//! LINEAR interpolates translations and scales linearly and rotations by spherical linear
//! interpolation (the shorter arc), CUBICSPLINE evaluates the cubic Hermite spline of the keys'
//! values and tangents (rotations normalised after). Before the first key a channel holds the
//! first value. Animation is host work: it gives each object a model matrix, which both backends
//! take as they take a static one.

pub mod skin;

use crate::mesh::Mesh;
use glam::{Mat4, Quat, Vec3, Vec4};
use std::sync::Arc;

/// How a sampler interpolates between keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

/// Which property of a node a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    Translation,
    /// a unit quaternion, (x, y, z, w)
    Rotation,
    Scale,
    /// morph target weights 4k to 4k + 3 (a channel of a node's weights is kept as one channel
    /// per four weights)
    Weights(u16),
}

/// Key times and values of one channel. `values` holds one [`Vec4`] per key (a translation or
/// scale in xyz, a rotation as xyzw), or three per key for [`Interpolation::CubicSpline`]: the
/// in-tangent, the value and the out-tangent.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    pub interpolation: Interpolation,
    /// seconds, strictly increasing, finite, at least one
    pub times: Vec<f32>,
    pub values: Vec<Vec4>,
}

/// Why a sampler cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SamplerError {
    #[error("it has no keys")]
    Empty,
    #[error("key time {0} is not a finite number")]
    Time(usize),
    #[error("key times must increase, but key {0} is not after the one before it")]
    Order(usize),
    #[error("{values} output values for {keys} keys ({interpolation:?} needs {per} a key)")]
    Count {
        values: usize,
        keys: usize,
        per: usize,
        interpolation: Interpolation,
    },
    #[error("output value {0} is not finite")]
    Value(usize),
}

impl Sampler {
    /// A sampler after checking what [`Sampler::sample`] relies on.
    pub fn new(
        interpolation: Interpolation,
        times: Vec<f32>,
        values: Vec<Vec4>,
    ) -> Result<Sampler, SamplerError> {
        if times.is_empty() {
            return Err(SamplerError::Empty);
        }
        if let Some(k) = times.iter().position(|t| !t.is_finite()) {
            return Err(SamplerError::Time(k));
        }
        if let Some(k) = (1..times.len()).find(|&k| times[k] <= times[k - 1]) {
            return Err(SamplerError::Order(k));
        }
        let per = match interpolation {
            Interpolation::CubicSpline => 3,
            _ => 1,
        };
        if values.len() != per * times.len() {
            return Err(SamplerError::Count {
                values: values.len(),
                keys: times.len(),
                per,
                interpolation,
            });
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(SamplerError::Value(k));
        }
        Ok(Sampler {
            interpolation,
            times,
            values,
        })
    }

    /// The last key's time.
    pub fn end(&self) -> f32 {
        *self
            .times
            .last()
            .expect("a sampler has a key (Sampler::new)")
    }

    /// The value at time `t` of a property of kind `property`: held before the first key and
    /// after the last (a rotation is returned normalised).
    pub fn sample(&self, t: f32, property: Property) -> Vec4 {
        let times = &self.times;
        let n = times.len();
        let cubic = self.interpolation == Interpolation::CubicSpline;
        // a key's value (for a cubic spline, the middle of its three)
        let value = |k: usize| match cubic {
            true => self.values[3 * k + 1],
            false => self.values[k],
        };
        let v = if n == 1 || t.is_nan() || t <= times[0] {
            value(0)
        } else if t >= times[n - 1] {
            value(n - 1)
        } else {
            // the key at or before t: times[k] <= t < times[k + 1]
            let k = times.partition_point(|&x| x <= t) - 1;
            let dt = times[k + 1] - times[k];
            let s = (t - times[k]) / dt;
            match self.interpolation {
                Interpolation::Step => value(k),
                Interpolation::Linear => match property {
                    Property::Rotation => Vec4::from(unit(value(k)).slerp(unit(value(k + 1)), s)),
                    _ => value(k).lerp(value(k + 1), s),
                },
                Interpolation::CubicSpline => {
                    let (s2, s3) = (s * s, s * s * s);
                    let out_tangent = self.values[3 * k + 2];
                    let in_tangent = self.values[3 * (k + 1)];
                    value(k) * (2.0 * s3 - 3.0 * s2 + 1.0)
                        + out_tangent * (dt * (s3 - 2.0 * s2 + s))
                        + value(k + 1) * (-2.0 * s3 + 3.0 * s2)
                        + in_tangent * (dt * (s3 - s2))
                }
            }
        };
        match property {
            Property::Rotation => Vec4::from(unit(v)),
            _ => v,
        }
    }
}

/// `v` as a unit quaternion (a zero one, which has no direction, as the identity).
fn unit(v: Vec4) -> Quat {
    Quat::from_vec4(v.normalize_or(Vec4::W))
}

/// One animated property of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// the node, an index into [`Rig::nodes`]
    pub node: usize,
    pub property: Property,
    pub sampler: Sampler,
}

/// A glTF animation: channels that play together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clip {
    pub name: String,
    pub channels: Vec<Channel>,
}

impl Clip {
    /// Its length: the latest last key of its channels.
    pub fn duration(&self) -> f32 {
        self.channels
            .iter()
            .map(|c| c.sampler.end())
            .fold(0.0, f32::max)
    }
}

/// A node of a file's tree: its parent and its own transform when nothing animates it.
#[derive(Debug, Clone, PartialEq)]
pub struct RigNode {
    pub parent: Option<usize>,
    /// the node's matrix (its translation, rotation and scale composed, or its `matrix`)
    pub local: Mat4,
    /// its translation, rotation and scale, which a channel replaces one by one (a node with a
    /// `matrix` is never a channel's target, as the specification says)
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

/// A file's node tree with its animations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rig {
    pub nodes: Vec<RigNode>,
    pub clips: Vec<Clip>,
}

impl Rig {
    /// The longest of its clips.
    pub fn duration(&self) -> f32 {
        self.clips.iter().map(Clip::duration).fold(0.0, f32::max)
    }

    /// The morph target weights of node `node` at time `t`, where a channel animates them.
    pub fn weights(&self, t: f32, node: usize) -> Option<Vec<f32>> {
        let mut out: Vec<f32> = Vec::new();
        let mut any = false;
        for c in self.clips.iter().flat_map(|c| &c.channels) {
            if let (Property::Weights(chunk), true) = (c.property, c.node == node) {
                let at = 4 * chunk as usize;
                if out.len() < at + 4 {
                    out.resize(at + 4, 0.0);
                }
                out[at..at + 4].copy_from_slice(&c.sampler.sample(t, c.property).to_array());
                any = true;
            }
        }
        any.then_some(out)
    }

    /// The world matrix (in the file's space) of every node at time `t`: every clip's channels
    /// applied over the nodes' own transforms.
    pub fn pose(&self, t: f32) -> Vec<Mat4> {
        let mut trs: Vec<Option<(Vec3, Quat, Vec3)>> = vec![None; self.nodes.len()];
        for c in self.clips.iter().flat_map(|c| &c.channels) {
            let Some(node) = self.nodes.get(c.node) else {
                continue;
            };
            if let Property::Weights(_) = c.property {
                continue;
            }
            let e = trs[c.node].get_or_insert((node.translation, node.rotation, node.scale));
            let v = c.sampler.sample(t, c.property);
            match c.property {
                Property::Translation => e.0 = v.truncate(),
                Property::Rotation => e.1 = Quat::from_vec4(v),
                Property::Scale => e.2 = v.truncate(),
                Property::Weights(_) => {}
            }
        }
        let local: Vec<Mat4> = self
            .nodes
            .iter()
            .zip(&trs)
            .map(|(n, t)| match t {
                Some((t, r, s)) => Mat4::from_scale_rotation_translation(*s, *r, *t),
                None => n.local,
            })
            .collect();
        // parents before children, whatever the order of the nodes (the tree has no cycle: the
        // loader checked it; a parent chain longer than the nodes stops there)
        let mut world: Vec<Option<Mat4>> = vec![None; self.nodes.len()];
        let mut chain = Vec::new();
        for k in 0..self.nodes.len() {
            let mut at = Some(k);
            while let Some(n) =
                at.filter(|&n| world[n].is_none() && chain.len() <= self.nodes.len())
            {
                chain.push(n);
                at = self.nodes[n].parent;
            }
            let mut above = at.and_then(|n| world[n]).unwrap_or(Mat4::IDENTITY);
            while let Some(n) = chain.pop() {
                above *= local[n];
                world[n] = Some(above);
            }
        }
        world.into_iter().map(|w| w.unwrap_or_default()).collect()
    }
}

/// An object that moves with a node of a rig.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// the object, an index into the scene's objects
    pub object: usize,
    /// its rig, an index into [`SceneAnimation::rigs`]
    pub rig: usize,
    pub node: usize,
    /// where the scene puts the file (a scene file's transform of the object; identity for a
    /// file loaded alone)
    pub placement: Mat4,
}

/// An object whose shape an animation changes: a skin whose joints it moves, or morph target
/// weights it animates. What posing it again takes: its vertices before the morph targets and
/// the skin, and each's data. Its mesh is posed on the host ([`SceneAnimation::pose_meshes`]);
/// a prepared scene takes the new vertices when the object is prepared again
/// (`rxpipe::Pipeline::prepare_again`).
#[derive(Debug, Clone, PartialEq)]
pub struct Deformed {
    /// the object, an index into the scene's objects
    pub object: usize,
    /// its rig, an index into [`SceneAnimation::rigs`]
    pub rig: usize,
    /// its node (whose weights an animation may drive; it places vertices a skin does not)
    pub node: usize,
    /// the vertices before morph targets and skin
    pub positions: Vec<Vec3>,
    pub normals: Option<Vec<Vec3>>,
    pub tangents: Option<Vec<Vec4>>,
    /// the morph targets and their weights where no animation drives them
    pub morph: Option<(Vec<skin::MorphTarget>, Vec<f32>)>,
    /// the skin's joints (nodes of the rig), their inverse bind matrices, and each vertex's
    /// joints and weights per JOINTS_n / WEIGHTS_n pair (checked at load)
    pub skin: Option<(Vec<usize>, Vec<Mat4>, skin::JointSets)>,
}

/// A scene's animations: the rigs of its files, the objects bound to their nodes and the
/// objects whose shapes they change.
#[derive(Debug, Clone, Default)]
pub struct SceneAnimation {
    pub rigs: Vec<Arc<Rig>>,
    pub bindings: Vec<Binding>,
    pub deformed: Vec<Deformed>,
}

impl SceneAnimation {
    /// Whether anything moves.
    pub fn is_empty(&self) -> bool {
        (self.bindings.is_empty() && self.deformed.is_empty())
            || self.rigs.iter().all(|r| r.clips.is_empty())
    }

    /// Poses the deformed objects at time `t`: each one's vertices (positions, normals and
    /// tangents) in its mesh of `meshes` (the scene's objects' meshes, in order), from its vertices before morph targets and skin. Returns
    /// the objects it posed (one whose vertex counts no longer match, as when the mesh was
    /// edited, is left).
    pub fn pose_meshes(&self, t: f32, meshes: &mut [&mut Mesh]) -> Vec<usize> {
        let poses: Vec<Vec<Mat4>> = self.rigs.iter().map(|r| r.pose(t)).collect();
        let mut posed = Vec::new();
        for d in &self.deformed {
            let (Some(rig), Some(world)) = (self.rigs.get(d.rig), poses.get(d.rig)) else {
                continue;
            };
            let joints = match &d.skin {
                None => None,
                Some((joints, ib, _)) => match skin::joint_matrices(joints, ib, world) {
                    Some(j) => Some(j),
                    None => continue,
                },
            };
            let Some(mesh) = meshes.get_mut(d.object).map(|m| &mut **m) else {
                continue;
            };
            let n = d.positions.len();
            let fits = |len: Option<usize>, want: Option<usize>| len.is_none() || len == want;
            if mesh.positions.len() != n
                || !fits(
                    d.normals.as_ref().map(Vec::len),
                    mesh.normals.as_ref().map(Vec::len),
                )
                || !fits(
                    d.tangents.as_ref().map(Vec::len),
                    mesh.tangents.as_ref().map(Vec::len),
                )
            {
                continue;
            }
            mesh.positions.copy_from_slice(&d.positions);
            if let (Some(to), Some(from)) = (&mut mesh.normals, &d.normals) {
                to.copy_from_slice(from);
            }
            if let (Some(to), Some(from)) = (&mut mesh.tangents, &d.tangents) {
                to.copy_from_slice(from);
            }
            let mut v = skin::Attributes {
                positions: &mut mesh.positions,
                normals: mesh.normals.as_deref_mut(),
                tangents: mesh.tangents.as_deref_mut(),
            };
            if let Some((targets, weights)) = &d.morph {
                let animated = rig.weights(t, d.node);
                skin::morph(targets, animated.as_deref().unwrap_or(weights), &mut v);
            }
            if let (Some((_, _, sets)), Some(joints)) = (&d.skin, &joints) {
                let node = world.get(d.node).copied().unwrap_or(Mat4::IDENTITY);
                skin::pose(sets, joints, node, &mut v);
            }
            posed.push(d.object);
        }
        posed
    }

    /// How long it plays: its longest clip, in seconds.
    pub fn duration(&self) -> f32 {
        self.rigs.iter().map(|r| r.duration()).fold(0.0, f32::max)
    }

    /// The clips of all its rigs.
    pub fn clips(&self) -> usize {
        self.rigs.iter().map(|r| r.clips.len()).sum()
    }

    /// The model matrix at time `t` of each of `objects` objects that it moves (`None` for
    /// the others).
    pub fn poses(&self, t: f32, objects: usize) -> Vec<Option<Mat4>> {
        let mut models = vec![None; objects];
        let poses: Vec<Vec<Mat4>> = self.rigs.iter().map(|r| r.pose(t)).collect();
        for b in &self.bindings {
            let world = poses.get(b.rig).and_then(|p| p.get(b.node));
            if let (Some(m), Some(w)) = (models.get_mut(b.object), world) {
                *m = Some(b.placement * *w);
            }
        }
        models
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32) -> Vec4 {
        Vec4::new(x, 0.0, 0.0, 0.0)
    }

    #[test]
    fn samplers_hold_step_and_interpolate() {
        let times = vec![1.0, 2.0, 4.0];
        let values = vec![v(0.0), v(10.0), v(30.0)];
        let lin = Sampler::new(Interpolation::Linear, times.clone(), values.clone()).unwrap();
        let step = Sampler::new(Interpolation::Step, times, values).unwrap();
        let p = Property::Translation;
        for (t, l, s) in [
            (-5.0, 0.0, 0.0),
            (1.0, 0.0, 0.0),
            (1.5, 5.0, 0.0),
            (2.0, 10.0, 10.0),
            (3.0, 20.0, 10.0),
            (3.999, 29.99, 10.0),
            (4.0, 30.0, 30.0),
            (9.0, 30.0, 30.0),
        ] {
            assert!((lin.sample(t, p).x - l).abs() < 1e-3, "linear at {t}");
            assert_eq!(step.sample(t, p).x, s, "step at {t}");
        }
        assert_eq!(lin.sample(f32::NAN, p).x, 0.0);
    }

    #[test]
    fn rotations_take_the_shorter_arc() {
        let a = Quat::IDENTITY;
        // 170 degrees about y, stored with w < 0: the same rotation as its negation
        let b = -Quat::from_rotation_y(170f32.to_radians());
        let s = Sampler::new(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![Vec4::from(a), Vec4::from(b)],
        )
        .unwrap();
        let half = Quat::from_vec4(s.sample(0.5, Property::Rotation));
        assert!((half.length() - 1.0).abs() < 1e-5);
        let angle = half.angle_between(Quat::from_rotation_y(85f32.to_radians()));
        assert!(angle < 1e-3, "{angle}");
    }

    #[test]
    fn cubic_splines_meet_their_keys_and_follow_their_tangents() {
        // x(t) = t^3 on [0, 2]: values 0, 8; tangents (dx/dt) 0 and 12
        let z = Vec4::ZERO;
        let s = Sampler::new(
            Interpolation::CubicSpline,
            vec![0.0, 2.0],
            vec![z, v(0.0), v(0.0), v(12.0), v(8.0), z],
        )
        .unwrap();
        for t in [0.0f32, 0.5, 1.0, 1.5, 2.0] {
            let x = s.sample(t, Property::Translation).x;
            assert!((x - t.powi(3)).abs() < 1e-4, "{t}: {x}");
        }
    }

    #[test]
    fn bad_samplers_are_refused() {
        use Interpolation::*;
        let e = |i, t: Vec<f32>, n: usize| Sampler::new(i, t, vec![v(0.0); n]).unwrap_err();
        assert_eq!(e(Linear, vec![], 0), SamplerError::Empty);
        assert_eq!(e(Linear, vec![0.0, f32::NAN], 2), SamplerError::Time(1));
        assert_eq!(e(Linear, vec![0.0, 1.0, 1.0], 3), SamplerError::Order(2));
        assert!(matches!(
            e(CubicSpline, vec![0.0, 1.0], 2),
            SamplerError::Count { per: 3, .. }
        ));
        let bad = Sampler::new(
            Step,
            vec![0.0],
            vec![Vec4::new(0.0, f32::INFINITY, 0.0, 0.0)],
        );
        assert_eq!(bad.unwrap_err(), SamplerError::Value(0));
    }

    #[test]
    fn poses_compose_parents_in_any_order() {
        // node 0 is the child of node 1, which a clip moves along x
        let node = |parent, t: Vec3| RigNode {
            parent,
            local: Mat4::from_translation(t),
            translation: t,
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
        };
        let rig = Rig {
            nodes: vec![node(Some(1), Vec3::Y), node(None, Vec3::ZERO)],
            clips: vec![Clip {
                name: "move".into(),
                channels: vec![Channel {
                    node: 1,
                    property: Property::Translation,
                    sampler: Sampler::new(
                        Interpolation::Linear,
                        vec![0.0, 2.0],
                        vec![v(0.0), v(4.0)],
                    )
                    .unwrap(),
                }],
            }],
        };
        assert_eq!(rig.duration(), 2.0);
        let at = |t| rig.pose(t)[0].transform_point3(Vec3::ZERO);
        assert!(at(0.0).distance(Vec3::Y) < 1e-6);
        assert!(at(1.0).distance(Vec3::new(2.0, 1.0, 0.0)) < 1e-6);
        let anim = SceneAnimation {
            rigs: vec![Arc::new(rig)],
            bindings: vec![Binding {
                object: 1,
                rig: 0,
                node: 0,
                placement: Mat4::from_translation(Vec3::Z),
            }],
            deformed: Vec::new(),
        };
        let models = anim.poses(2.0, 2);
        assert_eq!(models[0], None);
        let p = models[1].unwrap().transform_point3(Vec3::ZERO);
        assert!(p.distance(Vec3::new(4.0, 1.0, 1.0)) < 1e-6, "{p}");
    }
}
