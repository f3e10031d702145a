//! What the glTF loader does to a primitive's shape and placement: skins and morph targets
//! (crates/io/src/gltf_skin.rs) and EXT_mesh_gpu_instancing (crates/io/src/gltf_instancing.rs), on small
//! files built here, whose vertices are worked out by hand in the comments.

mod common;

use glam::{Mat4, Quat, Vec3};
use rxpipe::io::load_gltf_scene;
use serde_json::{json, Value};

/// A glTF buffer built view by view, embedded as a data URI.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    /// An accessor of `count` elements of `kind` over `data`, with its own view; its index.
    fn accessor(&mut self, data: &[u8], component: u32, kind: &str, count: usize) -> usize {
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()}));
        self.bytes.extend_from_slice(data);
        self.accessors.push(
            json!({"bufferView": self.views.len() - 1, "componentType": component,
            "count": count, "type": kind}),
        );
        self.accessors.len() - 1
    }

    fn floats(&mut self, v: &[f32], kind: &str, per: usize) -> usize {
        let b: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.accessor(&b, 5126, kind, v.len() / per)
    }

    fn vec3(&mut self, v: &[[f32; 3]]) -> usize {
        let a = self.floats(v.as_flattened(), "VEC3", 3);
        // (POSITION accessors carry their bounds, as the specification asks)
        let (lo, hi) = v
            .iter()
            .fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
                (
                    [0, 1, 2].map(|k| lo[k].min(p[k])),
                    [0, 1, 2].map(|k| hi[k].max(p[k])),
                )
            });
        self.accessors[a]["min"] = json!(lo);
        self.accessors[a]["max"] = json!(hi);
        a
    }

    /// The file around `doc` (its nodes, meshes, skins...), with this buffer's views and
    /// accessors, written under `name`.
    fn write(&self, name: &str, mut doc: Value) -> std::path::PathBuf {
        doc["asset"] = json!({"version": "2.0"});
        doc["scene"] = json!(0);
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        let uri = format!("data:application/octet-stream;base64,{}", b64(&self.bytes));
        doc["buffers"] = json!([{"byteLength": self.bytes.len(), "uri": uri}]);
        let path = common::tmp_dir("skins").join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    }
}

fn b64(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            s.push(if k <= c.len() {
                T[(n >> (18 - 6 * k) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    s
}

fn near(a: Vec3, b: Vec3) -> bool {
    (a - b).length() < 1e-5
}

/// An arm of two bones: joint 0 at the origin, joint 1 one up from it, both under a node moved
/// 5 along z, bound in that pose (the inverse bind matrices undo it). The mesh: two vertices at
/// y = 0 on joint 0, two at y = 1 half on each, two at y = 2 on joint 1, all with the normal +x.
/// The skinned node is moved 100 along x, which a skin ignores.
fn arm(bin: &mut Bin, joints_u8: bool) -> Value {
    let positions = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 2.0, 0.0],
        [1.0, 2.0, 0.0],
    ];
    let p = bin.vec3(&positions);
    let n = bin.vec3(&[[1.0, 0.0, 0.0]; 6]);
    let ids: [[u8; 4]; 6] = [
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 1, 0, 0],
        [1, 0, 0, 0],
        [1, 0, 0, 0],
    ];
    let j = if joints_u8 {
        bin.accessor(ids.as_flattened(), 5121, "VEC4", 6)
    } else {
        let wide: Vec<u8> = ids
            .as_flattened()
            .iter()
            .flat_map(|&i| u16::from(i).to_le_bytes())
            .collect();
        bin.accessor(&wide, 5123, "VEC4", 6)
    };
    let w = bin.floats(
        &[
            1., 0., 0., 0., 1., 0., 0., 0., 0.5, 0.5, 0., 0., 0.5, 0.5, 0., 0., 1., 0., 0., 0., 1.,
            0., 0., 0.,
        ],
        "VEC4",
        4,
    );
    let idx: Vec<u8> = [0u16, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4]
        .iter()
        .flat_map(|i| i.to_le_bytes())
        .collect();
    let i = bin.accessor(&idx, 5123, "SCALAR", 12);
    let ibm = [
        Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0)),
        Mat4::from_translation(Vec3::new(0.0, -1.0, -5.0)),
    ];
    let m: Vec<f32> = ibm.iter().flat_map(|m| m.to_cols_array()).collect();
    let ib = bin.floats(&m, "MAT4", 16);
    let bend = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    json!({
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"mesh": 0, "skin": 0, "translation": [100, 0, 0]},
            {"translation": [0, 0, 5], "children": [2]},
            {"children": [3]},
            {"translation": [0, 1, 0], "rotation": bend.to_array()}
        ],
        "skins": [{"joints": [2, 3], "inverseBindMatrices": ib}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": p, "NORMAL": n, "JOINTS_0": j, "WEIGHTS_0": w}, "indices": i}]}]
    })
}

#[test]
fn skinned_vertices_take_their_joints_pose() {
    for joints_u8 in [true, false] {
        let mut bin = Bin::default();
        let doc = arm(&mut bin, joints_u8);
        let scene = load_gltf_scene(bin.write("arm.gltf", doc)).unwrap();
        assert!(scene.notes.is_empty(), "{:?}", scene.notes);
        assert_eq!(scene.transforms, [Mat4::IDENTITY]);
        let m = &scene.meshes[0];
        // joint 1 turns a quarter about z around (0, 1): (x, y) -> (1 - y, 1 + x) above it; the
        // middle row is the average of that and staying; the bottom row stays
        let expect = [
            (Vec3::new(0.0, 0.0, 0.0), Vec3::X),
            (Vec3::new(1.0, 0.0, 0.0), Vec3::X),
            (
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0).normalize(),
            ),
            (
                Vec3::new(0.5, 1.5, 0.0),
                Vec3::new(1.0, 1.0, 0.0).normalize(),
            ),
            (Vec3::new(-1.0, 1.0, 0.0), Vec3::Y),
            (Vec3::new(-1.0, 2.0, 0.0), Vec3::Y),
        ];
        let normals = m.normals.as_ref().unwrap();
        for (k, (p, n)) in expect.iter().enumerate() {
            assert!(
                near(m.positions[k], *p),
                "vertex {k}: {} for {p}",
                m.positions[k]
            );
            assert!(near(normals[k], *n), "normal {k}: {} for {n}", normals[k]);
        }
    }
}

/// The arm with joint 1's rotation animated: a quarter turn at time 0, none at time 1.
fn animated_arm(bin: &mut Bin) -> Value {
    let mut doc = arm(bin, true);
    let t = bin.floats(&[0.0, 1.0], "SCALAR", 1);
    bin.accessors[t]["min"] = json!([0.0]);
    bin.accessors[t]["max"] = json!([1.0]);
    let bend = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2).to_array();
    let r = bin.floats(&[bend, [0.0, 0.0, 0.0, 1.0]].concat(), "VEC4", 4);
    doc["nodes"][3]["rotation"] = json!([0.0, 0.0, 0.0, 1.0]);
    doc["animations"] = json!([{"channels": [{"sampler": 0, "target": {"node": 3, "path": "rotation"}}],
        "samplers": [{"input": t, "output": r}]}]);
    doc
}

#[test]
fn animated_joints_pose_the_skin_again_at_any_time() {
    let mut bin = Bin::default();
    let doc = animated_arm(&mut bin);
    let path = bin.write("arm-animated.gltf", doc);
    let g = load_gltf_scene(&path).unwrap();
    // loaded at time 0, and kept to pose again
    assert!(near(g.meshes[0].positions[5], Vec3::new(-1.0, 2.0, 0.0)));
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    assert_eq!(g.deformed.len(), 1);
    let mut scene = rxpipe::io::load_scene(&path).unwrap();
    assert!(!scene.animation.is_empty());
    let top = |s: &rxpipe::Scene| s.objects[0].mesh.positions[5];
    // time 1: no turn; time 0.5: an eighth of a turn, (1, 1) about (0, 1) to (0, 1 + sqrt 2)
    assert_eq!(scene.pose_meshes(1.0), [0]);
    assert!(
        near(top(&scene), Vec3::new(1.0, 2.0, 0.0)),
        "{}",
        top(&scene)
    );
    scene.pose_meshes(0.5);
    let half = Vec3::new(0.0, 1.0 + std::f32::consts::SQRT_2, 0.0);
    assert!(near(top(&scene), half), "{}", top(&scene));
    let normal = scene.objects[0].mesh.normals.as_ref().unwrap()[5];
    assert!(
        near(normal, Vec3::new(1.0, 1.0, 0.0).normalize()),
        "{normal}"
    );
    scene.pose_meshes(0.0);
    assert!(near(top(&scene), Vec3::new(-1.0, 2.0, 0.0)));
}

#[test]
fn a_prepared_scene_takes_a_new_pose_when_prepared_again() {
    let mut bin = Bin::default();
    let doc = animated_arm(&mut bin);
    let mut scene = rxpipe::io::load_scene(bin.write("arm-again.gltf", doc)).unwrap();
    let mut backends = vec![rxpipe::Backend::Cpu];
    if common::gpu().is_some() {
        backends.push(rxpipe::Backend::Cuda);
    }
    for backend in backends {
        scene.pose_meshes(0.0);
        let renderer = rxpipe::Renderer::new(backend).unwrap();
        let pipeline = rxpipe::Pipeline::builder().build(&renderer).unwrap();
        let mut prepared = pipeline.prepare(&scene).unwrap();
        let size = (96, 96);
        let camera = scene.camera;
        let at0 = pipeline
            .render_prepared(&prepared, &scene, &camera, size, 0.0)
            .unwrap();
        let posed = scene.pose_meshes(1.0);
        pipeline
            .prepare_again(&mut prepared, &scene, &posed)
            .unwrap();
        let again = pipeline
            .render_prepared(&prepared, &scene, &camera, size, 1.0)
            .unwrap();
        let fresh = pipeline
            .render_prepared(
                &pipeline.prepare(&scene).unwrap(),
                &scene,
                &camera,
                size,
                1.0,
            )
            .unwrap();
        assert_eq!(again.color, fresh.color, "{backend:?}");
        assert_ne!(again.color, at0.color, "{backend:?}");
    }
}

#[test]
fn bad_skins_are_errors_naming_the_primitive_or_the_skin() {
    let load = |edit: &dyn Fn(&mut Bin, &mut Value)| {
        let mut bin = Bin::default();
        let mut doc = arm(&mut bin, true);
        edit(&mut bin, &mut doc);
        load_gltf_scene(bin.write("bad-arm.gltf", doc))
            .unwrap_err()
            .to_string()
    };
    // a joint index past the skin's joints
    let e = load(&|_, doc| doc["skins"][0]["joints"] = json!([2]));
    assert!(
        e.contains("mesh 0 ('') primitive 0")
            && e.contains("vertex 2 names joint 1 (weight 0.5), but the skin has 1 joint(s)"),
        "{e}"
    );
    // fewer inverse bind matrices than joints
    let e = load(&|bin, doc| {
        let one = bin.floats(&Mat4::IDENTITY.to_cols_array(), "MAT4", 16);
        doc["skins"][0]["inverseBindMatrices"] = json!(one);
    });
    assert!(
        e.contains("skin 0") && e.contains("1 matrices for 2 joints"),
        "{e}"
    );
    // joints without weights
    let e = load(&|_, doc| {
        doc["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap()
            .remove("WEIGHTS_0");
    });
    assert!(e.contains("only one of JOINTS_0 and WEIGHTS_0"), "{e}");
    // a weight that is not a number
    let e = load(&|bin, doc| {
        let mut w = vec![1.0f32, 0., 0., 0.];
        w.extend([0.0; 20]);
        w[8] = f32::NAN;
        let a = bin.floats(&w, "VEC4", 4);
        doc["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(a);
    });
    assert!(e.contains("vertex 2 has the joint weight NaN"), "{e}");
    // weights of a type the specification does not allow
    let e = load(&|bin, doc| {
        let a = bin.accessor(&[0u8; 6 * 4 * 4], 5125, "VEC4", 6);
        doc["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(a);
    });
    assert!(e.contains("WEIGHTS_0 accessor") && e.contains("U32"), "{e}");
}

#[test]
fn vertices_with_no_weight_stay_where_their_node_puts_them() {
    let mut bin = Bin::default();
    let mut doc = arm(&mut bin, true);
    let w = bin.floats(&[[0.0f32; 4]; 6].concat(), "VEC4", 4);
    doc["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(w);
    let scene = load_gltf_scene(bin.write("arm-unweighted.gltf", doc)).unwrap();
    assert!(near(
        scene.meshes[0].positions[5],
        Vec3::new(101.0, 2.0, 0.0)
    ));
}

/// A triangle with two morph targets: the first lifts vertex 2 by one along z and tilts its
/// normal, the second moves vertex 1 by one along x.
fn morphed(bin: &mut Bin) -> Value {
    let p = bin.vec3(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    let n = bin.vec3(&[[0.0, 0.0, 1.0]; 3]);
    let lift = bin.vec3(&[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
    let tilt = bin.vec3(&[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, -1.0]]);
    let push = bin.vec3(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]);
    let i = bin.accessor(&[0, 0, 1, 0, 2, 0], 5123, "SCALAR", 3);
    json!({
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"mesh": 0}, {"mesh": 0, "weights": [1.0, 0.0]}],
        "meshes": [{"weights": [0.5, 0.25], "primitives": [{"attributes": {"POSITION": p, "NORMAL": n}, "indices": i,
            "targets": [{"POSITION": lift, "NORMAL": tilt}, {"POSITION": push}]}]}]
    })
}

#[test]
fn morph_targets_take_the_node_or_mesh_weights() {
    let mut bin = Bin::default();
    let doc = morphed(&mut bin);
    let scene = load_gltf_scene(bin.write("morph.gltf", doc)).unwrap();
    assert!(scene.notes.is_empty(), "{:?}", scene.notes);
    // the walk meets the scene's last root first: node 1 (its own weights), then node 0 (the
    // mesh's)
    let (own, mesh) = (&scene.meshes[0], &scene.meshes[1]);
    assert!(near(own.positions[2], Vec3::new(0.0, 1.0, 1.0)));
    assert!(near(own.positions[1], Vec3::new(1.0, 0.0, 0.0)));
    assert!(near(own.normals.as_ref().unwrap()[2], Vec3::X));
    assert!(near(mesh.positions[2], Vec3::new(0.0, 1.0, 0.5)));
    assert!(near(mesh.positions[1], Vec3::new(1.25, 0.0, 0.0)));
    let tilted = Vec3::new(0.5, 0.0, 0.5).normalize();
    assert!(near(mesh.normals.as_ref().unwrap()[2], tilted));
    assert!(near(mesh.normals.as_ref().unwrap()[0], Vec3::Z));
}

#[test]
fn bad_morph_targets_are_errors_naming_the_target() {
    let mut bin = Bin::default();
    let mut doc = morphed(&mut bin);
    let short = bin.vec3(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
    doc["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = json!(short);
    let e = load_gltf_scene(bin.write("bad-morph.gltf", doc))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("primitive 0")
            && e.contains("morph target 1 POSITION accessor")
            && e.contains("2 elements for 3 vertices"),
        "{e}"
    );
}

#[test]
fn weights_over_two_sets_add_up() {
    let mut bin = Bin::default();
    let mut doc = arm(&mut bin, true);
    // the middle row's second joint moved to JOINTS_1 / WEIGHTS_1, and its weights doubled
    // (weights are normalised to sum 1)
    let j0 = bin.accessor(&[0u8; 24], 5121, "VEC4", 6);
    let mut w0 = [[1.0f32, 0.0, 0.0, 0.0]; 6];
    (w0[2], w0[3]) = ([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]);
    (w0[4], w0[5]) = ([0.0; 4], [0.0; 4]);
    let w0 = bin.floats(w0.as_flattened(), "VEC4", 4);
    let j1 = bin.accessor(&[1u8; 24], 5121, "VEC4", 6);
    let mut w1 = [[0.0f32; 4]; 6];
    (w1[2][0], w1[3][0], w1[4][0], w1[5][0]) = (1.0, 1.0, 2.0, 2.0);
    let w1 = bin.floats(w1.as_flattened(), "VEC4", 4);
    let attributes = &mut doc["meshes"][0]["primitives"][0]["attributes"];
    attributes["JOINTS_0"] = json!(j0);
    attributes["WEIGHTS_0"] = json!(w0);
    attributes["JOINTS_1"] = json!(j1);
    attributes["WEIGHTS_1"] = json!(w1);
    let scene = load_gltf_scene(bin.write("arm-two-sets.gltf", doc)).unwrap();
    let p = &scene.meshes[0].positions;
    assert!(near(p[1], Vec3::new(1.0, 0.0, 0.0)), "{}", p[1]);
    assert!(near(p[3], Vec3::new(0.5, 1.5, 0.0)), "{}", p[3]);
    assert!(near(p[5], Vec3::new(-1.0, 2.0, 0.0)), "{}", p[5]);
}

/// One triangle, (0,0,0) (1,0,0) (0,1,0), at a node moved 5 along z with three instances: as
/// it is, turned a quarter about z and moved 10 along x, doubled and moved 10 along y.
fn instanced(bin: &mut Bin) -> Value {
    let p = bin.vec3(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    let t = bin.floats(&[0., 0., 0., 10., 0., 0., 0., 10., 0.], "VEC3", 3);
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2).to_array();
    let r = bin.floats(&[[0., 0., 0., 1.], q, [0., 0., 0., 1.]].concat(), "VEC4", 4);
    let s = bin.floats(&[1., 1., 1., 1., 1., 1., 2., 2., 2.], "VEC3", 3);
    json!({
        "extensionsUsed": ["EXT_mesh_gpu_instancing"],
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "translation": [0, 0, 5], "extensions": {"EXT_mesh_gpu_instancing":
            {"attributes": {"TRANSLATION": t, "ROTATION": r, "SCALE": s}}}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": p}}]}]
    })
}

/// Animates node 0 of `doc`: translated from z = 5 at time 0 to z = 9 at time 1.
fn move_node_along_z(bin: &mut Bin, doc: &mut Value) {
    let time = bin.floats(&[0.0, 1.0], "SCALAR", 1);
    bin.accessors[time]["min"] = json!([0.0]);
    bin.accessors[time]["max"] = json!([1.0]);
    let moved = bin.floats(&[0., 0., 5., 0., 0., 9.], "VEC3", 3);
    doc["animations"] = json!([{"channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
        "samplers": [{"input": time, "output": moved}]}]);
}

#[test]
fn instanced_nodes_draw_their_mesh_once_per_instance() {
    let mut bin = Bin::default();
    let doc = instanced(&mut bin);
    let path = bin.write("instances.gltf", doc);
    let scene = load_gltf_scene(&path).unwrap();
    assert!(scene.notes.is_empty(), "{:?}", scene.notes);
    // one mesh, in its node's space, placed by the node's matrix and each instance's
    assert_eq!(scene.meshes.len(), 1);
    assert!(near(scene.meshes[0].positions[1], Vec3::new(1.0, 0.0, 0.0)));
    assert_eq!(
        scene.transforms[0],
        Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0))
    );
    let instances = scene.instances[0].as_ref().expect("instances");
    let expect = [
        Vec3::new(1.0, 0.0, 5.0),
        Vec3::new(10.0, 1.0, 5.0),
        Vec3::new(2.0, 10.0, 5.0),
    ];
    assert_eq!(instances.len(), 3);
    for (i, want) in instances.iter().zip(expect) {
        let got = (scene.transforms[0] * *i).transform_point3(Vec3::new(1.0, 0.0, 0.0));
        assert!(near(got, want), "{got} for {want}");
    }
    // as meshes in world space (`load_mesh`), a copy per instance
    let world = scene.clone().world_meshes();
    assert_eq!(world.len(), 3);
    for (m, want) in world.iter().zip(expect) {
        assert!(near(m.positions[1], want), "{} for {want}", m.positions[1]);
    }
    // as a scene, one object drawn three times
    let s = rxpipe::io::load_scene(&path).unwrap();
    assert_eq!(s.objects.len(), 1);
    assert_eq!(s.objects[0].placement_count(), 3);
    assert_eq!(s.triangle_count(), 3);
    // animated, the mesh stays in the node's space with its instances, and the node's matrix
    // at time 0 places it
    let mut bin = Bin::default();
    let mut doc = instanced(&mut bin);
    move_node_along_z(&mut bin, &mut doc);
    let scene = load_gltf_scene(bin.write("instances-animated.gltf", doc)).unwrap();
    assert_eq!(scene.meshes.len(), 1);
    let i1 = scene.instances[0].as_ref().expect("instances")[1];
    assert!(near(
        i1.transform_point3(scene.meshes[0].positions[1]),
        Vec3::new(10.0, 1.0, 0.0)
    ));
    assert_eq!(
        scene.transforms[0],
        Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0))
    );
    assert_eq!(scene.nodes, [Some(0)]);
    // accessors of different counts are an error naming the node
    let mut bin = Bin::default();
    let mut doc = instanced(&mut bin);
    let two = bin.floats(&[1., 1., 1., 1., 1., 1.], "VEC3", 3);
    doc["nodes"][0]["extensions"]["EXT_mesh_gpu_instancing"]["attributes"]["SCALE"] = json!(two);
    let e = load_gltf_scene(bin.write("instances-bad.gltf", doc))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node 0") && e.contains("different counts"),
        "{e}"
    );
}

/// An animated instanced node carries its instances: at any time each instance is placed by
/// the node's pose times its own matrix, the frame the same as three objects placed so.
#[test]
fn animated_instances_follow_their_node() {
    let mut bin = Bin::default();
    let mut doc = instanced(&mut bin);
    move_node_along_z(&mut bin, &mut doc);
    let path = bin.write("instances-moving.gltf", doc);
    let scene = rxpipe::io::load_scene(&path).unwrap();
    assert_eq!(scene.objects.len(), 1);
    let o = &scene.objects[0];
    let instances = o.instances.clone().expect("instances");
    // three objects where the node is at time 1 (z = 9), each placed by its instance
    let mut placed = rxpipe::Scene::from_meshes("placed", vec![o.mesh.clone(); 3]);
    let at = Mat4::from_translation(Vec3::new(0.0, 0.0, 9.0));
    for (p, i) in placed.objects.iter_mut().zip(&instances) {
        p.transform = at * *i;
    }
    let camera = rxpipe::Camera {
        eye: Vec3::new(5.0, 5.0, 30.0),
        target: Vec3::new(5.0, 5.0, 9.0),
        ..scene.camera
    };
    let r = rxpipe::Renderer::new(rxpipe::Backend::Cpu).unwrap();
    let p = rxpipe::Pipeline::builder()
        .cull(rxpipe::CullMode::None)
        .build(&r)
        .unwrap();
    let a = p.prepare(&scene).unwrap();
    let b = p.prepare(&placed).unwrap();
    let fa = p
        .render_prepared(&a, &scene, &camera, (96, 96), 1.0)
        .unwrap();
    let fb = p
        .render_prepared(&b, &placed, &camera, (96, 96), 1.0)
        .unwrap();
    assert!(fa.stats.raster.rasterized == 3, "{:?}", fa.stats.raster);
    assert!(fa.color == fb.color && fa.depth == fb.depth);
    // and at time 0 the node is back at z = 5: the frame differs
    let f0 = p
        .render_prepared(&a, &scene, &camera, (96, 96), 0.0)
        .unwrap();
    assert!(f0.depth != fa.depth);
}

#[test]
fn animated_morph_weights_shape_the_mesh_at_any_time() {
    // the morphed triangle's node 0 with its weights animated from (0, 0) at time 0 to (1, 1)
    // at time 1, linearly: the animation, not the mesh's weights (0.5, 0.25), shapes it
    let mut bin = Bin::default();
    let mut doc = morphed(&mut bin);
    let t = bin.floats(&[0.0, 1.0], "SCALAR", 1);
    bin.accessors[t]["min"] = json!([0.0]);
    bin.accessors[t]["max"] = json!([1.0]);
    let w = bin.floats(&[0.0, 0.0, 1.0, 1.0], "SCALAR", 1);
    doc["scenes"] = json!([{"nodes": [0]}]);
    doc["animations"] = json!([{"channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}],
        "samplers": [{"input": t, "output": w}]}]);
    let path = bin.write("morph-animated.gltf", doc);
    let g = load_gltf_scene(&path).unwrap();
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    assert_eq!(g.deformed.len(), 1);
    assert!(near(g.meshes[0].positions[2], Vec3::new(0.0, 1.0, 0.0)));
    let mut scene = rxpipe::io::load_scene(&path).unwrap();
    assert_eq!(scene.pose_meshes(0.5), [0]);
    let m = &scene.objects[0].mesh;
    assert!(
        near(m.positions[2], Vec3::new(0.0, 1.0, 0.5)),
        "{}",
        m.positions[2]
    );
    assert!(
        near(m.positions[1], Vec3::new(1.5, 0.0, 0.0)),
        "{}",
        m.positions[1]
    );
    let tilted = Vec3::new(0.5, 0.0, 0.5).normalize();
    assert!(near(m.normals.as_ref().unwrap()[2], tilted));
    // non-indexed, the triangle is welded, so it keeps its shape at time 0, and says so
    let mut soup: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    soup["meshes"][0]["primitives"][0]
        .as_object_mut()
        .unwrap()
        .remove("indices");
    let soup_path = path.with_file_name("morph-animated-soup.gltf");
    std::fs::write(&soup_path, soup.to_string()).unwrap();
    let g = load_gltf_scene(&soup_path).unwrap();
    assert!(g.deformed.is_empty());
    assert!(
        g.notes.len() == 1
            && g.notes[0].contains("1 primitive(s) whose shape an animation changes"),
        "{:?}",
        g.notes
    );
    // a weights output of the wrong length is a channel not played, with a note
    let mut bin = Bin::default();
    let mut doc = morphed(&mut bin);
    let t = bin.floats(&[0.0, 1.0], "SCALAR", 1);
    let w = bin.floats(&[0.0, 0.0, 1.0], "SCALAR", 1);
    doc["animations"] = json!([{"channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}],
        "samplers": [{"input": t, "output": w}]}]);
    let g = load_gltf_scene(bin.write("morph-bad.gltf", doc)).unwrap();
    assert!(
        g.notes.iter().any(|n| n.contains("channel 0 is not played")
            && n.contains("3 output values for 2 keys of 2 weights")),
        "{:?}",
        g.notes
    );
}
