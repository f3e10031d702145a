//! stage (a part of the distance tests).

use super::*;

/// A reference sphere (object 0) and, placed by their transforms, a torus 0.3 from it, a sphere
/// far from it, a small sphere crossing it and one about 0.4 from it.
fn around() -> Scene {
    let meshes = vec![
        rxpipe::mesh::icosphere(3),
        rxpipe::mesh::torus(1.0, 0.3, 32, 12),
        rxpipe::mesh::icosphere(2),
        rxpipe::mesh::icosphere(1),
        rxpipe::mesh::icosphere(2),
    ];
    let mut s = Scene::from_meshes("around", meshes);
    // a small sphere off the reference's diagonal: their boxes overlap, the spheres are about
    // 0.4 apart (so a capped search, not the boxes, tells that it is beyond 0.2)
    s.objects[4].transform = Mat4::from_scale_rotation_translation(
        Vec3::splat(0.3),
        Quat::IDENTITY,
        Vec3::new(1.2, 1.2, 0.0),
    );
    // the torus's tube (radius 0.3 about a circle of radius 1 in its xz plane) stood upright:
    // its nearest point to the sphere is about 1.6 - 1.3 = 0.3 away
    s.objects[1].transform =
        Mat4::from_rotation_translation(Quat::from_rotation_x(1.2), Vec3::new(2.6, 0.0, 0.0));
    s.objects[2].transform = Mat4::from_translation(Vec3::new(-4.0, 1.0, 0.0));
    s.objects[3].transform =
        Mat4::from_scale_rotation_translation(Vec3::splat(0.4), Quat::IDENTITY, Vec3::Y);
    s.camera = Camera {
        eye: Vec3::new(0.0, 1.0, 9.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 60.0,
        near: 0.1,
        far: 100.0,
    };
    s
}

/// What the stage should find of an object at `distance` with its cap at `within`.
fn reach(distance: f64, within: f64) -> Reach {
    if distance <= within {
        Reach::Within
    } else {
        Reach::Beyond
    }
}

/// `m` placed under `model` as the stage places it.
fn world(m: &Mesh, model: Mat4) -> Mesh {
    let p = m
        .positions
        .iter()
        .map(|&p| transform_point(&model, p))
        .collect();
    Mesh::new(m.name.clone(), p, m.indices.clone())
}

fn render_with_distance(
    backend: Backend,
    scene: &Scene,
    stage: Option<DistanceCull>,
) -> rxpipe::Frame {
    let renderer = Renderer::new(backend).unwrap();
    let b = Pipeline::builder().default_stages(false);
    let b = match stage {
        Some(s) => b.frame_stage(s),
        None => b,
    };
    let mut p = b.build(&renderer).unwrap();
    p.render(scene, &scene.camera, (160, 120)).unwrap()
}

fn check_distance_stage(backend: Backend, runs_on: BackendKind) {
    let scene = around();
    let stage = DistanceCull::new(0, 0.5, Placement::Auto);
    let measures = stage.measures();
    let frame = render_with_distance(backend, &scene, Some(stage));
    // the far sphere alone is dropped
    let far = scene.objects[2].mesh.triangle_count() as u64;
    assert_eq!(frame.stats.culled(), (1, far));
    let st = &frame.stats.stages[0];
    assert_eq!((st.stage.as_str(), st.backend), ("distance", Some(runs_on)));
    // each reach is every pair's least distance, in the world
    let d = measures.last();
    assert_eq!(d[0], None, "the reference is not measured");
    let reference = world(&scene.objects[0].mesh, scene.objects[0].transform);
    for (k, o) in scene.objects.iter().enumerate().skip(1) {
        let want = cpu::brute_force(&reference, &world(&o.mesh, o.transform)).unwrap();
        assert_eq!(d[k], Some(reach(want.distance, 0.5)), "object {k}");
    }
    assert_eq!(d[3], Some(Reach::Within), "crossing");
    // the image is the scene's without the far sphere
    let mut without = scene.clone();
    without.objects.remove(2);
    let want = render_with_distance(backend, &without, None);
    assert_eq!(frame.color, want.color);
    // within 0.2: the torus and the diagonal sphere are beyond it too, the latter told by its
    // search (their boxes overlap)
    let stage = DistanceCull::new(0, 0.2, Placement::Auto);
    let measures = stage.measures();
    let frame = render_with_distance(backend, &scene, Some(stage));
    assert_eq!(frame.stats.culled().0, 3);
    let d = measures.last();
    assert_eq!([d[1], d[2], d[4]], [Some(Reach::Beyond); 3], "{d:?}");
    // within 5 every object stays
    let all = render_with_distance(
        backend,
        &scene,
        Some(DistanceCull::new(0, 5.0, Placement::Auto)),
    );
    assert_eq!(all.stats.culled(), (0, 0));
}

#[test]
fn distance_stage_drops_the_far_objects_and_keeps_the_image() {
    check_distance_stage(Backend::Cpu, BackendKind::Cpu);
}

#[test]
fn gpu_distance_stage_drops_the_far_objects_and_keeps_the_image() {
    if common::gpu().is_none() {
        return;
    }
    check_distance_stage(Backend::Cuda, BackendKind::Cuda);
}

/// Runs `stage` over frames in which the objects of `around()` move: each frame's distances.
fn moving_frames(
    stage: &DistanceCull,
    backend: BackendKind,
    gpu: Option<&Arc<rxpipe::gpu::Gpu>>,
) -> Vec<Vec<Option<Reach>>> {
    let scene = around();
    let measures = stage.measures();
    let meshes: Vec<Arc<Mesh>> = scene
        .objects
        .iter()
        .map(|o| Arc::new(o.mesh.clone()))
        .collect();
    let mut out = Vec::new();
    for f in 0..6 {
        let t = f as f32 * 0.4;
        // frames 2 and 3 stand still; the others move the torus and the far sphere towards
        // the reference, turned and scaled
        let step = if f == 3 { 2.0 * 0.4 } else { t };
        let objects: Vec<ObjectBounds> = scene
            .objects
            .iter()
            .enumerate()
            .map(|(k, o)| {
                let model = match k {
                    1 => {
                        Mat4::from_rotation_translation(
                            Quat::from_rotation_z(step),
                            Vec3::new(-step, 0.0, 0.0),
                        ) * o.transform
                    }
                    2 => {
                        o.transform
                            * Mat4::from_scale_rotation_translation(
                                Vec3::new(1.0 + step, 1.0, 0.5),
                                Quat::from_rotation_y(step),
                                Vec3::new(1.5 * step, 0.0, 0.0),
                            )
                    }
                    _ => o.transform,
                };
                ObjectBounds {
                    object: k,
                    bounds: o.mesh.bounds(),
                    model,
                    triangles: o.mesh.triangle_count() as u64,
                    patches: None,
                    mesh: Some(meshes[k].clone()),
                }
            })
            .collect();
        let ctx = FrameContext {
            backend,
            gpu,
            camera: &scene.camera,
            view_proj: Mat4::IDENTITY,
            objects: &objects,
            cull: rxpipe::raster::CullMode::Back,
        };
        let mut v = vec![Visibility::default(); objects.len()];
        stage.run(&ctx, &mut v).unwrap();
        let d = measures.last();
        // the CPU's against every pair, each frame
        if backend == BackendKind::Cpu {
            let r = world(&meshes[0], objects[0].model);
            for k in 1..objects.len() {
                let want = cpu::brute_force(&r, &world(&meshes[k], objects[k].model)).unwrap();
                assert_eq!(
                    d[k],
                    Some(reach(want.distance, 0.5)),
                    "frame {f} object {k}"
                );
                assert_eq!(v[k].visible, want.distance <= 0.5, "frame {f} object {k}");
            }
        }
        out.push(d);
    }
    out
}

#[test]
fn distance_stage_follows_moving_objects() {
    let stage = DistanceCull::new(0, 0.5, Placement::Cpu);
    let d = moving_frames(&stage, BackendKind::Cpu, None);
    assert_eq!(d[2], d[3], "a still frame measures the same");
    assert_eq!(d[0][2], Some(Reach::Beyond));
    assert!(
        matches!(d[5][2], Some(Reach::Within)),
        "the far sphere came near"
    );
}

#[test]
fn gpu_distance_stage_follows_moving_objects_as_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let cpu_d = moving_frames(
        &DistanceCull::new(0, 0.5, Placement::Cpu),
        BackendKind::Cpu,
        None,
    );
    let stage = DistanceCull::new(0, 0.5, Placement::Cuda);
    let gpu_d = moving_frames(&stage, BackendKind::Cuda, Some(&gpu));
    assert_eq!(gpu_d, cpu_d, "the GPU's distances, frame by frame");
}

#[test]
fn distance_stage_names_bad_arguments_and_objects() {
    for (spec, says) in [
        ("distance:to=one", "object's index"),
        ("distance:within=-1", "distance >= 0"),
        ("distance:within=nan", "distance >= 0"),
        ("distance:on=tpu", "auto, cpu, cuda"),
        ("distance:far=2", "unknown argument"),
    ] {
        let e = rxpipe::passes::parse(spec).err().expect(spec).to_string();
        assert!(e.contains(says), "{spec}: {e}");
    }
    // a reference the scene does not have
    let scene = around();
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut p = Pipeline::builder()
        .stages(&["distance:to=7"])
        .unwrap()
        .build(&renderer)
        .unwrap();
    let e = p
        .render(&scene, &scene.camera, (32, 32))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no prepared object 7") && e.contains("0, 1, 2, 3"),
        "{e}"
    );
}

#[test]
fn gpu_placing_equals_the_hosts() {
    let Some(gpu) = common::gpu() else { return };
    let mut d = distance::cuda::Distance::new(&gpu).unwrap();
    let model = Mat4::from_scale_rotation_translation(
        Vec3::new(1.5, 0.5, 2.0),
        Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
        Vec3::new(10.0, -3.0, 0.25),
    );
    // trees of depth 0 (one triangle) to 14, below and above the levels one block refits:
    // each placed alone, then all at once under transforms of their own
    let one = Mesh::new("one", vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![0, 1, 2]);
    let meshes = [
        one,
        rxpipe::mesh::icosphere(0),
        rxpipe::mesh::icosphere(3),
        rxpipe::mesh::icosphere(5),
    ];
    let models: Vec<Mat4> = (0..meshes.len())
        .map(|k| Mat4::from_translation(Vec3::new(k as f32, 0.5, -2.0)) * model)
        .collect();
    let mut device = Vec::new();
    let mut hosts = Vec::new();
    for (m, model) in meshes.iter().zip(&models) {
        let mut host = distance::placed::Placed::new(Arc::new(m.clone())).unwrap();
        host.place(*model).unwrap();
        let tree = distance::bvh::Bvh::build(m).unwrap();
        let mut dev = distance::cuda::DeviceMesh::placed(&gpu, m, &tree).unwrap();
        d.place(&mut dev, model).unwrap();
        let (positions, boxes) = dev.download(&gpu).unwrap();
        assert_eq!(positions, host.world.positions, "{}", m.name);
        assert_eq!(boxes, host.tree.boxes, "{}", m.name);
        // back to where it was uploaded, for the placing of all at once below
        d.place(&mut dev, &Mat4::IDENTITY).unwrap();
        device.push(dev);
        hosts.push(host);
    }
    let mut jobs: Vec<_> = device
        .iter_mut()
        .zip(&models)
        .map(|(m, &x)| (m, x))
        .collect();
    d.place_many(&mut jobs).unwrap();
    for (dev, host) in device.iter().zip(&hosts) {
        let (positions, boxes) = dev.download(&gpu).unwrap();
        assert_eq!(
            positions, host.world.positions,
            "{} placed with the others",
            host.world.name
        );
        assert_eq!(
            boxes, host.tree.boxes,
            "{} placed with the others",
            host.world.name
        );
    }
}

#[test]
fn gpu_tolerance_of_many_objects_equals_the_cpus() {
    let Some(gpu) = common::gpu() else { return };
    let a = rxpipe::mesh::icosphere(4);
    let ta = distance::bvh::Bvh::build(&a).unwrap();
    let da = distance::cuda::DeviceMesh::new(&gpu, &a, &ta).unwrap();
    // objects from crossing the sphere to well apart: small spheres, soups with degenerate
    // triangles, one triangle
    let mut objects = Vec::new();
    for k in 0..30u64 {
        let t = k as f32 / 29.0;
        let dir = Vec3::new((k as f32).cos(), (k as f32 * 0.7).sin(), (k as f32).sin()).normalize();
        let centre = dir * (0.9 + 1.2 * t);
        objects.push(match k % 3 {
            0 => moved(rxpipe::mesh::icosphere(2), centre, 0.2),
            1 => soup("soup", 1 + k as usize * 3, centre, 0.3, 0.1, k + 1),
            _ => soup("one", 1, centre, 0.01, 0.2, k + 3),
        });
    }
    let trees: Vec<_> = objects
        .iter()
        .map(|m| distance::bvh::Bvh::build(m).unwrap())
        .collect();
    let device: Vec<_> = objects
        .iter()
        .zip(&trees)
        .map(|(m, t)| distance::cuda::DeviceMesh::new(&gpu, m, t).unwrap())
        .collect();
    let refs: Vec<&distance::cuda::DeviceMesh> = device.iter().collect();
    for cap in [0.0, 0.05, 0.3, 1.0] {
        let want: Vec<bool> = objects
            .iter()
            .zip(&trees)
            .map(|(m, t)| cpu::within(&a, &ta, m, t, cap))
            .collect();
        let mut q = distance::cuda::Distance::new(&gpu).unwrap();
        let got = q.within_many(&da, &refs, cap).unwrap();
        assert_eq!(got, want, "cap {cap}");
        // some of each, so that both answers are checked
        if cap == 0.3 {
            assert!(
                want.iter().any(|&w| w) && want.iter().any(|&w| !w),
                "{want:?}"
            );
        }
    }

    // A search that outgrows its fronts stops, grows them and goes on from the level that
    // stopped it. A found object drops its pairs at a moment that depends on the device's
    // order, so how far the fronts grow for objects within reach is not fixed; an object that
    // is not within reach, though its boxes are near, keeps all its pairs down to the leaves,
    // so fronts of one pair must grow for it in any order.
    // (on a diagonal, where the boxes reach past the spheres)
    let near_miss = moved(
        rxpipe::mesh::icosphere(2),
        Vec3::ONE.normalize() * (1.0 + 0.2 + 0.052),
        0.2,
    );
    let tn = distance::bvh::Bvh::build(&near_miss).unwrap();
    let dn = distance::cuda::DeviceMesh::new(&gpu, &near_miss, &tn).unwrap();
    for (cap, want) in [(0.05, false), (0.06, true)] {
        assert_eq!(
            cpu::within(&a, &ta, &near_miss, &tn, cap),
            want,
            "cap {cap}"
        );
        let mut q = distance::cuda::Distance::with_within_front(&gpu, 4).unwrap();
        assert_eq!(
            q.within_many(&da, &[&dn], cap).unwrap(),
            [want],
            "cap {cap}"
        );
        if !want {
            assert!(q.within_capacity() > 4, "{}", q.within_capacity());
        }
    }
}
