//! glTF node animation: the node tree and channels read, objects moved at a frame's time on
//! both backends (the CUDA frame must agree with the CPU's where there is a GPU), broken
//! channels left out with a note, and the shared Cesium truck's wheels turning in place.

mod common;

use glam::{Mat4, Vec3};
use rxpipe::{Backend, Camera, Pipeline, Renderer, Scene};

/// A glTF of two triangles: 'cargo' under 'carrier', which an animation drives along x (0 to 2
/// over a second, LINEAR) while cargo turns 90 degrees about z at t = 1 (STEP), and 'ground', a
/// node nothing moves. A third channel has key times out of order. Written into a folder of
/// `test`'s own (the tests run at once).
fn two_triangles(test: &str) -> std::path::PathBuf {
    let gltf = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,2]}],
        "nodes":[{"name":"carrier","children":[1]},
                 {"name":"cargo","mesh":0,"translation":[0,1,0]},
                 {"name":"ground","mesh":0,"translation":[0,-3,0]}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "animations":[{"name":"drive","channels":[
            {"sampler":0,"target":{"node":0,"path":"translation"}},
            {"sampler":1,"target":{"node":1,"path":"rotation"}},
            {"sampler":2,"target":{"node":1,"path":"scale"}}],
          "samplers":[{"input":1,"output":2},{"input":1,"output":3,"interpolation":"STEP"},
                      {"input":4,"output":2}]}],
        "accessors":[
          {"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[-0.5,-0.5,0],"max":[0.5,0.5,0]},
          {"bufferView":1,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]},
          {"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"},
          {"bufferView":3,"componentType":5126,"count":2,"type":"VEC4"},
          {"bufferView":4,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]}],
        "bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":8},
          {"buffer":0,"byteOffset":44,"byteLength":24},{"buffer":0,"byteOffset":68,"byteLength":32},
          {"buffer":0,"byteOffset":100,"byteLength":8}],
        "buffers":[{"uri":"moving.bin","byteLength":108}]}"#;
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let floats: [f32; 27] = [
        -0.5, -0.5, 0.0, 0.5, -0.5, 0.0, 0.0, 0.5, 0.0, // the triangle
        0.0, 1.0, // key times
        0.0, 0.0, 0.0, 2.0, 0.0, 0.0, // translations
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, s, s, // rotations: identity, 90 degrees about z
        1.0, 0.0, // key times out of order
    ];
    let bin: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let d = common::tmp_dir(&format!("animation-{test}"));
    std::fs::write(d.join("moving.bin"), bin).unwrap();
    let p = d.join("moving.gltf");
    std::fs::write(&p, gltf).unwrap();
    p
}

/// The object `k`'s triangle at time `t`.
fn corners(scene: &Scene, k: usize, t: f32) -> Vec<Vec3> {
    let posed = scene.animation.poses(t, scene.objects.len());
    let model = posed[k].unwrap_or(scene.objects[k].transform);
    let o = &scene.objects[k];
    o.mesh
        .positions
        .iter()
        .map(|p| model.transform_point3(*p))
        .collect()
}

fn near(a: &[Vec3], b: &[Vec3]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.distance(*q) < 1e-5)
}

#[test]
fn animated_nodes_move_their_meshes_and_broken_channels_are_named() {
    let scene = rxpipe::io::load_scene(two_triangles("moves")).unwrap();
    assert_eq!(scene.objects.len(), 2);
    let a = &scene.animation;
    assert_eq!((a.rigs.len(), a.bindings.len(), a.clips()), (1, 1, 1));
    assert_eq!(a.duration(), 1.0);
    let cargo = a.bindings[0].object;
    let ground = 1 - cargo;
    // the channel with unordered key times is left out, and said
    assert!(
        scene.notes.iter().any(
            |n| n.contains("animation 0 ('drive') channel 2 is not played")
                && n.contains("key times must increase")
        ),
        "{:?}",
        scene.notes
    );
    assert_eq!(a.rigs[0].clips[0].channels.len(), 2);
    let tri = |dx: f32, dy: f32| {
        vec![
            Vec3::new(-0.5 + dx, -0.5 + dy, 0.0),
            Vec3::new(0.5 + dx, -0.5 + dy, 0.0),
            Vec3::new(dx, 0.5 + dy, 0.0),
        ]
    };
    // before the first key, between keys (linear), and held after the last (step turned)
    assert!(near(&corners(&scene, cargo, -1.0), &tri(0.0, 1.0)));
    assert!(near(&corners(&scene, cargo, 0.5), &tri(1.0, 1.0)));
    let turned = vec![
        Vec3::new(2.5, 0.5, 0.0),
        Vec3::new(2.5, 1.5, 0.0),
        Vec3::new(1.5, 1.0, 0.0),
    ];
    assert!(near(&corners(&scene, cargo, 7.0), &turned));
    // ground moves never: put in world space once
    for t in [0.0, 0.5, 7.0] {
        assert!(near(&corners(&scene, ground, t), &tri(0.0, -3.0)));
    }
    assert_eq!(scene.objects[ground].transform, Mat4::IDENTITY);
    // the mesh tools read the file posed at time 0
    let meshes = rxpipe::io::load_meshes(two_triangles("moves")).unwrap().0;
    let top = meshes
        .iter()
        .flat_map(|m| &m.positions)
        .map(|p| p.y)
        .fold(f32::MIN, f32::max);
    assert_eq!(top, 1.5);
}

#[test]
fn scene_files_place_animated_files() {
    // the file twice, moved apart: each object moves with its node under its own placement
    let file = two_triangles("placed");
    let toml = "[[object]]\nmesh = \"moving.gltf\"\ntranslate = [0.0, 0.0, -5.0]\n\n\
                [[object]]\nmesh = \"moving.gltf\"\nscale = [-1.0, 1.0, 1.0]\n";
    let p = file.with_file_name("moving.toml");
    std::fs::write(&p, toml).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert_eq!(scene.objects.len(), 4);
    let a = &scene.animation;
    assert_eq!((a.rigs.len(), a.bindings.len()), (2, 2));
    let (first, second) = (a.bindings[0].object, a.bindings[1].object);
    assert!(first < 2 && (2..4).contains(&second));
    let centre = |k: usize, t: f32| corners(&scene, k, t).iter().sum::<Vec3>() / 3.0;
    let c = centre(first, 0.5);
    assert!(
        c.distance(Vec3::new(1.0, 1.0 - 1.0 / 6.0, -5.0)) < 1e-5,
        "{c}"
    );
    let c = centre(second, 0.5);
    assert!(
        c.distance(Vec3::new(-1.0, 1.0 - 1.0 / 6.0, 0.0)) < 1e-5,
        "{c}"
    );
    // at time 0, as loaded
    for k in [first, second] {
        let posed = a.poses(0.0, 4)[k].unwrap();
        assert!(posed.abs_diff_eq(scene.objects[k].transform, 1e-6));
    }
}

/// The frame of `scene` at time `t` on the CPU, and on the GPU (which must agree) where there is
/// one.
fn frame_at(scene: &Scene, t: f32) -> rxpipe::Frame {
    let mut frames = Vec::new();
    let mut backends = vec![Backend::Cpu];
    if common::gpu().is_some() {
        backends.push(Backend::Cuda);
    }
    for b in backends {
        let r = Renderer::new(b).unwrap();
        let p = Pipeline::builder().build(&r).unwrap();
        let prepared = p.prepare(scene).unwrap();
        frames.push(
            p.render_prepared(&prepared, scene, &scene.camera, (160, 120), t)
                .unwrap(),
        );
    }
    if let [c, g] = &frames[..] {
        common::assert_frames_agree(c, g, &format!("the frame at {t} s"));
    }
    frames.swap_remove(0)
}

/// The mean x of the covered pixels of rows `rows`.
fn covered_x(f: &rxpipe::Frame, rows: std::ops::Range<u32>) -> f32 {
    let (mut sum, mut n) = (0.0, 0.0);
    for y in rows {
        for x in 0..f.width {
            if f.depth[(y * f.width + x) as usize] < 1.0 {
                sum += x as f32;
                n += 1.0;
            }
        }
    }
    assert!(n > 0.0, "nothing covered");
    sum / n
}

#[test]
fn frames_draw_the_animation_at_their_time() {
    let mut scene = rxpipe::io::load_scene(two_triangles("frames")).unwrap();
    scene.camera = Camera {
        eye: Vec3::new(1.0, -1.0, 8.0),
        target: Vec3::new(1.0, -1.0, 0.0),
        up: Vec3::Y,
        fov_y: 60.0,
        near: 0.1,
        far: 100.0,
    };
    let (start, end) = (frame_at(&scene, 0.0), frame_at(&scene, 1.5));
    // the cargo (upper rows) moved right by two units, about 25 pixels at this distance; the
    // ground (lower rows) stayed
    let (upper, lower) = (0..55, 75..120);
    let moved = covered_x(&end, upper.clone()) - covered_x(&start, upper);
    assert!(moved > 15.0, "the cargo moved {moved} pixels");
    let stayed = covered_x(&end, lower.clone()) - covered_x(&start, lower);
    assert!(stayed.abs() < 1e-3, "the ground moved {stayed} pixels");
}

#[test]
fn the_truck_turns_its_wheels_in_place() {
    let Some(dir) = common::scenes() else { return };
    let scene = rxpipe::io::load_scene(dir.join("CesiumMilkTruck/CesiumMilkTruck.gltf")).unwrap();
    let a = &scene.animation;
    assert!(!a.is_empty() && a.duration() > 0.0);
    assert!(
        !scene.notes.iter().any(|n| n.contains("animation")),
        "{:?}",
        scene.notes
    );
    let (p0, p1) = (
        a.poses(0.0, scene.objects.len()),
        a.poses(0.4, scene.objects.len()),
    );
    let mut wheels = 0;
    for (k, o) in scene.objects.iter().enumerate() {
        let (Some(m0), Some(m1)) = (p0[k], p1[k]) else {
            continue;
        };
        wheels += 1;
        // turned, about its own centre
        assert!(!m0.abs_diff_eq(m1, 1e-3), "object {k} does not turn");
        let (lo, hi) = o.mesh.bounds().unwrap();
        let c = (lo + hi) * 0.5;
        let d = m0.transform_point3(c).distance(m1.transform_point3(c));
        assert!(d < 1e-3, "object {k}'s centre moved by {d}");
    }
    assert!(wheels >= 2, "{wheels} objects move");
    // the truck's frame on both backends at a moment of the animation
    frame_at(&scene, 0.4);
}
