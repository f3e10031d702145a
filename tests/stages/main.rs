//! The stage machinery: normals against a float64 reference on both backends, the frustum stage
//! (same image, stats, CPU and GPU verdicts equal), choosing stages by name, invalidation, moves
//! between host and device, failures confined to their object, and no silent fallback.

#[path = "../common/mod.rs"]
mod common;
mod normals;
mod smooth;

use glam::{DVec3, Mat4, Vec3};
use rxpipe::backend::BackendKind;
use rxpipe::passes::frustum::{Placement, GPU_FROM_OBJECTS};
use rxpipe::passes::{
    self, Derived, FrameContext, Frustum, MeshPass, Normals, NormalsMode, NormalsVia, ObjectBounds,
    PassContext, PassError, Smooth, SmoothMethod, Stage, Visibility, WorkingMesh,
};
use rxpipe::{Backend, Camera, Mesh, Pipeline, Renderer, Scene, Strategy};

const SMOOTH: [NormalsMode; 3] = [NormalsMode::Area, NormalsMode::Angle, NormalsMode::Max];
const VIAS: [NormalsVia; 3] = [NormalsVia::Indices, NormalsVia::Fv, NormalsVia::Vf];

#[test]
fn stages_parse_by_name_and_refuse_what_does_not_exist() {
    assert!(matches!(passes::parse("normals").unwrap(), Stage::Mesh(_)));
    assert!(matches!(passes::parse("frustum").unwrap(), Stage::Frame(_)));
    assert!(matches!(
        passes::parse("order:forsyth").unwrap(),
        Stage::Order(rxpipe::VertexOrder::Forsyth)
    ));
    let e = passes::parse("sharpen").err().unwrap().to_string();
    assert!(e.contains("smooth, normals, order, frustum"), "{e}");

    for bad in [
        "normals:mode=sideways",
        "normals:sideways",
        "normals:overwrite=maybe",
        "normals:angle:mode=area",
        "frustum:1",
        "order:zigzag",
    ] {
        assert!(
            matches!(passes::parse(bad), Err(PassError::Argument { .. })),
            "{bad} was accepted"
        );
    }
    let list = passes::parse_list(&["normals:angle,frustum", "order:random"]).unwrap();
    assert_eq!(list.len(), 3);
    // every registered stage parses with no arguments
    for i in passes::registry() {
        passes::parse(i.name).unwrap();
    }
}

fn two_objects_one_behind() -> Scene {
    let a = rxpipe::mesh::icosphere(3);
    let mut b = rxpipe::mesh::torus(1.0, 0.3, 32, 12);
    b.transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 30.0)));
    let mut s = Scene::from_meshes("two", vec![a, b]);
    s.camera = Camera {
        eye: Vec3::new(0.0, 0.0, 4.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 45.0,
        near: 0.1,
        far: 100.0,
    };
    s
}

/// Renders `scene` on `backend` with the frustum stage where `on` says, and without it.
fn with_and_without_frustum(backend: Backend, on: &str, scene: &Scene) -> [rxpipe::Frame; 2] {
    let renderer = Renderer::new(backend).unwrap();
    [true, false].map(|with| {
        let b = Pipeline::builder().default_stages(false);
        let b = if with {
            b.stages(&[format!("frustum:on={on}")]).unwrap()
        } else {
            b
        };
        let mut p = b.build(&renderer).unwrap();
        p.render(scene, &scene.camera, (160, 120)).unwrap()
    })
}

fn check_frustum(backend: Backend, place: &str, runs_on: BackendKind) {
    let scene = two_objects_one_behind();
    let behind = scene.objects[1].mesh.triangle_count() as u64;
    let [on, off] = with_and_without_frustum(backend, place, &scene);
    assert_eq!(on.color, off.color, "the stage changed the image");
    assert_eq!(on.depth, off.depth);
    assert_eq!(on.stats.culled(), (1, behind));
    let st = &on.stats.stages[0];
    assert_eq!(st.stage, "frustum");
    assert_eq!(st.backend, Some(runs_on));
    assert!(off.stats.stages.is_empty());
    // the frame's host times: its parts, one after another, within its total, the frame stage
    // among the first; on the GPU the raster call's wait for the device within it
    for f in [&on, &off] {
        let (h, r) = (&f.stats.host, &f.stats.raster);
        let parts = h.stages_ms + h.draws_ms + h.raster_ms + h.stats_ms;
        assert!(
            h.raster_ms > 0.0 && parts <= f.stats.total_ms + 1e-6,
            "{h:?} against {}",
            f.stats.total_ms
        );
        let gpu = r.host_tables_ms + r.host_launch_ms + r.host_wait_ms;
        match backend {
            Backend::Cuda => assert!(r.host_wait_ms > 0.0 && gpu <= h.raster_ms, "{r:?}"),
            _ => assert_eq!(gpu, 0.0),
        }
    }
    assert!(on.stats.host.stages_ms >= st.ms);
    assert_eq!(
        on.stats.geometry.triangles + behind,
        off.stats.geometry.triangles
    );
    // the camera turned around: the sphere is culled and the torus drawn
    let mut s = scene.clone();
    s.camera.target = Vec3::new(0.0, 0.0, 30.0);
    let [on, off] = with_and_without_frustum(backend, "auto", &s);
    assert_eq!(on.color, off.color);
    assert_eq!(
        on.stats.culled(),
        (1, s.objects[0].mesh.triangle_count() as u64)
    );
    // looking away from everything: nothing is drawn, and the frame is the background
    s.camera.target = Vec3::new(100.0, 0.0, 4.0);
    let [on, off] = with_and_without_frustum(backend, "auto", &s);
    assert_eq!(on.color, off.color);
    assert_eq!(on.stats.culled().0, 2);
    assert_eq!(on.stats.geometry.triangles, 0);
    assert!(on.color.chunks_exact(4).all(|p| p == &on.color[..4]));
}

#[test]
fn frustum_stage_keeps_the_image_and_counts_what_it_culled() {
    check_frustum(Backend::Cpu, "auto", BackendKind::Cpu);
    // asking for the GPU on the CPU backend runs it on the CPU
    check_frustum(Backend::Cpu, "cuda", BackendKind::Cpu);
    // auto keeps a few objects on the host, and takes the GPU for many
    let f = Frustum::default();
    assert_eq!(f.runs_on(BackendKind::Cuda, 2), BackendKind::Cpu);
    assert_eq!(
        f.runs_on(BackendKind::Cuda, GPU_FROM_OBJECTS),
        BackendKind::Cuda
    );
    assert_eq!(
        f.runs_on(BackendKind::Cpu, GPU_FROM_OBJECTS),
        BackendKind::Cpu
    );
}

#[test]
fn gpu_frustum_stage_keeps_the_image_and_counts_what_it_culled() {
    if common::gpu().is_none() {
        return;
    }
    check_frustum(Backend::Cuda, "auto", BackendKind::Cpu);
    check_frustum(Backend::Cuda, "cuda", BackendKind::Cuda);
}

#[test]
fn gpu_frustum_verdicts_equal_the_cpu_ones() {
    // boxes scattered around a camera, many straddling the planes
    let mut seed = 0x1234_5678u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32 * 2.0 - 1.0
    };
    let objects: Vec<ObjectBounds> = (0..5000)
        .map(|_| {
            let c = Vec3::new(rnd() * 8.0, rnd() * 8.0, rnd() * 8.0);
            let h = Vec3::new(rnd().abs(), rnd().abs(), rnd().abs()) * 2.0;
            ObjectBounds {
                object: 0,
                bounds: Some((c - h, c + h)),
                model: Mat4::from_rotation_y(rnd()),
                triangles: 1,
                patches: None,
                mesh: None,
            }
        })
        .collect();
    let camera = Camera {
        eye: Vec3::new(0.0, 2.0, 8.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 50.0,
        near: 0.5,
        far: 12.0,
    };
    let gpu = common::gpu();
    let mut verdicts = Vec::new();
    for (kind, g) in [(BackendKind::Cpu, None), (BackendKind::Cuda, gpu.as_ref())] {
        if kind == BackendKind::Cuda && g.is_none() {
            break;
        }
        let ctx = FrameContext {
            backend: kind,
            gpu: g,
            camera: &camera,
            view_proj: camera.view_projection(1.5),
            objects: &objects,
            cull: rxpipe::raster::CullMode::Back,
        };
        let mut visible = vec![Visibility::default(); objects.len()];
        let stage = Frustum::new(Placement::Cuda);
        assert_eq!(stage.runs_on(kind, objects.len()), kind);
        rxpipe::passes::FrameStage::run(&stage, &ctx, &mut visible).unwrap();
        verdicts.push(visible.iter().map(|v| v.visible).collect::<Vec<_>>());
    }
    let culled = verdicts[0].iter().filter(|v| !**v).count();
    assert!(culled > 1000 && culled < 4000, "{culled} of 5000 culled");
    if let Some(g) = verdicts.get(1) {
        assert_eq!(&verdicts[0], g);
    }
}

/// A pass that fails on meshes of one name and counts the others.
struct FailOn(&'static str);

impl MeshPass for FailOn {
    fn name(&self) -> &str {
        "fail-on"
    }
    fn backends(&self) -> &'static [BackendKind] {
        &[BackendKind::Cpu]
    }
    fn invalidates(&self) -> Derived {
        Derived::NONE
    }
    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        if mesh.name() == self.0 {
            return Err(PassError::Failed {
                stage: "fail-on".into(),
                object: ctx.object,
                mesh: mesh.name().into(),
                message: "refused on purpose".into(),
            });
        }
        Ok("nothing".into())
    }
}

#[test]
fn a_stage_failing_on_one_object_leaves_the_others() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut a = rxpipe::mesh::icosphere(2);
    a.name = "good".into();
    let mut b = rxpipe::mesh::icosphere(1);
    b.name = "bad".into();
    let scene = Scene::from_meshes("mixed", vec![a.clone(), b]);
    let p = Pipeline::builder()
        .pass(FailOn("bad"))
        .build(&renderer)
        .unwrap();
    let prepared = p.prepare(&scene).unwrap();
    assert_eq!(prepared.objects.len(), 1);
    assert_eq!(prepared.objects[0].object, 0);
    assert_eq!(prepared.failures.len(), 1);
    let f = &prepared.failures[0];
    assert!(
        f.contains("object 1") && f.contains("bad") && f.contains("refused"),
        "{f}"
    );
    let frame = p
        .render_prepared(&prepared, &scene, &scene.camera, (64, 64), 0.0)
        .unwrap();
    assert_eq!(frame.stats.geometry.triangles, a.triangle_count() as u64);
    // the notes name the right objects when one before them failed: the bad object first,
    // then one whose re-indexing removes vertices (a soup), then one it leaves as it is
    let mut soup = rxpipe::mesh::icosphere(1);
    soup.name = "soup".into();
    soup.positions = soup
        .indices
        .iter()
        .map(|&i| soup.positions[i as usize])
        .collect();
    soup.indices = (0..soup.positions.len() as u32).collect();
    soup.normals = None;
    soup.uvs = None;
    let mixed = Scene::from_meshes(
        "mixed",
        vec![scene.objects[1].mesh.clone(), soup, a.clone()],
    );
    let prepared = p.prepare(&mixed).unwrap();
    let notes = prepared.reindex_notes();
    let reindexed: Vec<&String> = notes.iter().filter(|n| n.contains("reindex")).collect();
    assert_eq!(reindexed.len(), 1, "{notes:?}");
    assert!(reindexed[0].starts_with("object 1:"), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.starts_with("left out: object 0")),
        "{notes:?}"
    );
    // every object failing is an error naming the first
    let only_bad = Scene::from_meshes("bad", vec![scene.objects[1].mesh.clone()]);
    let e = p.prepare(&only_bad).err().unwrap().to_string();
    assert!(e.contains("fail-on") && e.contains("bad"), "{e}");
}

/// A pass that moves every vertex (so normals and bounds go stale) and records the adjacency it
/// was given.
struct Inflate;

impl MeshPass for Inflate {
    fn name(&self) -> &str {
        "inflate"
    }
    fn backends(&self) -> &'static [BackendKind] {
        &[BackendKind::Cpu]
    }
    fn invalidates(&self) -> Derived {
        Derived::NORMALS | Derived::BOUNDS
    }
    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        let m = mesh.host_mut().map_err(PassError::gpu("inflate"))?;
        let adjacency = ctx.adjacency(m);
        assert_eq!(adjacency.offsets.len(), m.vertex_count() + 1);
        for p in &mut m.positions {
            *p *= 2.0;
        }
        Ok("doubled".into())
    }
}

#[test]
fn a_pass_that_moves_positions_gets_normals_and_bounds_rebuilt_after_it() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let scene = Scene::from_meshes("ball", vec![rxpipe::mesh::icosphere(3)]);
    let p = Pipeline::builder().pass(Inflate).build(&renderer).unwrap();
    let prepared = p.prepare(&scene).unwrap();
    // the icosphere has normals; the pass invalidated them, so the default stage ran after it
    let names: Vec<&str> = prepared.stages.iter().map(|r| r.stage.as_str()).collect();
    assert_eq!(
        names,
        ["reindex", "inflate", "normals", "order", "resident"]
    );
    let (lo, hi) = prepared.objects[0].bounds.unwrap();
    assert!(
        (hi - lo - Vec3::splat(4.0)).abs().max_element() < 1e-3,
        "{lo} {hi}"
    );
    // without the pass the default normals stage does not run (the mesh has normals)
    let plain = Pipeline::builder().build(&renderer).unwrap();
    let names: Vec<String> = plain
        .prepare(&scene)
        .unwrap()
        .stages
        .into_iter()
        .map(|r| r.stage)
        .collect();
    assert_eq!(names, ["reindex", "order", "resident"]);
}

#[test]
fn adjacency_is_cached_until_invalidated() {
    let m = rxpipe::mesh::icosphere(2);
    let mut ctx = PassContext::new(BackendKind::Cpu, None, 0);
    assert!(!ctx.has_adjacency());
    let a = ctx.adjacency(&m);
    assert!(std::sync::Arc::ptr_eq(&a, &ctx.adjacency(&m)));
    ctx.invalidate(Derived::NORMALS);
    assert!(ctx.has_adjacency());
    ctx.invalidate(Derived::ADJACENCY);
    assert!(!ctx.has_adjacency());
}

#[test]
fn every_stage_reports_its_backend_on_the_cpu() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut m = rxpipe::mesh::icosphere(3);
    m.normals = None;
    let scene = Scene::from_meshes("ball", vec![m]);
    let mut p = Pipeline::builder()
        .stages(&["normals:angle", "order:forsyth"])
        .unwrap()
        .build(&renderer)
        .unwrap();
    assert_eq!(p.order, rxpipe::VertexOrder::Forsyth);
    let prepared = p.prepare(&scene).unwrap();
    assert!(prepared
        .stages
        .iter()
        .all(|r| r.backend == BackendKind::Cpu));
    assert!(prepared.stages.iter().all(|r| r.moved.is_none()));
    let f = p.render(&scene, &scene.camera, (64, 48)).unwrap();
    assert_eq!(f.stats.backend, Some(BackendKind::Cpu));
    assert_eq!(f.stats.stages[0].backend, Some(BackendKind::Cpu));
}

/// `scene` prepared by `p` and drawn from its camera at 128x96.
fn fresh_frame(p: &Pipeline, scene: &Scene) -> rxpipe::Frame {
    p.render_prepared(
        &p.prepare(scene).unwrap(),
        scene,
        &scene.camera,
        (128, 96),
        0.0,
    )
    .unwrap()
}

#[test]
fn gpu_stages_run_on_the_device_and_say_when_the_mesh_moves() {
    let Some(gpu) = common::gpu() else { return };
    let renderer = Renderer::from_gpu(gpu);
    // (large enough for re-indexing on the GPU: reindex::AUTO_SERIAL_INDICES)
    let mut m = rxpipe::mesh::icosphere(5);
    assert!(m.indices.len() >= rxpipe::reindex::AUTO_SERIAL_INDICES);
    m.normals = None;
    let scene = Scene::from_meshes("ball", vec![m]);
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    for order in ["input", "forsyth"] {
        let specs = ["normals:angle".to_string(), format!("order:{order}")];
        let p = Pipeline::builder()
            .stages(&specs)
            .unwrap()
            .build(&renderer)
            .unwrap();
        let prepared = p.prepare(&scene).unwrap();
        let by = |n: &str| prepared.stages.iter().find(|r| r.stage == n).unwrap();
        assert_eq!(by("reindex").backend, BackendKind::Cuda);
        assert_eq!(by("normals").backend, BackendKind::Cuda);
        assert_eq!(by("order").backend, BackendKind::Cpu);
        assert_eq!(by("resident").backend, BackendKind::Cuda);
        // re-indexed on the device and left there for the normals: no upload between them, and
        // the bounds taken there equal the host's
        assert!(by("reindex").steps.iter().any(|s| s.step == "arrays"));
        assert!(by("normals").moved.is_none(), "{:?}", by("normals").moved);
        assert_eq!(prepared.objects[0].bounds, scene.objects[0].mesh.bounds());
        if order == "input" {
            // normals computed on the device and packed there: nothing comes back to the host
            assert!(by("order").moved.is_none());
            assert!(by("resident").moved.is_none(), "{:?}", by("resident").moved);
        } else {
            let moved = by("order").moved.clone().unwrap();
            assert!(
                moved.contains("downloaded") && moved.contains("no cuda"),
                "{moved}"
            );
        }
        // the GPU frame equals the CPU frame of the same stages within the raster tolerance
        let f = p
            .render_prepared(&prepared, &scene, &scene.camera, (128, 96), 0.0)
            .unwrap();
        let fc = fresh_frame(
            &Pipeline::builder()
                .stages(&specs)
                .unwrap()
                .build(&cpu)
                .unwrap(),
            &scene,
        );
        assert_eq!(f.stats.geometry, fc.stats.geometry, "{order}");
        let differ = f
            .color
            .iter()
            .zip(&fc.color)
            .filter(|(a, b)| a.abs_diff(**b) > 1)
            .count();
        assert!(
            differ <= 8,
            "{order}: {differ} channels differ by more than 1"
        );
    }
}

/// On the CUDA backend a small mesh's stages run on the host, where it is (a launch costs more
/// than the work), and it is uploaded once with batches scanned on the host: the frame is the
/// one of a large mesh's path, the GPU's batches and shading counts included.
#[test]
fn small_meshes_stay_on_the_host_until_they_are_resident() {
    let Some(gpu) = common::gpu() else { return };
    let renderer = Renderer::from_gpu(gpu);
    let mut small = rxpipe::mesh::icosphere(3);
    assert!(small.indices.len() < rxpipe::backend::SMALL_MESH_INDICES);
    small.normals = None;
    let scene = Scene::from_meshes("ball", vec![small]);
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    for strategy in ["warp", "hash", "sort"].map(|s| Strategy::parse(s).unwrap()) {
        let p = Pipeline::builder()
            .strategy(strategy)
            .build(&renderer)
            .unwrap();
        let prepared = p.prepare(&scene).unwrap();
        let by = |n: &str| prepared.stages.iter().find(|r| r.stage == n).unwrap();
        assert_eq!(by("reindex").backend, BackendKind::Cpu);
        assert_eq!(by("normals").backend, BackendKind::Cpu);
        assert_eq!(by("resident").backend, BackendKind::Cuda);
        assert!(prepared.stages.iter().all(|r| r.moved.is_none()));
        let f = p
            .render_prepared(&prepared, &scene, &scene.camera, (128, 96), 0.0)
            .unwrap();
        let fc = fresh_frame(
            &Pipeline::builder().strategy(strategy).build(&cpu).unwrap(),
            &scene,
        );
        assert!(f.stats.raster.rasterized > 500);
        assert_eq!(f.stats.geometry, fc.stats.geometry, "{strategy:?}");
        assert_eq!(f.color, fc.color, "{strategy:?}");
    }
}

#[test]
fn a_cpu_only_shader_on_cuda_is_an_error_not_a_fallback() {
    let Some(gpu) = common::gpu() else { return };
    let renderer = Renderer::from_gpu(gpu);
    let e = Pipeline::builder()
        .vertex_shader(rxpipe::geometry::FmaLoad::new(16))
        .build(&renderer)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("CPU only") && e.contains("cuda_shader"), "{e}");
}

#[test]
fn a_cuda_only_shader_on_the_cpu_is_an_error() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let e = Pipeline::builder()
        .cuda_shader(rxpipe::geometry::cuda::CudaShader::fma(16))
        .build(&renderer)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("CUDA only"), "{e}");
}

#[test]
fn a_custom_shader_turns_the_frustum_stage_off_and_says_so() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let p = Pipeline::builder()
        .vertex_shader(rxpipe::geometry::FmaLoad::new(16))
        .build(&renderer)
        .unwrap();
    assert!(p.frame_stage_names().is_empty());
    assert!(p.notices[0].contains("frustum"));
    let p = Pipeline::builder()
        .vertex_shader(rxpipe::geometry::FmaLoad::new(16))
        .stages(&["frustum"])
        .unwrap()
        .build(&renderer)
        .unwrap();
    assert_eq!(p.frame_stage_names(), ["frustum"]);
}

#[test]
fn a_scene_prepared_for_another_configuration_is_refused() {
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let scene = Scene::from_meshes("ball", vec![rxpipe::mesh::icosphere(2)]);
    let p = Pipeline::builder().build(&renderer).unwrap();
    let prepared = p.prepare(&scene).unwrap();
    let other = Pipeline::builder()
        .strategy(Strategy::DynamicHash {
            max_indices: 300,
            max_vertices: 100,
        })
        .build(&renderer)
        .unwrap();
    let e = other
        .render_prepared(&prepared, &scene, &scene.camera, (32, 32), 0.0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("prepare it again"), "{e}");
}

#[test]
fn scene_files_name_their_stages() {
    let dir = std::path::Path::new(".");
    let s = rxpipe::io::parse_scene(
        "passes = [\"normals:angle\", \"frustum\"]\n[[object]]\ngenerator = \"icosphere\"\n",
        "t.toml",
        dir,
    )
    .unwrap();
    assert_eq!(s.passes, ["normals:angle", "frustum"]);
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    assert!(Pipeline::builder().stages(&s.passes).is_ok());
    let bad = rxpipe::io::parse_scene("passes = [\"nope\"]\n", "t.toml", dir).unwrap();
    let e = Pipeline::builder()
        .stages(&bad.passes)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown stage 'nope'"), "{e}");
    drop(renderer);
}

/// A frame stage that keeps the first half of every object's triangles, or (`broken`) leaves
/// ranges that overlap.
struct FirstHalf {
    broken: bool,
}

impl rxpipe::passes::FrameStage for FirstHalf {
    fn name(&self) -> &str {
        "first-half"
    }
    fn backends(&self) -> &'static [BackendKind] {
        &[BackendKind::Cpu]
    }
    fn run(&self, ctx: &FrameContext, vis: &mut [Visibility]) -> Result<(), PassError> {
        for (v, o) in vis.iter_mut().zip(ctx.objects) {
            let half = (o.triangles / 2) as u32;
            // two ranges, to exercise the gathering
            v.keep = Some(if self.broken {
                vec![0..half, half / 2..half]
            } else {
                vec![0..half / 3, half / 3..half]
            });
        }
        Ok(())
    }
}

fn half_scene() -> (Scene, Scene) {
    let meshes = vec![
        rxpipe::mesh::icosphere(4),
        rxpipe::mesh::torus(0.8, 0.3, 64, 24),
    ];
    let mut scene = Scene::from_meshes("two", meshes.clone());
    scene.objects[1].transform = Mat4::from_translation(Vec3::new(0.6, 0.2, 0.5));
    let mut halves = scene.clone();
    for o in &mut halves.objects {
        let t = o.mesh.triangle_count() / 2;
        o.mesh.indices.truncate(3 * t);
    }
    (scene, halves)
}

fn check_ranges(backend: Backend) {
    let renderer = Renderer::new(backend).unwrap();
    let (scene, halves) = half_scene();
    for strategy in [
        Strategy::Naive,
        Strategy::parse("hash").unwrap(),
        Strategy::Multi,
    ] {
        let mut with = Pipeline::builder()
            .strategy(strategy)
            .frame_stage(FirstHalf { broken: false })
            .build(&renderer)
            .unwrap();
        let f = with.render(&scene, &scene.camera, (160, 120)).unwrap();
        let mut plain = Pipeline::builder()
            .strategy(strategy)
            .build(&renderer)
            .unwrap();
        let g = plain.render(&halves, &scene.camera, (160, 120)).unwrap();
        assert_eq!(
            f.color, g.color,
            "{strategy}: dropping ranges changed the image"
        );
        assert_eq!(f.depth, g.depth);
        assert_eq!(f.stats.geometry.triangles, g.stats.geometry.triangles);
        let all = scene.triangle_count() as u64;
        let st = f
            .stats
            .stages
            .iter()
            .find(|s| s.stage == "first-half")
            .unwrap();
        assert_eq!(st.culled_triangles, all - g.stats.geometry.triangles);
        assert_eq!(st.culled_objects, 0);
        // the next frame draws everything again once the stage is gone
        let full = plain.render(&scene, &scene.camera, (160, 120)).unwrap();
        assert_eq!(full.stats.geometry.triangles, all);
    }
    // a stage that leaves overlapping ranges is refused, naming it
    let bad = Pipeline::builder()
        .frame_stage(FirstHalf { broken: true })
        .build(&renderer)
        .unwrap();
    let prepared = bad.prepare(&scene).unwrap();
    let e = bad
        .render_prepared(&prepared, &scene, &scene.camera, (32, 32), 0.0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("first-half") && e.contains("disjoint"), "{e}");
}

#[test]
fn a_frame_stage_can_drop_ranges_of_triangles() {
    check_ranges(Backend::Cpu);
}

#[test]
fn gpu_a_frame_stage_can_drop_ranges_of_triangles() {
    if common::gpu().is_none() {
        return;
    }
    check_ranges(Backend::Cuda);
}
