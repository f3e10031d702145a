//! Instances: an object drawn once per instance matrix, its mesh held and prepared once. A scene
//! of one instanced object must draw exactly what the same mesh placed as separate objects
//! draws (the same model matrices), on the CPU and, where there is one, on the GPU (whose frame
//! must also agree with the CPU's); scene files take instance offsets; the memory model counts
//! the mesh once and a queue per instance.

mod common;

use rxpipe::glam::{Mat4, Quat, Vec3};
use rxpipe::{Backend, CullMode, Frame, Pipeline, Renderer, Scene, ShadingMode, Strategy};

/// Nine placements: a 3x3 grid, turned and scaled differently, one of them mirrored.
fn placements() -> Vec<Mat4> {
    (0..9)
        .map(|k| {
            let (i, j) = ((k % 3) as f32, (k / 3) as f32);
            let scale = if k == 4 {
                Vec3::new(-0.8, 0.8, 0.8)
            } else {
                Vec3::splat(0.6 + 0.05 * k as f32)
            };
            Mat4::from_scale_rotation_translation(
                scale,
                Quat::from_rotation_y(0.4 * k as f32),
                Vec3::new(2.2 * (i - 1.0), 2.2 * (j - 1.0), 0.0),
            )
        })
        .collect()
}

/// The same mesh as one instanced object and as nine objects, seen by the same camera.
fn instanced_and_copied(mesh: rxpipe::Mesh) -> (Scene, Scene) {
    let under = Mat4::from_rotation_x(0.3);
    let list = placements();
    let mut instanced = Scene::from_meshes("instanced", vec![mesh.clone()]);
    instanced.objects[0].transform = under;
    instanced.objects[0].instances = Some(list.clone());
    let mut copied = Scene::from_meshes("copied", vec![mesh; list.len()]);
    for (o, i) in copied.objects.iter_mut().zip(&list) {
        o.transform = under * *i;
    }
    let (lo, hi) = copied.bounds().unwrap();
    for s in [&mut instanced, &mut copied] {
        s.camera = rxpipe::Camera::framing(lo, hi);
    }
    (instanced, copied)
}

fn frame(r: &Renderer, scene: &Scene, strategy: Strategy, shading: ShadingMode) -> Frame {
    let p = Pipeline::builder()
        .strategy(strategy)
        .shading(shading)
        .cull(CullMode::Back)
        .build(r)
        .unwrap();
    let prepared = p.prepare(scene).unwrap();
    assert_eq!(prepared.objects.len(), 9, "{}: placements", scene.name);
    p.render_prepared(&prepared, scene, &scene.camera, (320, 240), 0.0)
        .unwrap()
}

#[test]
fn an_instanced_object_draws_as_its_placed_copies() {
    let (instanced, copied) = instanced_and_copied(rxpipe::mesh::icosphere(3));
    assert_eq!(instanced.triangle_count(), copied.triangle_count());
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    let gpu = common::gpu().map(|_| Renderer::new(Backend::Cuda).unwrap());
    for strategy in ["hash", "naive", "patch"].map(|s| Strategy::parse(s).unwrap()) {
        for shading in [ShadingMode::Lit, ShadingMode::ShadingRate] {
            let what = format!("{} {shading:?}", strategy.name());
            let a = frame(&cpu, &instanced, strategy, shading);
            let b = frame(&cpu, &copied, strategy, shading);
            assert!(
                a.color == b.color && a.depth == b.depth,
                "{what}: CPU frames"
            );
            assert_eq!(a.stats.raster.rasterized, b.stats.raster.rasterized);
            assert!(a.stats.raster.rasterized > 0, "{what}: nothing drawn");
            assert_eq!(a.stats.geometry, b.stats.geometry, "{what}");
            if let Some(gpu) = &gpu {
                let g = frame(gpu, &instanced, strategy, shading);
                let h = frame(gpu, &copied, strategy, shading);
                assert!(
                    g.color == h.color && g.depth == h.depth,
                    "{what}: GPU frames"
                );
                common::assert_frames_agree(&a, &g, &what);
            }
        }
    }
}

#[test]
fn scene_files_take_instance_offsets() {
    let dir = common::tmp_dir("instances");
    let path = dir.join("offsets.toml");
    std::fs::write(
        &path,
        "[[object]]\ngenerator = \"icosphere\"\nlevel = 2\ntranslate = [0.0, 1.0, 0.0]\n\
         scale = 2.0\ninstances = [[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, -3.0]]\n",
    )
    .unwrap();
    let scene = rxpipe::io::load_scene(&path).unwrap();
    let o = &scene.objects[0];
    assert_eq!(o.placement_count(), 3);
    assert_eq!(scene.triangle_count(), 3 * o.mesh.triangle_count());
    // an offset lies in the object's own space: scaled, then moved with the object
    let centre = |m: Mat4| m.transform_point3(Vec3::ZERO);
    let at: Vec<Vec3> = o.placements(o.transform).into_iter().map(centre).collect();
    assert_eq!(
        at,
        [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(6.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, -6.0)
        ]
    );
    let (lo, hi) = scene.bounds().unwrap();
    assert!(lo.x < -1.9 && hi.x > 7.9 && lo.z < -7.9, "{lo} {hi}");
    // a number that is not finite is an error naming the object
    std::fs::write(
        &path,
        "[[object]]\ngenerator = \"icosphere\"\ninstances = [[0.0, nan, 0.0]]\n",
    )
    .unwrap();
    let e = rxpipe::io::load_scene(&path).unwrap_err().to_string();
    assert!(e.contains("object 1") && e.contains("not a finite"), "{e}");
}

#[test]
fn the_memory_model_counts_the_mesh_once_and_a_queue_per_instance() {
    let (instanced, copied) = instanced_and_copied(rxpipe::mesh::icosphere(5));
    let one = Scene::from_meshes("one", vec![rxpipe::mesh::icosphere(5)]);
    // on the CPU: the mesh held once, one object drawn at a time
    let p = Pipeline::builder()
        .build(&Renderer::new(Backend::Cpu).unwrap())
        .unwrap();
    let (a, b, c) = (
        p.footprint(&instanced),
        p.footprint(&copied),
        p.footprint(&one),
    );
    assert!(a.host < b.host, "{a:?} {b:?}");
    assert!(a.host >= c.host, "{a:?} {c:?}");
    // on the GPU (the model alone: building a CUDA pipeline needs a device): a queue and the
    // frame's triangles for each instance, the mesh once
    let counts = rxpipe::footprint::Counts::of(&rxpipe::mesh::icosphere(5));
    let hash = Strategy::parse("hash").unwrap();
    let gpu = |c: &[rxpipe::footprint::Counts]| {
        rxpipe::footprint::of(c, rxpipe::BackendKind::Cuda, hash, true).device
    };
    let nine = gpu(&[counts.placed(9)]);
    let apart = gpu(&[counts; 9]);
    let single = gpu(&[counts]);
    assert!(single < nine && nine < apart, "{single} {nine} {apart}");
}
