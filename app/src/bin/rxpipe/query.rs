//! `rxpipe query`: one RXMesh query for every element of a mesh, written one line per element in
//! global ids, so that other tools can use the adjacency.

use crate::{spinner, Res};
use rxpipe::patch::{self, PatchOptions, Query};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file, or a generator: icosphere:LEVEL, torus:N, grid:N, rings:TRIANGLES
    mesh: PathBuf,
    /// the query: source then result kind (v vertex, e edge, f face)
    #[arg(long, value_parser = rxpipe_app::named::<Query>())]
    query: Query,
    /// the most faces a patch may hold
    #[arg(long, default_value_t = 512)]
    size: u32,
    /// write the lists to this file instead of standard output
    #[arg(long)]
    out: Option<PathBuf>,
    /// overwrite OUT if it exists
    #[arg(long)]
    force: bool,
}

pub fn run(a: Args) -> Res {
    if let Some(out) = &a.out {
        crate::check_output(out, &[&a.mesh], a.force)?;
    }
    let pb = spinner(format!("loading {}", a.mesh.display()));
    let mesh = rxpipe::io::load_mesh_or_spec(&a.mesh)?;
    pb.set_message(format!("patching {} faces", mesh.triangle_count()));
    let opts = PatchOptions {
        max_faces: a.size,
        ..Default::default()
    };
    let p = patch::cpu::patch(&mesh, &opts)?;
    let data = patch::PatchData::build(&mesh, &p)?;
    pb.set_message(format!("answering {}", a.query));
    let t = std::time::Instant::now();
    let r = patch::query::cpu::run(&data, a.query, None)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    pb.finish_and_clear();
    let what = a.mesh.display().to_string();
    match &a.out {
        Some(out) => {
            rxpipe::io::write_atomically(out, |w| {
                r.write_text(w, &what).map_err(rxpipe::io::IoError::at(out))
            })?;
            eprintln!(
                "{what}: {} for {} {} ({} entries) in {ms:.1} ms on the cpu, written to {}",
                a.query,
                r.len(),
                a.query.source().plural(),
                r.items.len(),
                out.display()
            );
        }
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            r.write_text(&mut w, &what)?;
            w.flush()?;
        }
    }
    Ok(())
}
