#[path = "../../tests/common/mod.rs"]
mod common;

use rxpipe::{Backend, Pipeline, Renderer, Scene, ShadingMode};

/// The viewer's double-buffered frames on `backend`: each frame reaches the window's buffer one
/// draw later (copied while the next renders), or on a draw without a new frame, equal to the
/// frame rendered on its own. Returns the pipeline and its preparation.
fn window_frames(backend: Backend, scene: &Scene) -> (Pipeline, rxpipe::Prepared) {
    let r = Renderer::new(backend).unwrap();
    let mut p = Pipeline::builder().build(&r).unwrap();
    let prepared = p.prepare(scene).unwrap();
    let full = p
        .render_prepared(&prepared, scene, &scene.camera, (320, 180), 0.0)
        .unwrap();
    p.color_only = true;
    let mut frames = rxpipe_app::viewer::FrameLoop::default();
    let mut window = vec![0u8; 320 * 180 * 4];
    let job = || rxpipe_app::viewer::FrameJob {
        pipeline: &p,
        prepared: &prepared,
        scene,
        camera: &scene.camera,
        size: (320, 180),
        time: 0.0,
    };
    assert!(frames.draw(Some(job()), &mut window).unwrap());
    assert!(
        window.iter().all(|&b| b == 0),
        "the first frame waits for the next draw"
    );
    for _ in 0..2 {
        assert!(frames.draw(Some(job()), &mut window).unwrap());
        let f = frames.latest();
        if backend == Backend::Cuda {
            assert!(f.depth.is_empty(), "a window frame downloads no depth");
        }
        assert_eq!(f.color, full.color);
        assert_eq!(window, full.color);
    }
    window.fill(0);
    assert!(!frames.draw(None, &mut window).unwrap());
    assert_eq!(
        window, full.color,
        "the last frame arrives without a new one"
    );
    assert!(
        full.color.chunks(4).any(|c| c != [0, 0, 0, 255]),
        "something was drawn"
    );
    (p, prepared)
}
#[test]
fn window_frames_on_the_cpu_arrive_one_draw_later_and_unchanged() {
    let scene = rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap();
    window_frames(Backend::Cpu, &scene);
}

#[test]
fn a_window_frame_downloads_only_its_colour_and_the_same_colour() {
    if common::gpu().is_none() {
        return;
    }
    let scene = rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap();
    let (mut p, _) = window_frames(Backend::Cuda, &scene);
    let mut frame = rxpipe::Frame::empty();
    // the depth mode makes its colours from the depth: it still downloads it
    p.shading = ShadingMode::Depth;
    let prepared = p.prepare(&scene).unwrap();
    p.render_into(
        &prepared,
        &scene,
        &scene.camera,
        (320, 180),
        0.0,
        &mut frame,
    )
    .unwrap();
    assert_eq!(frame.depth.len(), 320 * 180);
}
