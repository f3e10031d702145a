//! Whole frames with the CUDA backend (geometry on the GPU) against the CPU backend: the images
//! must agree (at most 0.1% of pixels differ, none by more than 2/255). Skips without a GPU unless
//! RXPIPE_REQUIRE_GPU=1.

mod common;

use rxpipe::{Backend, Pipeline, Renderer, Scene, ShadingMode, Strategy, VertexOrder};

fn compare(a: &[u8], b: &[u8]) -> (usize, u8) {
    let mut differ = 0;
    let mut worst = 0;
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = x.iter().zip(y).map(|(p, q)| p.abs_diff(*q)).max().unwrap();
        differ += (d > 0) as usize;
        worst = worst.max(d);
    }
    (differ, worst)
}

fn frames_agree(scene: &Scene, size: (u32, u32), strategy: Strategy, shading: ShadingMode) {
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    let gpu = Renderer::new(Backend::Cuda).unwrap();
    let mut images = Vec::new();
    let mut stats = Vec::new();
    for r in [&cpu, &gpu] {
        let mut p = Pipeline::builder()
            .strategy(strategy)
            .order(VertexOrder::Forsyth)
            .shading(shading)
            .build(r)
            .unwrap();
        let f = p.render(scene, &scene.camera, size).unwrap();
        stats.push(f.stats.geometry);
        images.push(f.color);
    }
    assert_eq!(stats[0], stats[1], "{} {:?}", strategy.name(), shading);
    let (differ, worst) = compare(&images[0], &images[1]);
    let pixels = (size.0 * size.1) as usize;
    assert!(
        differ * 1000 <= pixels && worst <= 2,
        "{} {:?}: {differ} of {pixels} pixels differ, by up to {worst}",
        strategy.name(),
        shading
    );
}

#[test]
fn default_scene_on_the_gpu_equals_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let scene = Scene::load("scenes/default.toml").unwrap();
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
        frames_agree(
            &scene,
            (640, 360),
            Strategy::parse("hash").unwrap(),
            ShadingMode::Lit,
        );
    }
    let m = rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap();
    let scene = Scene::from_meshes("bunny", vec![m]);
    for s in Strategy::all() {
        frames_agree(&scene, (640, 360), s, ShadingMode::ShadingRate);
    }
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
