//! Frames spread over several GPUs (a share of the triangles on each, composited on the
//! devices): equal to the frame one GPU draws, colour and depth byte for byte, frame after frame
//! as the shares re-balance. Where the host has one GPU, the ranks are that GPU named several
//! times (each rank its own engine and resident scene, the shares composited there); where it
//! has several, every GPU, composited through NCCL. And what a user who asks for GPUs that are
//! not there is told.

mod common;

use rxpipe::{Backend, CullMode, Devices, Pipeline, Renderer, Scene, ShadingMode};

/// Draws `scene` on `one` (a one-GPU renderer) and on `spread` through the default stages and
/// the frustum stage, back faces culled and not, three frames each (the shares move between
/// them), and compares.
fn check(one: &Renderer, spread: &Renderer, scene: &Scene, size: (u32, u32), what: &str) {
    let modes: &[ShadingMode] = &[ShadingMode::Lit, ShadingMode::Depth];
    for &shading in modes {
        for frustum in [false, true] {
            for cull in [CullMode::Back, CullMode::None] {
                let b = || {
                    let b = Pipeline::builder().cull(cull).shading(shading);
                    match frustum {
                        true => b.stages(&["frustum"]).unwrap(),
                        false => b,
                    }
                };
                let mut p1 = b().build(one).unwrap();
                let whole = p1.render(scene, &scene.camera, size).unwrap();
                let p = b().build(spread).unwrap();
                assert_eq!(p.ranks(), spread.gpus().len());
                let prepared = p.prepare(scene).unwrap();
                let at = format!("{what}, {shading:?}, frustum {frustum}, {cull:?}");
                for frame in 0..3 {
                    let f = p
                        .render_prepared(&prepared, scene, &scene.camera, size, 0.0)
                        .unwrap();
                    let at = format!("{at}, frame {frame}");
                    assert_eq!(
                        f.stats.geometry.triangles, whole.stats.geometry.triangles,
                        "{at}"
                    );
                    assert!(f.depth == whole.depth, "{at}: depth differs");
                    assert!(f.color == whole.color, "{at}: colour differs");
                    let parts = f.stats.parts.as_ref().expect("a spread frame's parts");
                    assert_eq!(parts.part_ms.len(), p.ranks(), "{at}");
                    assert!(
                        f.notes.iter().any(|n| n.contains("spread over")),
                        "{at}: {:?}",
                        f.notes
                    );
                }
                let shares = p.rank_shares();
                assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{at}");
            }
        }
    }
}

/// The scenes compared: the repository's (a blended pane among them), a mesh large enough for
/// fused frames and batch tables, and the shared meshes and scenes where they are.
fn scenes() -> Vec<(String, Scene, (u32, u32))> {
    let mut out = vec![
        (
            "default scene".to_string(),
            rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap(),
            (320, 180),
        ),
        (
            "textured scene".into(),
            rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap(),
            (240, 160),
        ),
    ];
    let rings = rxpipe::mesh::rings(2 * rxpipe::raster::FUSE_MIN_TRIANGLES as u32);
    out.push((
        "fused rings".into(),
        Scene::from_meshes("rings", vec![rings]),
        (320, 180),
    ));
    if let Some(dir) = common::meshes() {
        let name = "stanford-bunny.obj";
        let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
        out.push((name.into(), Scene::from_meshes(name, vec![m]), (200, 150)));
    }
    if let Some(dir) = common::scenes() {
        for f in common::SCENE_FILES {
            out.push((
                f.to_string(),
                rxpipe::io::load_scene(dir.join(f)).unwrap(),
                (240, 135),
            ));
        }
    }
    out
}

#[test]
fn frames_spread_over_ranks_of_one_gpu_equal_the_one_gpu_frame() {
    let Some(gpu) = common::gpu() else { return };
    let one = Renderer::from_gpu(gpu);
    let spread = Renderer::on_devices(Backend::Cuda, &Devices::List(vec![0, 0, 0])).unwrap();
    assert_eq!(spread.gpus().len(), 3);
    for (what, scene, size) in scenes() {
        check(
            &one,
            &spread,
            &scene,
            size,
            &format!("3 ranks on GPU 0: {what}"),
        );
    }
}

#[test]
fn frames_spread_over_several_gpus_equal_the_one_gpu_frame() {
    let Some(gpu) = common::gpu() else { return };
    let n = rxpipe::gpu::Gpu::count();
    if n < 2 {
        eprintln!("notice: this host has {n} GPU; frames over several GPUs are not drawn here");
        return;
    }
    let one = Renderer::from_gpu(gpu);
    let all = Renderer::on_devices(Backend::Cuda, &Devices::All).unwrap();
    assert_eq!(all.gpus().len(), n);
    for (what, scene, size) in scenes() {
        check(&one, &all, &scene, size, &format!("{n} GPUs: {what}"));
    }
}

#[test]
fn gpus_asked_for_are_parsed_and_missing_ones_named() {
    assert_eq!(Devices::parse("2"), Some(Devices::Count(2)));
    assert_eq!(Devices::parse("all"), Some(Devices::All));
    assert_eq!(Devices::parse("list:0,1"), Some(Devices::List(vec![0, 1])));
    for bad in ["0", "-1", "two", "list:", "list:0,x", ""] {
        assert_eq!(Devices::parse(bad), None, "{bad}");
    }
    assert_eq!(Devices::default(), Devices::Count(1));
    assert_eq!(Devices::Count(4).ordinals(8).unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(Devices::All.ordinals(2).unwrap(), vec![0, 1]);
    let e = Devices::Count(2).ordinals(1).unwrap_err().to_string();
    assert!(
        e.contains("2 GPUs") && e.contains("has 1 CUDA device"),
        "{e}"
    );
    let e = Devices::List(vec![0, 3])
        .ordinals(2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GPU 3"), "{e}");
    assert!(Devices::All.ordinals(0).is_err());
    // the CPU backend draws on no GPU
    let e = Renderer::on_devices(Backend::Cpu, &Devices::Count(2)).unwrap_err();
    assert!(e.to_string().contains("backend is cpu"), "{e}");
    // one GPU is the plain renderer, on whatever backend
    let r = Renderer::on_devices(Backend::Cpu, &Devices::Count(1)).unwrap();
    assert!(r.gpus().is_empty());
    let p = Pipeline::builder().build(&r).unwrap();
    assert_eq!(p.ranks(), 1);
    // more GPUs than the host has: an error naming how many there are
    let there = rxpipe::gpu::Gpu::count();
    let e = Renderer::on_devices(Backend::Auto, &Devices::Count(there + 2)).unwrap_err();
    assert!(e.to_string().contains("GPUs were asked for"), "{e}");
}
