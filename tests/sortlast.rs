//! Sort-last rendering on one device: a frame drawn as N parts of its triangles and composited
//! by depth equals the frame drawn whole, colour and depth byte for byte, on the repository's
//! scene, generated meshes and every shared mesh and scene, with and without the frustum stage
//! and back-face culling, blended objects drawn over the composite; on the CPU, and on the GPU
//! where there is one.

mod common;

use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, ShadingMode};

/// Renders `scene` whole and in 2, 3 and 7 parts with `renderer`, through the default stages
/// and with the frustum stage, back-face culled and unculled, and compares.
fn check(renderer: &Renderer, scene: &Scene, size: (u32, u32), what: &str) {
    check_shaded(renderer, scene, size, what, ShadingMode::Lit);
}

/// [`check`] in a shading mode.
fn check_shaded(
    renderer: &Renderer,
    scene: &Scene,
    size: (u32, u32),
    what: &str,
    shading: ShadingMode,
) {
    let blended = scene.objects.iter().any(|o| {
        o.mesh
            .material
            .as_ref()
            .is_some_and(|m| m.alpha == rxpipe::material::AlphaMode::Blend)
    });
    for frustum in [false, true] {
        for cull in [CullMode::Back, CullMode::None] {
            let b = Pipeline::builder().cull(cull).shading(shading);
            let b = if frustum {
                b.stages(&["frustum"]).unwrap()
            } else {
                b
            };
            let p = b.build(renderer).unwrap();
            let prepared = p.prepare(scene).unwrap();
            let whole = p
                .render_prepared(&prepared, scene, &scene.camera, size, 0.0)
                .unwrap();
            for parts in [2, 3, 7] {
                let f = p
                    .render_parts(&prepared, scene, &scene.camera, size, 0.0, parts)
                    .unwrap();
                let at = format!("{what}, {parts} parts, frustum {frustum}, {cull:?}");
                assert_eq!(f.geometry_triangles(), whole.geometry_triangles(), "{at}");
                assert!(f.depth == whole.depth, "{at}: depth differs");
                assert!(f.color == whole.color, "{at}: colour differs");
                let said = |what: &str| f.notes.iter().any(|n| n.contains(what));
                assert!(said("parts"), "{at}: {:?}", f.notes);
                assert_eq!(said("blended objects drawn over"), blended, "{at}");
            }
        }
    }
}

trait Triangles {
    fn geometry_triangles(&self) -> u64;
}

impl Triangles for rxpipe::Frame {
    fn geometry_triangles(&self) -> u64 {
        self.stats.geometry.triangles
    }
}

fn each_backend(mut f: impl FnMut(&Renderer, &str)) {
    f(&Renderer::new(Backend::Cpu).unwrap(), "cpu");
    if let Some(gpu) = common::gpu() {
        f(&Renderer::from_gpu(gpu), "cuda");
    }
}

#[test]
fn parts_composited_equal_the_whole_frame_on_generated_scenes() {
    let default = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    let mut ball = rxpipe::mesh::icosphere(5);
    ball.normals = None;
    let balls = Scene::from_meshes("balls", vec![ball.clone(), ball]);
    each_backend(|r, b| {
        check(r, &default, (320, 180), &format!("{b}: default scene"));
        check(
            r,
            &balls,
            (160, 120),
            &format!("{b}: two balls in one place"),
        );
    });
    // on the GPU, frames big enough to be fused (and the mesh's batch tables), each part
    // drawing triangle ranges of the one object
    if let Some(gpu) = common::gpu() {
        let rings = rxpipe::mesh::rings(2 * rxpipe::raster::FUSE_MIN_TRIANGLES as u32);
        let scene = Scene::from_meshes("rings", vec![rings]);
        check(
            &Renderer::from_gpu(gpu),
            &scene,
            (320, 180),
            "cuda: fused rings",
        );
    }
}

/// Blended objects are drawn after the composited parts, over their colour and depth: the
/// repository's textured scene (a blended pane before textured, masked and opaque objects) in
/// the lit mode, where they blend, and in the normals mode, where they are drawn as opaque; and
/// in the depth mode, whose grey spans the whole frame's depths (not a part's), with and
/// without a blended layer.
#[test]
fn blended_objects_drawn_over_the_parts_equal_the_whole_frame() {
    let scene = rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap();
    let default = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    each_backend(|r, b| {
        let what = format!("{b}: default scene, depth");
        check_shaded(r, &default, (320, 180), &what, ShadingMode::Depth);
        for shading in [ShadingMode::Lit, ShadingMode::Normals, ShadingMode::Depth] {
            let what = format!("{b}: textured scene, {shading:?}");
            check_shaded(r, &scene, (240, 160), &what, shading);
        }
    });
}

#[test]
fn parts_composited_equal_the_whole_frame_on_shared_meshes_and_scenes() {
    if let Some(dir) = common::meshes() {
        for name in ["stanford-bunny.obj", "igea.ply", "teapot.obj"] {
            let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
            let scene = Scene::from_meshes(name, vec![m]);
            each_backend(|r, b| check(r, &scene, (200, 150), &format!("{b}: {name}")));
        }
    }
    if let Some(dir) = common::scenes() {
        for f in common::SCENE_FILES {
            let scene = rxpipe::io::load_scene(dir.join(f)).unwrap();
            each_backend(|r, b| check(r, &scene, (240, 135), &format!("{b}: {f}")));
        }
    }
}

#[test]
fn one_part_is_the_frame_and_partitions_stay_in_order() {
    let scene = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    let r = Renderer::new(Backend::Cpu).unwrap();
    let p = Pipeline::builder().build(&r).unwrap();
    let prepared = p.prepare(&scene).unwrap();
    let whole = p
        .render_prepared(&prepared, &scene, &scene.camera, (160, 90), 0.0)
        .unwrap();
    let one = p
        .render_parts(&prepared, &scene, &scene.camera, (160, 90), 0.0, 1)
        .unwrap();
    assert_eq!(one.color, whole.color);
    // more parts than triangles: the extra parts draw nothing, the frame is the same
    let tri = rxpipe::Mesh::new(
        "one triangle",
        vec![
            glam::Vec3::new(-1.0, -1.0, 0.0),
            glam::Vec3::new(1.0, -1.0, 0.0),
            glam::Vec3::new(0.0, 1.0, 0.0),
        ],
        vec![0, 1, 2],
    );
    let one_tri = Scene::from_meshes("one triangle", vec![tri]);
    let prepared = p.prepare(&one_tri).unwrap();
    let whole = p
        .render_prepared(&prepared, &one_tri, &one_tri.camera, (64, 48), 0.0)
        .unwrap();
    let many = p
        .render_parts(&prepared, &one_tri, &one_tri.camera, (64, 48), 0.0, 5)
        .unwrap();
    assert!(
        whole.color.chunks(4).any(|c| c != &whole.color[..4]),
        "drawn"
    );
    assert_eq!((many.color, many.depth), (whole.color, whole.depth));
    // a scene prepared for another pipeline is refused, whole or in parts
    let patches = Pipeline::builder()
        .order(rxpipe::VertexOrder::Patch(64))
        .build(&r)
        .unwrap();
    let e = patches
        .render_parts(&prepared, &one_tri, &one_tri.camera, (64, 48), 0.0, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("prepare it again"), "{e}");
}

/// Parts of `pixels` pixels: depths from few values (many ties between parts), a quarter of the
/// pixels far (1.0, the background), and colours telling the parts apart.
fn synthetic_parts(n: usize, pixels: usize) -> Vec<(Vec<u8>, Vec<f32>)> {
    let mut seed = 0x9e37_79b9u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    (0..n)
        .map(|p| {
            let depth: Vec<f32> = (0..pixels)
                .map(|_| match next() % 8 {
                    0 | 1 => 1.0,
                    k => 0.25 + 0.1 * k as f32,
                })
                .collect();
            let color: Vec<u8> = (0..pixels)
                .flat_map(|i| [p as u8, (i % 251) as u8, next() as u8, 255])
                .collect();
            (color, depth)
        })
        .collect()
}

/// The GPU's composite of parts held on one device equals the CPU's, colour and depth byte for
/// byte (1, 2, 3 and 7 parts, a 1920x1080 frame and an odd size); and through NCCL, where one
/// GPU makes a communicator of one rank, the composite of its one part is that part.
#[test]
fn parts_composited_on_the_gpu_equal_the_cpus() {
    use rxpipe::sortlast::cuda::{nccl_present, DeviceComposite, NcclComposite};
    let Some(gpu) = common::gpu() else { return };
    let mut device = DeviceComposite::new(&gpu).unwrap();
    for (w, h) in [(1920usize, 1080usize), (37, 23)] {
        let pixels = w * h;
        for n in [1, 2, 3, 7] {
            let parts = synthetic_parts(n, pixels);
            let (mut color, mut depth) = (Vec::new(), Vec::new());
            let host: Vec<(&[u8], &[f32])> = parts
                .iter()
                .map(|(c, d)| (c.as_slice(), d.as_slice()))
                .collect();
            rxpipe::sortlast::composite::by_depth(&host, &mut color, &mut depth).unwrap();
            let uploaded: Vec<_> = parts
                .iter()
                .map(|(c, d)| {
                    (
                        gpu.upload(c, "a part's colour").unwrap(),
                        gpu.upload(d, "a part's depth").unwrap(),
                    )
                })
                .collect();
            let on_device: Vec<_> = uploaded.iter().map(|(c, d)| (c, d)).collect();
            device.parts(&on_device, pixels).unwrap();
            let (mut gc, mut gd) = (Vec::new(), Vec::new());
            device.download(&mut gc, &mut gd).unwrap();
            let at = format!("{n} parts of {w}x{h}");
            assert!(gd == depth, "{at}: depth differs");
            assert!(gc == color, "{at}: colour differs");
            if n > 1 {
                // (every part wins somewhere)
                for p in 0..n as u8 {
                    assert!(
                        gc.chunks(4).any(|px| px[0] == p),
                        "{at}: part {p} never wins"
                    );
                }
            }
        }
    }
    let short = gpu.zeros::<f32>(10, "a short part").unwrap();
    let bytes = gpu.zeros::<u8>(40, "a short part").unwrap();
    assert!(device.parts(&[(&bytes, &short)], 11).is_err());
    assert!(device.parts(&[], 11).is_err());
    let require = std::env::var("RXPIPE_REQUIRE_GPU").is_ok_and(|v| v == "1");
    if !nccl_present() && !require {
        eprintln!("notice: no NCCL library; skipping the NCCL composite");
        return;
    }
    let mut group = NcclComposite::new(std::slice::from_ref(&gpu)).unwrap();
    assert_eq!(group.ranks(), 1);
    let parts = synthetic_parts(1, 1920 * 1080);
    let (c, d) = (
        gpu.upload(&parts[0].0, "a part's colour").unwrap(),
        gpu.upload(&parts[0].1, "a part's depth").unwrap(),
    );
    group.parts(&[(&c, &d)], 1920 * 1080).unwrap();
    group.sync().unwrap();
    let (mut gc, mut gd) = (Vec::new(), Vec::new());
    group.rank(0).download(&mut gc, &mut gd).unwrap();
    assert!(
        gd == parts[0].1 && gc == parts[0].0,
        "one rank's composite is its part"
    );
    assert!(group.parts(&[(&c, &d), (&c, &d)], 1920 * 1080).is_err());
}

/// A frame stage that keeps the first half of every object's triangles (two ranges) and counts
/// its runs.
struct CountedHalf(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rxpipe::passes::FrameStage for CountedHalf {
    fn name(&self) -> &str {
        "counted-half"
    }
    fn backends(&self) -> &'static [rxpipe::BackendKind] {
        &[rxpipe::BackendKind::Cpu]
    }
    fn run(
        &self,
        ctx: &rxpipe::passes::FrameContext,
        vis: &mut [rxpipe::passes::Visibility],
    ) -> Result<(), rxpipe::passes::PassError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (v, o) in vis.iter_mut().zip(ctx.objects) {
            let half = (o.triangles / 2) as u32;
            v.keep = Some(vec![0..half / 3, half / 3..half]);
        }
        Ok(())
    }
}

/// The frame stages run once for a frame drawn in parts (and its blended layer), and the parts
/// take what they left: ranges a custom stage keeps, cut between the parts, give the whole
/// frame's bytes.
#[test]
fn the_frame_stages_run_once_for_all_the_parts() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let r = Renderer::new(Backend::Cpu).unwrap();
    let p = Pipeline::builder()
        .frame_stage(CountedHalf(runs.clone()))
        .build(&r)
        .unwrap();
    for scene in [
        rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap(),
        rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap(),
    ] {
        let prepared = p.prepare(&scene).unwrap();
        runs.store(0, Ordering::Relaxed);
        let whole = p
            .render_prepared(&prepared, &scene, &scene.camera, (200, 120), 0.0)
            .unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        let f = p
            .render_parts(&prepared, &scene, &scene.camera, (200, 120), 0.0, 3)
            .unwrap();
        assert_eq!(
            runs.load(Ordering::Relaxed),
            2,
            "{}: once for the parts",
            scene.name
        );
        assert!(
            f.color == whole.color && f.depth == whole.depth,
            "{}",
            scene.name
        );
        assert_eq!(f.stats.culled(), whole.stats.culled(), "{}", scene.name);
    }
}

/// Parts re-balanced by their measured times, frame after frame as the camera moves, still give
/// the whole frame's bytes, and the shares move away from even parts.
#[test]
fn parts_balanced_by_their_times_equal_the_whole_frame() {
    use rxpipe::sortlast::balance::Balance;
    let scene = rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap();
    each_backend(|r, b| {
        let p = Pipeline::builder().build(r).unwrap();
        let prepared = p.prepare(&scene).unwrap();
        let mut balance = Balance::new(3);
        for k in 0..5 {
            let mut camera = scene.camera;
            let turn = glam::Mat3::from_rotation_y(0.3 * k as f32);
            camera.eye = camera.target + turn * (camera.eye - camera.target);
            let whole = p
                .render_prepared(&prepared, &scene, &camera, (200, 120), 0.0)
                .unwrap();
            let f = p
                .render_parts_balanced(&prepared, &scene, &camera, (200, 120), 0.0, &mut balance)
                .unwrap();
            let at = format!("{b}: frame {k}, shares {:?}", balance.shares());
            assert!(f.color == whole.color && f.depth == whole.depth, "{at}");
        }
        let s = balance.shares();
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{s:?}");
        assert!(
            s != Balance::new(3).shares(),
            "{b}: the shares followed the times"
        );
    });
}
