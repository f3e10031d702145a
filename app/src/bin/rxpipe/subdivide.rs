//! `rxpipe subdivide`: Loop subdivision of a mesh (the `subdivide` stage, on its own kernels or on
//! the geometry stage's strategies), written as OBJ or PLY.

use crate::{spinner, Res};
use rxpipe::backend::BackendKind;
use rxpipe::passes::{self, PassContext, Stage, WorkingMesh};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file (OBJ, PLY, STL, glTF, optionally gzipped), or a generator: icosphere:LEVEL,
    /// torus:N, grid:N, rings:TRIANGLES
    input: PathBuf,
    /// where to write the result: .obj or .ply (binary)
    out: PathBuf,
    /// how many times every triangle is split in four
    #[arg(long, default_value_t = 1)]
    levels: u32,
    /// degrees: where two crease edges (boundaries, non-manifold edges) meet at less, the vertex
    /// stays
    #[arg(long, default_value_t = 120.0)]
    corner: f32,
    /// run each level on a strategy of the geometry stage (naive, warp, sort, hash, phash,
    /// multi, patch): every new vertex one run of Loop's rules through it, the same result
    #[arg(long)]
    strategy: Option<String>,
    /// where to subdivide
    #[arg(long, value_parser = rxpipe_app::named::<rxpipe::Backend>(), default_value = "auto")]
    backend: rxpipe::Backend,
    /// overwrite OUT if it exists
    #[arg(long)]
    force: bool,
    /// print the report as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Res {
    let ext = a.out.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("obj") && !ext.eq_ignore_ascii_case("ply") {
        return Err(format!("{}: can write .obj or .ply", a.out.display()).into());
    }
    // the stage checks its arguments as `--pass` does
    let spec = format!(
        "subdivide:levels={}:corner={}{}",
        a.levels,
        a.corner,
        a.strategy
            .as_ref()
            .map_or(String::new(), |s| format!(":strategy={s}"))
    );
    let Stage::Mesh(stage) = passes::parse(&spec)? else {
        unreachable!("subdivide is a mesh stage")
    };
    crate::check_output(&a.out, &[a.input.as_path()], a.force)?;
    let renderer = rxpipe::Renderer::new(a.backend)?;
    let pb = spinner(format!("loading and re-indexing {}", a.input.display()));
    let mesh = rxpipe::io::load_mesh_or_spec(&a.input)?;
    // (Loop's rules need shared vertices: a triangle soup's corners are merged first)
    let r = rxpipe::reindex::reindex(&mesh, &Default::default(), renderer.gpu())?;
    drop(mesh);
    let (v0, f0) = (r.mesh.vertex_count(), r.mesh.triangle_count());
    let kind = renderer.kind();
    let runs_on = if stage.backends().contains(&kind) {
        kind
    } else {
        BackendKind::Cpu
    };
    pb.set_message(format!("subdividing {f0} triangles on the {runs_on}"));
    let t = std::time::Instant::now();
    let mut wm = WorkingMesh::new(r.mesh);
    let report = stage.run(&mut wm, &mut PassContext::new(runs_on, renderer.gpu(), 0))?;
    let out = wm.into_host()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    pb.set_message(format!("writing {}", a.out.display()));
    rxpipe::io::save_mesh(&out, &a.out)?;
    pb.finish_and_clear();
    if a.json {
        let json = serde_json::json!({
            "input": a.input,
            "output": a.out,
            "backend": runs_on.name(),
            "levels": a.levels,
            "strategy": a.strategy,
            "vertices_in": v0,
            "triangles_in": f0,
            "vertices": out.vertex_count(),
            "triangles": out.triangle_count(),
            "ms": ms,
            "report": report,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!(
            "subdivide ({runs_on}): {report}; {ms:.1} ms with the copies\nwrote {} ({} vertices, {} triangles)",
            a.out.display(),
            out.vertex_count(),
            out.triangle_count()
        );
    }
    Ok(())
}
