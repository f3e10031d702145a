//! `rxpipe reindex`, `merge` and `subset`: load, re-index (on the GPU when there is one), write;
//! and `simplify`, which runs the simplification stage between the re-indexing and the writing.
//! They never overwrite an input, nor an existing file without `--force`.

use crate::{spinner, Res};
use rxpipe::reindex::{self, Method, ReindexOptions};
use std::path::PathBuf;

/// Options of the mesh tools.
#[derive(clap::Args)]
pub struct ToolArgs {
    #[arg(long, value_parser = rxpipe_app::named::<Method>(), default_value = "auto")]
    method: Method,
    /// compare positions by the grid cell of this size they round to (default: exact equality)
    #[arg(long)]
    weld: Option<f32>,
    /// overwrite OUT if it exists
    #[arg(long)]
    force: bool,
    /// print the report as JSON
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ReindexCmd {
    /// a mesh file (OBJ, PLY, STL, glTF, optionally gzipped), or a generator: icosphere:LEVEL,
    /// torus:N, grid:N, rings:TRIANGLES
    input: PathBuf,
    /// where to write the result: .obj or .ply (binary)
    out: PathBuf,
    #[command(flatten)]
    opts: ToolArgs,
}

#[derive(clap::Args)]
pub struct MergeCmd {
    /// the mesh files to merge
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// where to write the result: .obj or .ply (binary)
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    opts: ToolArgs,
}

#[derive(clap::Args)]
pub struct SubsetCmd {
    /// a mesh file
    input: PathBuf,
    /// where to write the result: .obj or .ply (binary)
    out: PathBuf,
    /// triangle ranges, e.g. 0..1000,5000..6000
    #[arg(long, conflicts_with = "part", required_unless_present = "part")]
    faces: Option<String>,
    /// the K-th part of the file (glTF: primitive K of the default scene)
    #[arg(long)]
    part: Option<usize>,
    #[command(flatten)]
    opts: ToolArgs,
}

#[derive(clap::Args)]
pub struct SimplifyCmd {
    /// a mesh file (OBJ, PLY, STL, glTF, optionally gzipped), or a generator: icosphere:LEVEL,
    /// torus:N, grid:N, rings:TRIANGLES
    input: PathBuf,
    /// where to write the result: .obj or .ply (binary)
    out: PathBuf,
    /// the envelope's width: the greatest distance allowed between input and result, either
    /// way, as a fraction of the mesh's bounding-box diagonal
    #[arg(long, default_value_t = 0.001)]
    eps: f64,
    /// stop at this fraction of the triangles (0: as few as the envelope allows)
    #[arg(long, default_value_t = 0.0)]
    target: f64,
    #[command(flatten)]
    opts: ToolArgs,
}

pub fn simplify(c: SimplifyCmd) -> Res {
    use rxpipe::passes::{self, PassContext, Stage, WorkingMesh};
    let ext = c.out.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("obj") && !ext.eq_ignore_ascii_case("ply") {
        return Err(format!("{}: can write .obj or .ply", c.out.display()).into());
    }
    // the stage checks its arguments as `--pass` does
    let Stage::Mesh(stage) = passes::parse(&format!("simplify:eps={}:target={}", c.eps, c.target))?
    else {
        unreachable!("simplify is a mesh stage")
    };
    let a = &c.opts;
    crate::check_output(&c.out, &[c.input.as_path()], a.force)?;
    let pb = spinner(format!("loading and re-indexing {}", c.input.display()));
    let (gpu, opts) = reindexing(a)?;
    let mesh = rxpipe::io::load_mesh_or_spec(&c.input)?;
    let r = reindex::reindex(&mesh, &opts, gpu.as_ref())?;
    let (v0, f0) = (r.mesh.vertex_count(), r.mesh.triangle_count());
    pb.set_message(format!("simplifying {f0} triangles"));
    let t = std::time::Instant::now();
    let mut wm = WorkingMesh::new(r.mesh);
    let changed = stage.run(
        &mut wm,
        &mut PassContext::new(rxpipe::backend::BackendKind::Cpu, None, 0),
    )?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let out = wm.into_host()?;
    pb.set_message(format!("writing {}", c.out.display()));
    rxpipe::io::save_mesh(&out, &c.out)?;
    pb.finish_and_clear();
    if a.json {
        let report = serde_json::json!({
            "input": c.input,
            "output": c.out,
            "eps": c.eps,
            "target": c.target,
            "vertices_in": v0,
            "triangles_in": f0,
            "vertices": out.vertex_count(),
            "triangles": out.triangle_count(),
            "ms": ms,
            "report": changed,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "simplify: {changed}; {ms:.0} ms\nwrote {} ({} vertices, {} triangles)",
            c.out.display(),
            out.vertex_count(),
            out.triangle_count()
        );
    }
    Ok(())
}

pub fn reindex(c: ReindexCmd) -> Res {
    tool(&[c.input], &c.out, None, &c.opts)
}

pub fn merge(c: MergeCmd) -> Res {
    tool(&c.inputs, &c.out, None, &c.opts)
}

pub fn subset(c: SubsetCmd) -> Res {
    let sel = match (c.faces, c.part) {
        (Some(f), _) => Select::Faces(f),
        (None, Some(k)) => Select::Part(k),
        (None, None) => return Err("subset needs --faces RANGES or --part K".into()),
    };
    tool(&[c.input], &c.out, Some(sel), &c.opts)
}

/// Which faces `subset` keeps.
enum Select {
    Faces(String),
    Part(usize),
}

/// A face mask from ranges like `0..10,20..30` (or single faces `7`).
fn face_ranges(spec: &str, faces: usize) -> Result<Vec<bool>, String> {
    let mut keep = vec![false; faces];
    for r in spec.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let bad = || format!("bad face range '{r}' (use A..B or A)");
        let (a, b) = match r.split_once("..") {
            Some((a, b)) => (
                a.parse::<usize>().map_err(|_| bad())?,
                b.parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let a = r.parse::<usize>().map_err(|_| bad())?;
                (a, a + 1)
            }
        };
        if a > b {
            return Err(format!(
                "face range '{r}' is reversed: the first face comes first ({b}..{a})"
            ));
        }
        if b > faces {
            return Err(format!(
                "face range '{r}' is outside the mesh's {faces} triangles"
            ));
        }
        keep[a..b].iter_mut().for_each(|k| *k = true);
    }
    Ok(keep)
}

/// The re-indexing the options ask for, and the GPU for it when the method may use one. A GPU
/// method asked for by name without a usable GPU is an error, as `--backend cuda` is; `auto`
/// takes the CPU then, and its report says so.
fn reindexing(
    a: &ToolArgs,
) -> Result<(Option<std::sync::Arc<rxpipe::gpu::Gpu>>, ReindexOptions), String> {
    let gpu = match a.method {
        Method::Auto => rxpipe::gpu::Gpu::new().ok(),
        Method::CudaSort | Method::CudaHash => Some(rxpipe::gpu::Gpu::new().map_err(|e| {
            format!(
                "--method {}: {e} (or re-index on the CPU: --method parallel)",
                a.method.name()
            )
        })?),
        _ => None,
    };
    let opts = ReindexOptions {
        method: a.method,
        weld: a.weld,
    };
    Ok((gpu, opts))
}

/// Loads, re-indexes (on the GPU when there is one) and writes.
fn tool(inputs: &[PathBuf], out: &PathBuf, select: Option<Select>, a: &ToolArgs) -> Res {
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("obj") && !ext.eq_ignore_ascii_case("ply") {
        return Err(format!("{}: can write .obj or .ply", out.display()).into());
    }
    // never overwrite an input, nor an existing file unless asked
    let ins: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    crate::check_output(out, &ins, a.force)?;
    let (gpu, opts) = reindexing(a)?;
    let pb = spinner(format!("loading and re-indexing {}", inputs[0].display()));
    let r = match select {
        None if inputs.len() == 1 => reindex::reindex(
            &rxpipe::io::load_mesh_or_spec(&inputs[0])?,
            &opts,
            gpu.as_ref(),
        )?,
        None => {
            let meshes = inputs
                .iter()
                .map(rxpipe::io::load_mesh_or_spec)
                .collect::<Result<Vec<_>, _>>()?;
            reindex::merge(&meshes, &opts, gpu.as_ref())?
        }
        Some(sel) => {
            let (parts, _) = rxpipe::io::load_meshes(&inputs[0])?;
            let mut all = rxpipe::Mesh {
                name: inputs[0].display().to_string(),
                ..Default::default()
            };
            let mut part_of = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                all.append(p);
                part_of.extend(std::iter::repeat_n(k, p.triangle_count()));
            }
            let keep = match sel {
                Select::Faces(ref spec) => face_ranges(spec, all.triangle_count())?,
                Select::Part(k) if k < parts.len() => part_of.iter().map(|&p| p == k).collect(),
                Select::Part(k) => {
                    return Err(format!(
                        "{} has {} part(s), numbered from 0; there is no part {k}",
                        inputs[0].display(),
                        parts.len()
                    )
                    .into())
                }
            };
            if let Select::Part(k) = sel {
                all.base_color = parts[k].base_color;
            }
            reindex::subset(&all, &keep, &opts, gpu.as_ref())?
        }
    };
    pb.set_message(format!("writing {}", out.display()));
    rxpipe::io::save_mesh(&r.mesh, out)?;
    pb.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r.report)?);
    } else {
        println!(
            "{}\nwrote {} ({} vertices, {} triangles)",
            r.report,
            out.display(),
            r.mesh.vertex_count(),
            r.mesh.triangle_count()
        );
    }
    Ok(())
}
