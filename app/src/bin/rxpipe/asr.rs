//! `rxpipe asr`: the average shading rate of each reuse strategy on a mesh, on the chosen backend.

use crate::{spinner, Res};
use rxpipe::{Backend, Pipeline, Renderer, Scene, Strategy, VertexOrder};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file, or a generator: icosphere:LEVEL, torus:N, grid:N, rings:TRIANGLES
    mesh: PathBuf,
    /// strategies, comma-separated: naive, warp, sort, hash, phash, multi, patch, or all
    #[arg(long, value_delimiter = ',', value_parser = strategies, default_value = "all")]
    strategy: Vec<Vec<Strategy>>,
    /// the triangle order the strategies see: the file's (as `render` and `view` draw it by
    /// default), or forsyth as the paper preprocesses every mesh
    #[arg(long, value_parser = rxpipe_app::named::<VertexOrder>(), default_value = "input")]
    order: VertexOrder,
    /// where the geometry stage runs
    #[arg(long, value_parser = rxpipe_app::named::<Backend>(), default_value = "auto")]
    backend: Backend,
    /// measure the file's vertices as they are: no re-indexing (render and view re-index, so
    /// by default their figures are those of the re-indexed mesh)
    #[arg(long)]
    no_reindex: bool,
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Row {
    strategy: String,
    invocations: u64,
    triangles: u64,
    asr: f64,
    ideal: f64,
}

/// One name of `--strategy`: a strategy, or `all` of them.
fn strategies(name: &str) -> Result<Vec<Strategy>, String> {
    if name.eq_ignore_ascii_case("all") {
        return Ok(Strategy::all().to_vec());
    }
    Strategy::parse(name).map(|s| vec![s]).ok_or_else(|| {
        format!(
            "'{name}' is not a strategy: {}, or all",
            Strategy::NAMES.join(", ")
        )
    })
}

pub fn run(a: Args) -> Res {
    // (each strategy once, in the order named)
    let mut strategies: Vec<Strategy> = Vec::new();
    for s in a.strategy.iter().flatten() {
        if !strategies.contains(s) {
            strategies.push(*s);
        }
    }
    let pb = spinner(format!("loading {}", a.mesh.display()));
    let mesh = rxpipe::io::load_mesh_or_spec(&a.mesh)?;
    let (vertices, triangles) = (mesh.vertex_count(), mesh.triangle_count());
    if triangles == 0 {
        return Err(format!(
            "{}: no triangles ({vertices} vertices): a shading rate needs at least one",
            a.mesh.display()
        )
        .into());
    }
    let scene = Scene::from_meshes(&a.mesh.display().to_string(), vec![mesh]);
    let renderer = Renderer::new(a.backend)?;
    pb.finish_and_clear();
    eprintln!("{}", renderer.notice);
    let bar = indicatif::ProgressBar::new(strategies.len() as u64);
    let mut rows = Vec::new();
    let mut prepared = None;
    for st in strategies {
        bar.set_message(st.to_string());
        // the mesh re-indexed as `render` does it (unless --no-reindex), in the asked order; the
        // patch strategy shades the patches of the patch order (which do not depend on the
        // order the mesh came in)
        let order = match (st, a.order) {
            (Strategy::Patch, VertexOrder::Patch(n)) => VertexOrder::Patch(n),
            (Strategy::Patch, _) => VertexOrder::Patch(rxpipe::geometry::order::PATCH_FACES),
            (_, o) => o,
        };
        let p = Pipeline::builder()
            .strategy(st)
            .order(order)
            .reindex((!a.no_reindex).then(rxpipe::reindex::ReindexOptions::default))
            .build(&renderer)?;
        if !prepared.as_ref().is_some_and(|pr| p.is_prepared_for(pr)) {
            prepared = Some(p.prepare(&scene)?);
        }
        let pr = prepared.as_ref().expect("prepared above");
        if rows.is_empty() {
            for l in rxpipe_app::noted(&pr.reindex_notes(), "") {
                eprintln!("{l}");
            }
        }
        let stats = p.geometry_stats(pr)?;
        rows.push(Row {
            strategy: if order == a.order {
                st.to_string()
            } else {
                format!("{st} ({order} order)")
            },
            invocations: stats.invocations,
            triangles: stats.triangles,
            asr: stats.asr(),
            ideal: stats.ideal_asr(),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "mesh": a.mesh.display().to_string(),
                "order": a.order.to_string(),
                "backend": renderer.kind(),
                "vertices": vertices,
                "reindexed": !a.no_reindex,
                "rows": rows,
            }))?
        );
    } else {
        println!(
            "{} ({vertices} vertices in the file, {triangles} triangles, {} order, {} backend, {})",
            a.mesh.display(),
            a.order,
            renderer.kind(),
            if a.no_reindex {
                "not re-indexed"
            } else {
                "re-indexed"
            }
        );
        println!("| strategy | invocations | triangles | ASR | ideal |");
        println!("|---|---:|---:|---:|---:|");
        for r in rows {
            println!(
                "| {} | {} | {} | {:.3} | {:.3} |",
                r.strategy, r.invocations, r.triangles, r.asr, r.ideal
            );
        }
    }
    Ok(())
}
