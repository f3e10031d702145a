//! Renders a scene or mesh without a window, several frames in a row, and prints per-stage times.
//! The frames are 1/30 s apart, so a glTF scene's animations move from one to the next (the time
//! a frame is rendered at is `render_into`'s `time`).
//!
//! cargo run --release --example headless -- [SCENE_OR_MESH] [FRAMES] [STRATEGY] [SHADING]

use rxpipe::{Backend, Pipeline, Renderer, Scene, ShadingMode, Strategy, VertexOrder};

fn main() -> Result<(), rxpipe::Error> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "scenes/default.toml".into());
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let strategy = args
        .next()
        .and_then(|s| Strategy::parse(&s))
        .unwrap_or(Strategy::parse("hash").unwrap());
    let shading = args
        .next()
        .and_then(|s| ShadingMode::parse(&s))
        .unwrap_or_default();
    let scene = Scene::load(&path)?;
    let renderer = Renderer::new(Backend::Auto)?;
    eprintln!("{}", renderer.notice);
    let pipeline = Pipeline::builder()
        .strategy(strategy)
        .order(VertexOrder::Forsyth)
        .shading(shading)
        .build(&renderer)?;
    let prepared = pipeline.prepare(&scene)?;
    let mut frame = rxpipe::Frame::empty();
    for k in 0..frames {
        pipeline.render_into(
            &prepared,
            &scene,
            &scene.camera,
            (1280, 720),
            k as f32 / 30.0,
            &mut frame,
        )?;
        println!("{}", frame.stats);
    }
    frame.save_png("headless.png")?;
    println!("wrote headless.png");
    Ok(())
}
