//! Patches as pictures: renders a mesh in the patch order with the patch shading mode, each
//! RXMesh patch its own colour and the faces in another patch's ribbon paler, as the paper's
//! Figure 5c, on the GPU when there is one (the patching too) and otherwise on the CPU.
//!
//! ```sh
//! cargo run --release --example patches -- [MESH] [--size 512] [--out patches.png]
//! ```

use rxpipe::{Backend, Pipeline, Renderer, Scene, ShadingMode, VertexOrder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut input, mut size, mut out) = (None, 512u32, "patches.png".to_string());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--size" => size = args.next().ok_or("--size needs a number")?.parse()?,
            "--out" => out = args.next().ok_or("--out needs a file")?,
            _ => input = Some(a),
        }
    }
    if std::path::Path::new(&out).exists() {
        return Err(format!("{out} exists; choose another --out").into());
    }
    let mesh = match &input {
        Some(p) => rxpipe::io::load_mesh_or_spec(p)?,
        None => rxpipe::mesh::icosphere(5),
    };
    let scene = Scene::from_meshes("patches", vec![mesh]);
    let renderer = Renderer::new(Backend::Auto)?;
    eprintln!("{}", renderer.notice);
    let pipeline = Pipeline::builder()
        .order(VertexOrder::Patch(size))
        .shading(ShadingMode::Patches)
        .build(&renderer)?;
    let prepared = pipeline.prepare(&scene)?;
    // the order stage's report: how many patches, and where they were made
    for line in prepared.stage_summary() {
        println!("{line}");
    }
    let frame = pipeline.render_prepared(&prepared, &scene, &scene.camera, (1280, 720), 0.0)?;
    frame.save_png(&out)?;
    println!("wrote {out}: {}", frame.stats);
    Ok(())
}
