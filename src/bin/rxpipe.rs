//! The rxpipe command line: view, render, asr, bench, info.

use clap::{Parser, Subcommand};
use rxpipe::geometry::{self, Transform, Uniforms, VertexIn};
use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, ShadingMode, Strategy, VertexOrder};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rxpipe",
    version,
    about = "A compute-mode rendering pipeline with batch vertex reuse (Kenzel et al. 2018)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Open a scene (.toml, glTF or any mesh file) in a window [default: scenes/default.toml]
    View {
        scene: Option<PathBuf>,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Render a scene to a PNG file
    Render {
        scene: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1280)]
        width: u32,
        #[arg(long, default_value_t = 720)]
        height: u32,
        #[command(flatten)]
        pipeline: PipelineArgs,
        /// back, front, none
        #[arg(long, default_value = "back")]
        cull: String,
        #[arg(long)]
        json: bool,
    },
    /// Average shading rate of each reuse strategy on a mesh
    Asr {
        /// a mesh file, or a generator: icosphere:LEVEL, torus:N, grid:N, rings:TRIANGLES
        mesh: PathBuf,
        /// a strategy name or "all"
        #[arg(long, default_value = "all")]
        strategy: String,
        /// input, forsyth, random
        #[arg(long, default_value = "forsyth")]
        order: String,
        /// where the geometry stage runs: auto, cpu, cuda
        #[arg(long, default_value = "auto")]
        backend: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove duplicate and unused vertices (Wald), writing OBJ or binary PLY
    Reindex {
        /// a mesh file (OBJ, PLY, STL, glTF, optionally gzipped)
        input: PathBuf,
        /// where to write the result: .obj or .ply (binary)
        out: PathBuf,
        #[command(flatten)]
        opts: ReindexArgs,
    },
    /// Merge meshes into one, vertices they share stored once
    Merge {
        /// the mesh files to merge
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// where to write the result: .obj or .ply (binary)
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        opts: ReindexArgs,
    },
    /// Extract some faces as a compact mesh: index ranges, or one part (glTF primitive/material)
    Subset {
        /// a mesh file
        input: PathBuf,
        /// where to write the result: .obj or .ply (binary)
        out: PathBuf,
        /// triangle ranges, e.g. 0..1000,5000..6000
        #[arg(long, conflicts_with = "part")]
        faces: Option<String>,
        /// the K-th part of the file (glTF: primitive K of the default scene)
        #[arg(long)]
        part: Option<usize>,
        #[command(flatten)]
        opts: ReindexArgs,
    },
    /// The paper's tables measured on the GPU
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
    /// Version, backend, CUDA device and NVRTC
    Info {
        #[arg(long)]
        json: bool,
    },
}

/// Options of the mesh tools.
#[derive(clap::Args)]
struct ReindexArgs {
    /// auto, serial, parallel, cuda-sort, cuda-hash
    #[arg(long, default_value = "auto")]
    method: String,
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

#[derive(Subcommand)]
enum BenchWhat {
    /// Re-indexing (Wald's Table 1): CPU serial, CPU parallel, meshopt, GPU sort and hash
    Reindex {
        /// comma-separated grid sizes N (5 N² vertices each)
        #[arg(long, default_value = "8,64,1024,4096,8192")]
        sizes: String,
        /// skip the serial CPU method where the last size predicts more than this many seconds
        #[arg(long, default_value_t = 60.0)]
        serial_limit: f64,
        /// GPU columns only
        #[arg(long)]
        no_cpu: bool,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Geometry stage: ms per strategy and shader load (Table 2), shading rates (Table 1), roofline
    Geometry {
        #[command(flatten)]
        common: BenchArgs,
    },
    /// Whole frames on the GPU: per-stage times of geometry, setup, binning, raster and shading
    Frame {
        /// comma-separated strategies
        #[arg(long, default_value = "naive,warp,hash,phash")]
        strategies: String,
        /// WIDTHxHEIGHT
        #[arg(long, default_value = "1920x1080")]
        size: String,
        #[command(flatten)]
        common: BenchArgs,
    },
}

/// The pipeline options of `view` and `render`.
#[derive(clap::Args)]
struct PipelineArgs {
    /// naive, warp, sort, hash, phash, multi
    #[arg(long, default_value = "hash")]
    strategy: String,
    /// input, forsyth, random
    #[arg(long, default_value = "input")]
    order: String,
    /// lit, normals, depth, rate
    #[arg(long, default_value = "lit")]
    shading: String,
    /// auto, cpu, cuda
    #[arg(long, default_value = "auto")]
    backend: String,
}

impl PipelineArgs {
    /// The renderer these options ask for and a pipeline on it.
    fn build(&self, cull: CullMode) -> Result<(Renderer, Pipeline), Box<dyn std::error::Error>> {
        let renderer = Renderer::new(backend(&self.backend)?)?;
        let pipeline = Pipeline::builder()
            .strategy(strategy(&self.strategy)?)
            .order(order(&self.order)?)
            .shading(shading(&self.shading)?)
            .cull(cull)
            .build(&renderer)?;
        Ok((renderer, pipeline))
    }
}

/// Options of the benchmarks that run on meshes.
#[derive(clap::Args)]
struct BenchArgs {
    /// comma-separated: bunny, ogre, icosphere:LEVEL, bunny-grid:N, or any generator spec
    #[arg(long, default_value = "bunny,ogre,icosphere:9,bunny-grid:104")]
    meshes: String,
    #[command(flatten)]
    report: ReportArgs,
}

/// Options every benchmark takes: runs and the report.
#[derive(clap::Args)]
struct ReportArgs {
    #[arg(long, default_value_t = 20)]
    runs: usize,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// print JSON instead of markdown
    #[arg(long)]
    json: bool,
    /// also write the markdown report to this file
    #[arg(long)]
    markdown: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // no command: `view` with its defaults
    let command = cli.command.unwrap_or_else(|| {
        Cli::parse_from(["rxpipe", "view"])
            .command
            .expect("`view` parses")
    });
    let result = match command {
        Command::View { scene, pipeline } => view(scene, &pipeline),
        Command::Render {
            scene,
            out,
            width,
            height,
            pipeline,
            cull,
            json,
        } => render(&scene, &out, (width, height), &pipeline, &cull, json),
        Command::Asr {
            mesh,
            strategy,
            order,
            backend,
            json,
        } => asr(&mesh, &strategy, &order, &backend, json),
        Command::Reindex { input, out, opts } => mesh_tool(&[input], &out, None, &opts),
        Command::Merge { inputs, out, opts } => mesh_tool(&inputs, &out, None, &opts),
        Command::Subset {
            input,
            out,
            faces,
            part,
            opts,
        } => match (faces, part) {
            (Some(f), _) => mesh_tool(&[input], &out, Some(Select::Faces(f)), &opts),
            (None, Some(k)) => mesh_tool(&[input], &out, Some(Select::Part(k)), &opts),
            (None, None) => Err("subset needs --faces RANGES or --part K".into()),
        },
        Command::Bench { what } => bench(what),
        Command::Info { json } => info(json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rxpipe: {e}");
            ExitCode::FAILURE
        }
    }
}

type Res = Result<(), Box<dyn std::error::Error>>;

fn parse_or<T>(v: Option<T>, what: &str, s: &str, choices: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("unknown {what} '{s}' (choose from {choices})"))
}

fn strategy(s: &str) -> Result<Strategy, String> {
    parse_or(
        Strategy::parse(s),
        "strategy",
        s,
        &Strategy::NAMES.join(", "),
    )
}
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    s.split_once('x')
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
        .filter(|&(w, h): &(u32, u32)| w > 0 && h > 0)
        .ok_or_else(|| format!("bad size '{s}' (expected WIDTHxHEIGHT, e.g. 1920x1080)"))
}
fn order(s: &str) -> Result<VertexOrder, String> {
    parse_or(VertexOrder::parse(s), "order", s, "input, forsyth, random")
}
fn shading(s: &str) -> Result<ShadingMode, String> {
    parse_or(
        ShadingMode::parse(s),
        "shading mode",
        s,
        &ShadingMode::NAMES.join(", "),
    )
}
fn backend(s: &str) -> Result<Backend, String> {
    parse_or(Backend::parse(s), "backend", s, "auto, cpu, cuda")
}

fn spinner(msg: String) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn default_scene() -> PathBuf {
    PathBuf::from("scenes/default.toml")
}

fn view(scene: Option<PathBuf>, args: &PipelineArgs) -> Res {
    let path = scene.unwrap_or_else(default_scene);
    let pb = spinner(format!("loading {}", path.display()));
    let scene = Scene::load(&path)?;
    pb.finish_and_clear();
    let (renderer, pipeline) = args.build(CullMode::Back)?;
    eprintln!("{}", renderer.notice);
    rxpipe::viewer::run(scene, pipeline)?;
    Ok(())
}

fn render(
    path: &PathBuf,
    out: &PathBuf,
    size: (u32, u32),
    args: &PipelineArgs,
    cull: &str,
    json: bool,
) -> Res {
    let cull = match cull {
        "back" => CullMode::Back,
        "front" => CullMode::Front,
        "none" => CullMode::None,
        other => return Err(format!("unknown cull mode '{other}' (back, front, none)").into()),
    };
    let pb = spinner(format!("loading {}", path.display()));
    let scene = Scene::load(path)?;
    pb.set_message(format!("rendering {} triangles", scene.triangle_count()));
    let (renderer, mut pipeline) = args.build(cull)?;
    let frame = pipeline.render(&scene, &scene.camera, size)?;
    pb.finish_and_clear();
    frame.save_png(out)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&frame.stats)?);
    } else {
        eprintln!("{}", renderer.notice);
        println!("{}: {}", out.display(), frame.stats);
    }
    for n in &frame.notes {
        eprintln!("note: {n}");
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct AsrRow {
    strategy: String,
    invocations: u64,
    triangles: u64,
    asr: f64,
    ideal: f64,
}

fn asr(path: &PathBuf, s: &str, o: &str, b: &str, json: bool) -> Res {
    let strategies: Vec<Strategy> = if s == "all" {
        Strategy::all().to_vec()
    } else {
        vec![strategy(s)?]
    };
    let order = order(o)?;
    let pb = spinner(format!("loading {}", path.display()));
    let mut mesh = match path.to_str().and_then(rxpipe::mesh::from_spec) {
        Some(m) => m,
        None => rxpipe::io::load_mesh(path)?,
    };
    pb.set_message(format!(
        "ordering {} triangles ({order})",
        mesh.triangle_count()
    ));
    order.arrange(&mut mesh);
    let indices = &mesh.indices;
    pb.finish_and_clear();
    let vertices = VertexIn::from_mesh(&mesh);
    let renderer = Renderer::new(backend(b)?)?;
    eprintln!("{}", renderer.notice);
    let cuda = match renderer.gpu() {
        Some(gpu) => Some(rxpipe::geometry::cuda::CudaGeometry::new(
            gpu.clone(),
            rxpipe::geometry::cuda::CudaShader::transform(),
            true,
        )?),
        None => None,
    };
    let bar = indicatif::ProgressBar::new(strategies.len() as u64);
    let mut rows = Vec::new();
    for st in strategies {
        bar.set_message(st.to_string());
        let u = Uniforms::default();
        let stats = match &cuda {
            Some(c) => c.run(st, &vertices, indices, None, &u)?.stats,
            None => geometry::cpu::run(st, &vertices, indices, None, &Transform, &u)?.stats,
        };
        rows.push(AsrRow {
            strategy: st.to_string(),
            invocations: stats.invocations,
            triangles: stats.triangles,
            asr: stats.asr(),
            ideal: stats.ideal_asr(),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "mesh": path.display().to_string(),
                "order": order.to_string(),
                "vertices": mesh.vertex_count(),
                "rows": rows,
            }))?
        );
    } else {
        println!(
            "{} ({} vertices, {} triangles, {} order)",
            path.display(),
            mesh.vertex_count(),
            mesh.triangle_count(),
            order
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
        if a > b || b > faces {
            return Err(format!(
                "face range '{r}' is outside the mesh's {faces} triangles"
            ));
        }
        keep[a..b].iter_mut().for_each(|k| *k = true);
    }
    Ok(keep)
}

/// reindex, merge and subset: load, re-index (on the GPU when there is one), write.
fn mesh_tool(inputs: &[PathBuf], out: &PathBuf, select: Option<Select>, a: &ReindexArgs) -> Res {
    use rxpipe::reindex::{self, Method, ReindexOptions};
    let method = Method::parse(&a.method).ok_or_else(|| {
        format!(
            "unknown method '{}' (choose from auto, serial, parallel, cuda-sort, cuda-hash)",
            a.method
        )
    })?;
    // never overwrite an input, nor an existing file unless asked
    for i in inputs {
        if std::fs::canonicalize(i).ok() == std::fs::canonicalize(out).ok() && out.exists() {
            return Err(format!("{} is an input; choose another output", out.display()).into());
        }
    }
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("obj") && !ext.eq_ignore_ascii_case("ply") {
        return Err(format!("{}: can write .obj or .ply", out.display()).into());
    }
    if out.exists() && !a.force {
        return Err(format!("{} exists (use --force to overwrite it)", out.display()).into());
    }
    let gpu = match method {
        Method::Auto | Method::CudaSort | Method::CudaHash => rxpipe::gpu::Gpu::new().ok(),
        _ => None,
    };
    let opts = ReindexOptions {
        method,
        weld: a.weld,
    };
    let pb = spinner(format!("loading and re-indexing {}", inputs[0].display()));
    let r = match select {
        None if inputs.len() == 1 => {
            reindex::reindex(&rxpipe::io::load_mesh(&inputs[0])?, &opts, gpu.as_ref())?
        }
        None => {
            let meshes = inputs
                .iter()
                .map(rxpipe::io::load_mesh)
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

fn bench(what: BenchWhat) -> Res {
    match what {
        BenchWhat::Reindex {
            sizes,
            serial_limit,
            no_cpu,
            report: c,
        } => {
            let sizes = sizes
                .split(',')
                .map(|s| s.trim().parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("bad --sizes '{sizes}' (comma-separated integers)"))?;
            if let Some(&n) = sizes
                .iter()
                .find(|&&n| n == 0 || 5 * (n as u64).pow(2) > u32::MAX as u64)
            {
                return Err(format!("grid size {n} is out of range (1 to 29308)").into());
            }
            let gpu = match rxpipe::gpu::Gpu::new() {
                Ok(g) => Some(g),
                Err(e) => {
                    eprintln!("notice: {e}; measuring the CPU columns only");
                    None
                }
            };
            let pb = spinner("starting".into());
            let report = rxpipe::bench::reindex(
                gpu,
                &sizes,
                c.warmup,
                c.runs.max(1),
                !no_cpu,
                serial_limit,
                &|m| pb.set_message(m.to_string()),
            )?;
            pb.finish_and_clear();
            report_out(&report, report.markdown(), c.markdown, c.json)?;
        }
        BenchWhat::Geometry { common: c } => {
            let gpu = rxpipe::gpu::Gpu::new()?;
            let names: Vec<&str> = c.meshes.split(',').map(str::trim).collect();
            let pb = spinner("starting".into());
            let c = c.report;
            let report = rxpipe::bench::geometry(gpu, &names, c.warmup, c.runs.max(1), &|m| {
                pb.set_message(m.to_string())
            })?;
            pb.finish_and_clear();
            report_out(&report, report.markdown(), c.markdown, c.json)?;
        }
        BenchWhat::Frame {
            strategies,
            size,
            common: c,
        } => {
            let size = parse_size(&size)?;
            let strategies = strategies
                .split(',')
                .map(|s| strategy(s.trim()))
                .collect::<Result<Vec<_>, _>>()?;
            let gpu = rxpipe::gpu::Gpu::new()?;
            let names: Vec<&str> = c.meshes.split(',').map(str::trim).collect();
            let pb = spinner("starting".into());
            let report = rxpipe::bench::frame(
                gpu,
                &names,
                &strategies,
                size,
                c.report.warmup,
                c.report.runs.max(1),
                &|m| pb.set_message(m.to_string()),
            )?;
            pb.finish_and_clear();
            report_out(&report, report.markdown(), c.report.markdown, c.report.json)?;
        }
    }
    Ok(())
}

/// Prints a benchmark report as markdown or JSON, and writes the markdown to a file when asked.
fn report_out(
    report: &impl serde::Serialize,
    md: String,
    markdown: Option<PathBuf>,
    json: bool,
) -> Res {
    if let Some(p) = markdown {
        std::fs::write(&p, &md)?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{md}");
    }
    Ok(())
}

fn info(json: bool) -> Res {
    let cuda = rxpipe::gpu::probe();
    let renderer = Renderer::new(Backend::Auto)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "backend": renderer.notice,
                "cuda": cuda,
                "kernel_cache": rxpipe::gpu::cache::default_dir(),
                "threads": rayon::current_num_threads(),
            }))?
        );
    } else {
        println!("rxpipe {}", env!("CARGO_PKG_VERSION"));
        println!("{}", renderer.notice);
        println!("CPU threads: {}", rayon::current_num_threads());
        print!("{cuda}");
        match rxpipe::gpu::cache::default_dir() {
            Some(d) => println!("Kernel cache:        {}", d.display()),
            None => println!("Kernel cache:        none (set RXPIPE_CACHE_DIR or HOME)"),
        }
    }
    Ok(())
}
