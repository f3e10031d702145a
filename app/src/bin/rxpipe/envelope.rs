//! `rxpipe envelope`: a mesh's inner and outer simplification envelopes (the `envelope` stage,
//! its program on the geometry stage's strategies), written as OBJ or PLY.

use crate::{spinner, Res};
use rxpipe::backend::BackendKind;
use rxpipe::passes::envelope::{build, Side};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file (OBJ, PLY, STL, glTF, optionally gzipped), or a generator: icosphere:LEVEL,
    /// torus:N, grid:N, rings:TRIANGLES
    input: PathBuf,
    /// the most a vertex moves, as a fraction of the bounding box's diagonal
    #[arg(long, default_value_t = 0.02)]
    distance: f64,
    /// where to write the inner envelope: .obj or .ply (binary)
    #[arg(long)]
    inner: Option<PathBuf>,
    /// where to write the outer envelope: .obj or .ply (binary)
    #[arg(long)]
    outer: Option<PathBuf>,
    /// run the per-vertex program through a strategy of the geometry stage (naive, warp, sort,
    /// hash, phash, multi, patch); by default each vertex once (multi on the GPU, its fastest)
    #[arg(long)]
    strategy: Option<String>,
    /// where to run the program (the exact check runs on the CPU)
    #[arg(long, value_parser = rxpipe_app::named::<rxpipe::Backend>(), default_value = "auto")]
    backend: rxpipe::Backend,
    /// overwrite the outputs if they exist
    #[arg(long)]
    force: bool,
    /// print the reports as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Res {
    let outs: Vec<(Side, &PathBuf)> = [(Side::Inner, &a.inner), (Side::Outer, &a.outer)]
        .into_iter()
        .filter_map(|(s, p)| p.as_ref().map(|p| (s, p)))
        .collect();
    if outs.is_empty() {
        return Err("nothing to write: give --inner OUT, --outer OUT or both".into());
    }
    if a.inner.is_some() && a.inner == a.outer {
        return Err("--inner and --outer name the same file: give each envelope its own".into());
    }
    for (_, out) in &outs {
        let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !ext.eq_ignore_ascii_case("obj") && !ext.eq_ignore_ascii_case("ply") {
            return Err(format!("{}: can write .obj or .ply", out.display()).into());
        }
        crate::check_output(out, &[a.input.as_path()], a.force)?;
    }
    if !(0.0..=1.0).contains(&a.distance) {
        return Err(format!(
            "--distance {}: a fraction of the bounding box's diagonal from 0 to 1",
            a.distance
        )
        .into());
    }
    let strategy = match &a.strategy {
        None => None,
        Some(s) => Some(rxpipe::geometry::Strategy::parse(s).ok_or_else(|| {
            format!(
                "--strategy {s}: expected one of {}",
                rxpipe::geometry::Strategy::NAMES.join(", ")
            )
        })?),
    };
    let renderer = rxpipe::Renderer::new(a.backend)?;
    let pb = spinner(format!("loading and re-indexing {}", a.input.display()));
    let mesh = rxpipe::io::load_mesh_or_spec(&a.input)?;
    // (a vertex's normal needs its whole ring: a triangle soup's corners are merged first)
    let r = rxpipe::reindex::reindex(&mesh, &Default::default(), renderer.gpu())?;
    drop(mesh);
    let gpu = renderer
        .gpu()
        .filter(|_| renderer.kind() == BackendKind::Cuda);
    let mut reports = Vec::new();
    for (side, out) in outs {
        pb.set_message(format!(
            "the {} envelope of {} triangles",
            side.name(),
            r.mesh.triangle_count()
        ));
        let (env, report) = build(&r.mesh, side, a.distance, strategy, gpu)?;
        pb.set_message(format!("writing {}", out.display()));
        rxpipe::io::save_mesh(&env, out)?;
        reports.push((out.clone(), report));
    }
    pb.finish_and_clear();
    if a.json {
        let json: Vec<_> = reports
            .iter()
            .map(|(out, r)| serde_json::json!({ "input": a.input, "output": out, "report": r }))
            .collect();
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for (out, r) in &reports {
            println!(
                "{} ({}; program {:.1} ms, exact check {:.1} ms)\nwrote {}",
                r.summary(),
                r.backend.name(),
                r.program_ms,
                r.check_ms,
                out.display()
            );
        }
    }
    Ok(())
}
