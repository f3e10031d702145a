//! Whole frames with the CUDA backend (geometry and rasterisation on the GPU) against the CPU
//! backend: the images must agree (at most 0.1% of pixels differ, none by more than 2/255) and the
//! depth buffers, which both compute with the same operations, must be identical. Skips without a
//! GPU unless RXPIPE_REQUIRE_GPU=1.

mod common;

use rxpipe::scene::Camera;
use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, ShadingMode, Strategy, VertexOrder};

fn frames_agree(scene: &Scene, size: (u32, u32), strategy: Strategy, shading: ShadingMode) {
    frames_agree_with(
        scene,
        &scene.camera,
        size,
        strategy,
        shading,
        CullMode::Back,
    );
}

fn frames_agree_with(
    scene: &Scene,
    camera: &Camera,
    size: (u32, u32),
    strategy: Strategy,
    shading: ShadingMode,
    cull: CullMode,
) -> rxpipe::raster::RasterStats {
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    let gpu = Renderer::new(Backend::Cuda).unwrap();
    let mut frames = Vec::new();
    for r in [&cpu, &gpu] {
        // (the patch strategy takes the patch order)
        let order = match strategy {
            Strategy::Patch => VertexOrder::Patch(512),
            _ => VertexOrder::Forsyth,
        };
        let p = Pipeline::builder()
            .strategy(strategy)
            .order(order)
            .shading(shading)
            .cull(cull)
            .build(r)
            .unwrap();
        let prepared = p.prepare(scene).unwrap();
        frames.push(
            p.render_prepared(&prepared, scene, camera, size, 0.0)
                .unwrap(),
        );
    }
    let what = format!(
        "{} {:?} {:?} {}x{}",
        strategy.name(),
        shading,
        cull,
        size.0,
        size.1
    );
    let (c, g) = (&frames[0], &frames[1]);
    common::assert_frames_agree(c, g, &what);
    assert!(g.stats.raster.rasterized > 0, "{what}: nothing drawn");
    g.stats.raster
}

#[test]
fn default_scene_on_the_gpu_equals_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    for s in Strategy::all() {
        frames_agree(&scene, (320, 180), s, ShadingMode::Lit);
    }
    frames_agree(
        &scene,
        (320, 180),
        Strategy::parse("warp").unwrap(),
        ShadingMode::ShadingRate,
    );
}

#[test]
fn shared_meshes_on_the_gpu_equal_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let Some(dir) = common::meshes() else { return };
    for f in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(f)).unwrap();
        let scene = Scene::from_meshes(f, vec![m]);
        for shading in [ShadingMode::Lit, ShadingMode::Normals] {
            frames_agree(
                &scene,
                (640, 360),
                Strategy::parse("hash").unwrap(),
                shading,
            );
        }
    }
    let m = rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap();
    let scene = Scene::from_meshes("bunny", vec![m]);
    for s in Strategy::all() {
        frames_agree(&scene, (640, 360), s, ShadingMode::ShadingRate);
    }
}

#[test]
fn every_shading_and_cull_mode_on_the_gpu_equals_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    let hash = Strategy::parse("hash").unwrap();
    for shading in [
        ShadingMode::Normals,
        ShadingMode::Depth,
        ShadingMode::Patches,
    ] {
        frames_agree(&scene, (333, 197), hash, shading);
    }
    for cull in [CullMode::None, CullMode::Front] {
        frames_agree_with(
            &scene,
            &scene.camera,
            (320, 180),
            hash,
            ShadingMode::Lit,
            cull,
        );
    }
}

// A frame zeroes its invocation counts after it is done, for the next frame's shading, which
// then does not clear them first: frames in a row must each count only their own invocations (the
// statistics, and the shading-rate image that shows them per vertex).
#[test]
fn frames_in_a_row_count_only_their_own_invocations() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    for (strategy, shading) in [
        ("warp", ShadingMode::ShadingRate),
        ("hash", ShadingMode::Lit),
    ] {
        let strategy = Strategy::parse(strategy).unwrap();
        let mut frames = Vec::new();
        for backend in [Backend::Cpu, Backend::Cuda] {
            let r = Renderer::new(backend).unwrap();
            let p = Pipeline::builder()
                .strategy(strategy)
                .shading(shading)
                .build(&r)
                .unwrap();
            let prepared = p.prepare(&scene).unwrap();
            frames.push(
                (0..3)
                    .map(|_| {
                        p.render_prepared(&prepared, &scene, &scene.camera, (320, 180), 0.0)
                            .unwrap()
                    })
                    .collect::<Vec<_>>(),
            );
        }
        assert!(frames[0][0].stats.geometry.invocations > 0);
        for (i, g) in frames[1].iter().enumerate() {
            let what = format!("{} {shading:?}, frame {i}", strategy.name());
            common::assert_frames_agree(&frames[0][i], g, &what);
        }
    }
}

#[test]
fn near_plane_and_guard_band_clipping_on_the_gpu_equal_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    // just above the floor, looking along it: floor triangles cross the near plane
    let mut low = scene.camera;
    low.eye = glam::Vec3::new(0.05, -0.43, 2.5);
    low.target = glam::Vec3::new(0.0, -0.2, 0.0);
    low.near = 0.01;
    // the near plane cuts through the sphere: its far half's back faces show through the hole
    let mut inside = scene.camera;
    inside.eye = glam::Vec3::new(-1.3, 0.35, 0.0);
    inside.target = glam::Vec3::new(0.0, 0.35, 2.0);
    inside.near = 0.7;
    let hash = Strategy::parse("hash").unwrap();
    for (camera, cull) in [(&low, CullMode::Back), (&inside, CullMode::None)] {
        let r = frames_agree_with(&scene, camera, (480, 270), hash, ShadingMode::Lit, cull);
        assert!(r.clipped > 0, "{r:?}");
    }
}

#[test]
fn gpu_raster_buffers_grow_and_say_so() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::geometry::cuda::{CudaGeometry, CudaShader, DeviceMesh};
    use rxpipe::raster::cuda::{CudaRaster, GpuDraw};
    use rxpipe::raster::{rasterize, Draw, RasterOutput, RasterSettings};
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    let s = RasterSettings {
        eye: scene.camera.eye,
        light: scene.light,
        background: scene.background,
        ..RasterSettings::new(256, 144)
    };
    let geo = CudaGeometry::new(gpu.clone(), CudaShader::transform(), false).unwrap();
    let naive = Strategy::parse("naive").unwrap();
    let view_proj = scene.camera.view_projection(256.0 / 144.0);
    let mut meshes = Vec::new();
    let mut cpu_geometry = Vec::new();
    for o in &scene.objects {
        let mut m = o.mesh.clone();
        rxpipe::passes::Normals::default().apply(&mut m).unwrap();
        let v = rxpipe::geometry::VertexIn::from_mesh(&m);
        let u = rxpipe::geometry::Uniforms::new(o.transform, view_proj, scene.camera.eye, 0.0);
        let dm = DeviceMesh::upload(&gpu, &v, &m.indices, None).unwrap();
        let mut q = geo.queue(&dm, naive, false).unwrap();
        geo.enqueue(naive, &dm, &u, &mut q).unwrap();
        meshes.push((dm, q, o.color));
        let g = rxpipe::geometry::cpu::run(
            naive,
            &v,
            &m.indices,
            None,
            &rxpipe::geometry::Transform,
            &u,
        )
        .unwrap();
        cpu_geometry.push((g, o.color));
    }
    let draws: Vec<GpuDraw> = meshes
        .iter()
        .map(|(dm, q, color)| GpuDraw {
            queue: q,
            corners: q.corners_for(dm),
            triangles: dm.index_count / 3,
            color: *color,
            rate: None,
            faces: None,
            runs: None,
            material: None,
            colors: None,
            tangents: None,
            uvs1: None,
            mirrored: false,
        })
        .collect();
    // room for one record and one bin entry: both must grow, and the frame still be right
    let mut r = CudaRaster::with_capacity(gpu.clone(), 1, 1).unwrap();
    let mut out = RasterOutput::empty();
    r.render(&draws, &s, &mut out).unwrap();
    assert_eq!(r.grown.len(), 2, "{:?}", r.grown);
    assert!(
        r.grown[0].starts_with("setup records grew from 1 to"),
        "{:?}",
        r.grown
    );
    assert!(
        r.grown[1].starts_with("tile bins grew from 1 to"),
        "{:?}",
        r.grown
    );
    let cpu_draws: Vec<Draw> = cpu_geometry
        .iter()
        .map(|(g, color)| Draw::new(g, *color))
        .collect();
    let reference = rasterize(&cpu_draws, &s).unwrap();
    assert_eq!(out.depth, reference.depth);
    let (differ, worst) = common::compare(&out.color, &reference.color);
    assert!(differ * 1000 <= 256 * 144 && worst <= 2, "{differ} {worst}");
    // a second frame needs no growing
    r.render(&draws, &s, &mut out).unwrap();
    assert!(r.grown.is_empty(), "{:?}", r.grown);
    // the draws after the first drawn over the first's frame (by a rasteriser that must grow
    // again, so uploads the target again) give the frame of all of them; the first drawn again
    // over its own frame ties everywhere and leaves it; in three shading modes
    assert!(draws.len() > 1, "the default scene has several objects");
    for shading in [ShadingMode::Lit, ShadingMode::Normals, ShadingMode::Depth] {
        let s = RasterSettings { shading, ..s };
        let mut whole = RasterOutput::empty();
        r.render(&draws, &s, &mut whole).unwrap();
        let mut over = RasterOutput::empty();
        r.render(&draws[..1], &s, &mut over).unwrap();
        let first = (over.color.clone(), over.depth.clone());
        let layer = RasterSettings {
            over_target: true,
            ..s
        };
        let mut fresh = CudaRaster::with_capacity(gpu.clone(), 1, 1).unwrap();
        fresh.render(&draws[1..], &layer, &mut over).unwrap();
        assert!(!fresh.grown.is_empty(), "{shading:?}");
        assert!(over.depth == whole.depth, "{shading:?}: depth differs");
        assert!(over.color == whole.color, "{shading:?}: colour differs");
        let mut again = RasterOutput::empty();
        r.render(&draws[..1], &s, &mut again).unwrap();
        r.render(&draws[..1], &layer, &mut again).unwrap();
        assert!(
            (again.color, again.depth) == first,
            "{shading:?}: ties keep the target"
        );
    }
    let mut small = RasterOutput::empty();
    r.render(&draws, &RasterSettings::new(128, 144), &mut small)
        .unwrap();
    let layer = RasterSettings {
        over_target: true,
        ..s
    };
    assert!(r.render(&draws, &layer, &mut small).is_err());
    // a frame size the rasteriser does not take is an error, not a crash
    let bad = RasterSettings::new(0, 10);
    assert!(r.render(&draws, &bad, &mut out).is_err());
}

#[test]
fn cuda_backend_without_a_gpu_is_a_clear_error() {
    if common::gpu().is_some() {
        return;
    }
    let e = Renderer::new(Backend::Cuda).unwrap_err().to_string();
    assert!(e.contains("CUDA is not available"), "{e}");
    let auto = Renderer::new(Backend::Auto).unwrap();
    assert!(auto.notice.starts_with("backend: cpu ("), "{}", auto.notice);
}

#[test]
fn gpu_setup_rejects_corners_outside_the_queue() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::geometry::cuda::{CudaGeometry, CudaShader, DeviceMesh};
    use rxpipe::raster::cuda::{CudaRaster, GpuDraw};
    use rxpipe::raster::{RasterOutput, RasterSettings};
    let m = rxpipe::mesh::icosphere(3);
    let v = rxpipe::geometry::VertexIn::from_mesh(&m);
    let u = rxpipe::geometry::Uniforms::new(
        glam::Mat4::IDENTITY,
        glam::Mat4::perspective_rh(0.8, 1.0, 0.1, 10.0)
            * glam::Mat4::from_translation(glam::Vec3::new(0.0, 0.0, -3.0)),
        glam::Vec3::new(0.0, 0.0, 3.0),
        0.0,
    );
    let geo = CudaGeometry::new(gpu.clone(), CudaShader::transform(), false).unwrap();
    let hash = Strategy::parse("hash").unwrap();
    let (mi, mv) = hash.dynamic_limits().unwrap();
    let mut dm = DeviceMesh::upload(&gpu, &v, &m.indices, None).unwrap();
    dm.build_batches(&gpu, mi, mv).unwrap();
    let mut q = geo.queue(&dm, hash, false).unwrap();
    geo.enqueue(hash, &dm, &u, &mut q).unwrap();
    let s = RasterSettings::new(128, 128);
    let mut r = CudaRaster::new(gpu.clone()).unwrap();
    fn draw(q: &rxpipe::geometry::cuda::DeviceQueue) -> GpuDraw<'_> {
        GpuDraw {
            queue: q,
            corners: q.corners.as_ref(),
            triangles: q.index_count / 3,
            color: [1.0; 4],
            rate: None,
            faces: None,
            runs: None,
            material: None,
            colors: None,
            tangents: None,
            uvs1: None,
            mirrored: false,
        }
    }
    let mut good = RasterOutput::empty();
    r.render(&[draw(&q)], &s, &mut good).unwrap();
    // every corner of every triangle outside the queue: all rejected, nothing drawn, no fault
    let bad = vec![u32::MAX; dm.index_count];
    gpu.stream
        .memcpy_htod(&bad, q.corners.as_mut().unwrap())
        .unwrap();
    let mut out = RasterOutput::empty();
    r.render(&[draw(&q)], &s, &mut out).unwrap();
    assert!(good.stats.rasterized > 0, "{:?}", good.stats);
    assert_eq!(out.stats.rasterized, 0, "{:?}", out.stats);
    assert_eq!(
        out.stats.rejected,
        (dm.index_count / 3) as u64,
        "{:?}",
        out.stats
    );
}

/// The project's textured scene (textures, a normal map, emissive, masks, a blended pane, two
/// lights) with every strategy: the material path reads each triangle's corners from flat,
/// indexed and patch queues alike.
#[test]
fn materials_on_the_gpu_equal_the_cpu_with_every_strategy() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    for s in Strategy::all() {
        frames_agree(&scene, (320, 180), s, ShadingMode::Lit);
    }
}

/// A material reading two uv sets (the bricks' emission on TEXCOORD_1) draws on the GPU as on
/// the CPU with every strategy, and after subdivision and flat normals (the second set carried
/// through the GPU stages); the GPU's frame equals its frame of the same texture on TEXCOORD_0
/// scaled by KHR_texture_transform, bit for bit.
#[test]
fn two_uv_sets_on_the_gpu_equal_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let (two, one) = common::two_uv_sets("gpu-uv-two");
    let (a, b) = (
        rxpipe::io::load_scene(&two).unwrap(),
        rxpipe::io::load_scene(&one).unwrap(),
    );
    for s in Strategy::all() {
        frames_agree(&a, (320, 180), s, ShadingMode::Lit);
    }
    let frame = |backend: Backend, s: &Scene, stages: &[&str]| {
        let r = Renderer::new(backend).unwrap();
        let mut p = Pipeline::builder()
            .stages(stages)
            .unwrap()
            .build(&r)
            .unwrap();
        p.render(s, &s.camera, (320, 180)).unwrap()
    };
    let (fa, fb) = (frame(Backend::Cuda, &a, &[]), frame(Backend::Cuda, &b, &[]));
    assert!(
        fa.color == fb.color,
        "{:?}",
        common::compare(&fa.color, &fb.color)
    );
    let stages = ["subdivide", "normals:flat"];
    common::assert_frames_agree(
        &frame(Backend::Cpu, &a, &stages),
        &frame(Backend::Cuda, &a, &stages),
        "two uv sets, subdivided, flat normals",
    );
}
