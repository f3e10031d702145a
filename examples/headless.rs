//! Renders a scene or mesh without a window, several frames in a row, and prints per-stage times.
//! The frames are 1/30 s apart, so a glTF scene's animations move from one to the next (the time
//! a frame is rendered at is `render_into`'s `time`).
//!
//! cargo run --release --example headless -- [SCENE_OR_MESH] [FRAMES] [STRATEGY] [SHADING]
//!
//! Without a scene it draws the built-in one. The last frame goes to headless.png in the
//! working folder, or to headless-2.png (-3, ...) where that exists.

use rxpipe::{Backend, Pipeline, Renderer, ShadingMode, Strategy, VertexOrder};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("headless: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), rxpipe::Error> {
    let mut args = std::env::args().skip(1);
    // (no path: the built-in scene, so the example runs from any folder)
    let path = args.next();
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let strategy = args
        .next()
        .and_then(|s| Strategy::parse(&s))
        .unwrap_or(Strategy::parse("hash").unwrap());
    let shading = args
        .next()
        .and_then(|s| ShadingMode::parse(&s))
        .unwrap_or_default();
    let scene = match &path {
        Some(p) => rxpipe::io::load_scene(p)?,
        None => rxpipe::io::builtin_scene(),
    };
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
    let out = unused_name();
    frame.save_png(&out)?;
    println!("wrote {out}");
    Ok(())
}

/// headless.png, or headless-2.png, -3, ... where it exists: a picture already there is kept.
fn unused_name() -> String {
    (1..)
        .map(|k| match k {
            1 => "headless.png".to_string(),
            k => format!("headless-{k}.png"),
        })
        .find(|n| !std::path::Path::new(n).exists())
        .expect("some name is free")
}
