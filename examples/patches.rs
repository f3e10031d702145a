//! Patches as pictures: patches a mesh (RXMesh's Lloyd clustering, on the CPU) and renders it
//! with each patch its own colour, as the paper's Figure 5c, by drawing each patch as an object.
//!
//! ```sh
//! cargo run --release --example patches -- [MESH] [--size 512] [--out patches.png]
//! ```

use rxpipe::patch::{self, PatchOptions};
use rxpipe::{Backend, Mesh, Pipeline, Renderer, Scene};

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
        Some(p) => rxpipe::mesh::from_spec(p)
            .map(Ok)
            .unwrap_or_else(|| rxpipe::io::load_mesh(p))?,
        None => rxpipe::mesh::icosphere(5),
    };
    let opts = PatchOptions {
        max_faces: size,
        ..Default::default()
    };
    let p = patch::cpu::patch(&mesh, &opts)?;
    println!("{}", p.report);
    // one object per patch, in the patch's colour, sharing the mesh's vertices
    let objects: Vec<Mesh> = p
        .faces_of_patches()
        .iter()
        .enumerate()
        .map(|(k, faces)| {
            let c = patch::patch_color(k as u32).map(|x| (x as f32 / 255.0).powf(2.2));
            Mesh {
                name: format!("patch {k}"),
                positions: mesh.positions.clone(),
                normals: mesh.normals.clone(),
                uvs: None,
                indices: faces
                    .iter()
                    .flat_map(|&f| mesh.indices[3 * f as usize..3 * f as usize + 3].to_vec())
                    .collect(),
                base_color: Some([c[0], c[1], c[2], 1.0]),
            }
        })
        .collect();
    let scene = Scene::from_meshes("patches", objects);
    let renderer = Renderer::new(Backend::Auto)?;
    eprintln!("{}", renderer.notice);
    let mut pipeline = Pipeline::builder().build(&renderer)?;
    let frame = pipeline.render(&scene, &scene.camera, (1280, 720))?;
    frame.save_png(&out)?;
    println!("wrote {out}: {}", frame.stats);
    Ok(())
}
