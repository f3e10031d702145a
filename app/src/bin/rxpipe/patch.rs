//! `rxpipe patch`: the RXMesh patching of a mesh and its report.

use crate::{spinner, Res};
use rxpipe::patch::{self, PatchOptions};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file, or a generator: icosphere:LEVEL, torus:N, grid:N, rings:TRIANGLES
    mesh: PathBuf,
    /// the most faces a patch may hold
    #[arg(long, default_value_t = 512)]
    size: u32,
    /// Lloyd iterations before oversized patches are split directly
    #[arg(long, default_value_t = 100)]
    iterations: u32,
    /// print the report as JSON
    #[arg(long)]
    json: bool,
    /// also write the mesh with each face in its patch's colour (binary PLY, which MeshLab and
    /// Blender open)
    #[arg(long)]
    out: Option<PathBuf>,
    /// overwrite OUT if it exists
    #[arg(long)]
    force: bool,
    /// where to patch (the same patching on both)
    #[arg(long, value_parser = rxpipe_app::named::<rxpipe::Backend>(), default_value = "auto")]
    backend: rxpipe::Backend,
}

pub fn run(a: Args) -> Res {
    if let Some(out) = &a.out {
        let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !ext.eq_ignore_ascii_case("ply") {
            return Err(format!("{}: patch colours are written as .ply", out.display()).into());
        }
        crate::check_output(out, &[&a.mesh], a.force)?;
    }
    let pb = spinner(format!("loading {}", a.mesh.display()));
    let mesh = rxpipe::io::load_mesh_or_spec(&a.mesh)?;
    pb.set_message(format!("patching {} faces", mesh.triangle_count()));
    let opts = PatchOptions {
        max_faces: a.size,
        max_iterations: a.iterations,
        ..Default::default()
    };
    let renderer = rxpipe::Renderer::new(a.backend)?;
    let backend = renderer.kind();
    mesh.validate()?;
    let p = match renderer.gpu() {
        Some(gpu) => patch::cuda::patch_indices(gpu, &mesh.indices, &opts)?,
        None => patch::cpu::patch(&mesh, &opts)?,
    };
    pb.set_message("building the patch data".to_string());
    let t = std::time::Instant::now();
    let data = patch::PatchData::build(&mesh, &p)?;
    let data_ms = t.elapsed().as_secs_f64() * 1e3;
    let memory = data.memory();
    if let Some(out) = &a.out {
        pb.set_message(format!("writing {}", out.display()));
        rxpipe::io::save_mesh_with_face_colors(&mesh, &p.face_colors(), out)?;
    }
    pb.finish_and_clear();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "mesh": a.mesh.display().to_string(),
                "backend": backend.name(),
                "report": p.report,
                "data_ms": data_ms,
                "memory": memory,
            }))?
        );
    } else {
        println!("{} ({backend}): {}", a.mesh.display(), p.report);
        println!(
            "patch data (ribbons, ownership, EV and FE) in {data_ms:.1} ms: {:.1} bytes per face ({:.1} for first-order queries only; the paper: 45.4 and 34), local faces {:.2}x the owned ones",
            memory.bytes_per_face, memory.first_order_bytes_per_face, memory.ribbon_overhead
        );
        if let Some(out) = &a.out {
            println!("wrote {} (each face in its patch's colour)", out.display());
        }
    }
    Ok(())
}
