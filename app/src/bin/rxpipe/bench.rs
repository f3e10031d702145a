//! `rxpipe bench`: the paper-style tables measured on this machine.

use crate::{spinner, Res};
use rxpipe::passes::frustum::Placement;
use rxpipe::Strategy;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum What {
    /// Re-indexing (Wald's Table 1): CPU serial, CPU parallel, meshopt, GPU sort and hash
    Reindex {
        /// comma-separated grid sizes N (5 N² vertices each) [default: 8,64,1024,4096,8192;
        /// without a GPU 8,64,1024]
        #[arg(long, value_delimiter = ',',
              value_parser = clap::value_parser!(u32).range(1..=29308))]
        sizes: Option<Vec<u32>>,
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
    /// (needs an NVIDIA GPU)
    Geometry {
        #[command(flatten)]
        common: MeshArgs,
    },
    /// The frustum stage's cost on the host and on the GPU for a range of object counts (needs an
    /// NVIDIA GPU)
    Frustum {
        /// comma-separated object counts
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1,100,1000,10000,20000,100000,1000000"
        )]
        objects: Vec<usize>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Whole frames: per-stage times of frame stages, geometry, setup, binning, raster (on the
    /// GPU, which it needs, or with --backend cpu on the CPU)
    Frame {
        /// the backend measured: cuda (CUDA-event device times) or cpu (host wall times)
        #[arg(long, value_enum, default_value = "cuda")]
        backend: FrameBackend,
        #[arg(
            long,
            value_parser = rxpipe_app::named::<Strategy>(),
            value_delimiter = ',',
            default_value = "naive,warp,hash,phash"
        )]
        strategies: Vec<Strategy>,
        /// WIDTHxHEIGHT
        #[arg(long, default_value = "1920x1080", value_parser = parse_size)]
        size: (u32, u32),
        /// where the frustum stage runs, or off (its cost is the difference)
        #[arg(long, value_enum, default_value = "auto")]
        frustum: FrustumArg,
        /// also run the patch strategy with per-patch culling (a second row)
        #[arg(long)]
        patch_cull: bool,
        /// shading modes, a row each (normals and depth leave out the materials: what lit costs
        /// more is shading)
        #[arg(long, value_parser = rxpipe_app::named::<rxpipe::ShadingMode>(), value_delimiter = ',', default_value = "lit")]
        shading: Vec<rxpipe::ShadingMode>,
        /// draw each frame as N parts of its triangles composited by depth (sort-last rendering
        /// on one device, the parts in turn): rows then also give the slowest part and the
        /// composite's times, on the host and on the GPU
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        parts: u32,
        /// with --parts: re-balance the parts by their measured times from frame to frame
        /// (through the warm-up and the runs), instead of even shares of the triangles
        #[arg(long, requires = "parts")]
        balance: bool,
        /// numbers of GPUs, a set of rows each (comma-separated, e.g. 1,2,4,8): with more than
        /// one, each frame is spread over them (a share each, composited through NCCL), and
        /// the rows give the scaling efficiency against one GPU
        #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=64))]
        gpus: Vec<u32>,
        #[command(flatten)]
        common: MeshArgs,
    },
    /// RXMesh (Table 2): the eight queries against Parallel Directed Edges on the default,
    /// sorted and shuffled orders; normals through the FV and VF queries against the hardwired
    /// kernel; patching time and bytes per face (needs an NVIDIA GPU)
    Rxmesh {
        /// comma-separated: bunny, ogre, icosphere:LEVEL, bunny-grid:N, or any generator spec
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "bunny,icosphere:9,bunny-grid:104"
        )]
        meshes: Vec<String>,
        /// the most faces a patch holds
        #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=65535))]
        patch_faces: u32,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// The least and greatest distance between the shared mesh pairs (gDist): CPU search and GPU front
    /// expansion (the GPU column needs an NVIDIA GPU)
    Distance {
        /// comma-separated: NAME of ../shared/meshes/distance/NAME_{A,B}.obj.gz, or A+B (two
        /// mesh files or generator specs) [default: every shared pair; without a GPU all but
        /// sphere_100000, minutes of CPU time]
        #[arg(long, value_delimiter = ',')]
        pairs: Option<Vec<String>>,
        /// also both searches within this relative error (0: not measured)
        #[arg(
            long,
            value_name = "E",
            default_value_t = 0.1,
            allow_negative_numbers = true
        )]
        rel_error: f64,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Geometry processing on the reuse strategies: one level of Loop subdivision and the outer
    /// envelope per strategy (CPU, and the GPU where there is one), beside the subdivision
    /// stage's own path and the envelope's program run once a vertex
    Processing {
        /// comma-separated: bunny, ogre, a file name of ../shared/meshes, or a generator spec;
        /// NAME@N for it subdivided N times first (bunny@2: 1.1 M triangles)
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "bunny,icosphere:6,bunny@2"
        )]
        meshes: Vec<String>,
        /// comma-separated: which tasks to measure (subdivide, envelope)
        #[arg(long, value_delimiter = ',', default_value = "subdivide,envelope",
              value_parser = ["subdivide", "envelope"])]
        tasks: Vec<String>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Simplification within an envelope: triangles, time and the measured distance both ways,
    /// beside meshoptimizer's simplifier at the same triangle count (CPU only)
    Simplify {
        /// comma-separated: bunny, ogre, a file name of ../shared/meshes (fandisk.obj), or a
        /// generator spec
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "bunny,fandisk.obj,rocker-arm.obj"
        )]
        meshes: Vec<String>,
        /// comma-separated envelope widths, fractions of each mesh's bounding-box diagonal
        #[arg(long, value_delimiter = ',', default_value = "0.001,0.005",
              value_parser = parse_fraction)]
        eps: Vec<f64>,
        /// candidate collapses tested at once (1: one at a time; the result is the same)
        /// [default: twice the threads]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
        width: Option<u64>,
        /// runs per mesh and width (each takes seconds)
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        runs: u64,
        /// print JSON instead of markdown
        #[arg(long)]
        json: bool,
        /// also write the markdown report to this file (never over an existing one)
        #[arg(long)]
        markdown: Option<PathBuf>,
    },
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|&x| x > 0.0 && x <= 1.0)
        .ok_or_else(|| format!("bad width '{s}' (expected a fraction above 0 and at most 1)"))
}

/// The backend `bench frame` measures.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FrameBackend {
    Cuda,
    Cpu,
}

/// Where `bench frame` runs the frustum stage.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FrustumArg {
    Auto,
    Cpu,
    Cuda,
    Off,
}

impl FrustumArg {
    fn placement(self) -> Option<Placement> {
        match self {
            FrustumArg::Auto => Some(Placement::Auto),
            FrustumArg::Cpu => Some(Placement::Cpu),
            FrustumArg::Cuda => Some(Placement::Cuda),
            FrustumArg::Off => None,
        }
    }
}

/// Options of the benchmarks that run on meshes.
#[derive(clap::Args)]
pub struct MeshArgs {
    /// comma-separated: bunny, ogre, icosphere:LEVEL, bunny-grid:N, or any generator spec; `bench
    /// frame` also takes scene files (.gltf, .glb, .toml), drawn from their own cameras, and
    /// instances of one mesh on a grid: bunny-instances:N (bunny-grid:N's bunnies) or MESH*N
    /// (rings:1000000*1000: a thousand instances of a million triangles)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bunny,ogre,icosphere:9,bunny-grid:104"
    )]
    meshes: Vec<String>,
    #[command(flatten)]
    report: ReportArgs,
}

/// Options every benchmark takes: runs and the report.
#[derive(clap::Args)]
pub struct ReportArgs {
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// print JSON instead of markdown
    #[arg(long)]
    json: bool,
    /// also write the markdown report to this file (never over an existing one)
    #[arg(long)]
    markdown: Option<PathBuf>,
}

/// The names of `--meshes` (or `--pairs`) with generated stand-ins for the shared meshes where
/// ../shared/meshes is absent ([`rxpipe_app::bench::stand_ins`], which says which).
fn stand_ins(names: &[String]) -> Vec<String> {
    let names: Vec<&str> = names.iter().map(|s| s.trim()).collect();
    let (names, notice) = rxpipe_app::bench::stand_ins(&names);
    if let Some(n) = notice {
        eprintln!("notice: {n}");
    }
    names
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    s.split_once('x')
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
        .filter(|&(w, h): &(u32, u32)| w > 0 && h > 0)
        .ok_or_else(|| format!("bad size '{s}' (expected WIDTHxHEIGHT, e.g. 1920x1080)"))
}

pub fn run(what: What) -> Res {
    match what {
        What::Reindex {
            sizes,
            serial_limit,
            no_cpu,
            report,
        } => reindex(sizes, serial_limit, no_cpu, &report),
        What::Geometry { common: c } => {
            let gpu = need_gpu("geometry")?;
            let names = stand_ins(&c.meshes);
            let r = &c.report;
            let report = with_progress(|p| {
                rxpipe_app::bench::geometry::run(gpu, &strs(&names), r.warmup, r.runs as usize, p)
            })?;
            out(&report, report.markdown(), r)
        }
        What::Frustum { objects, report: r } => {
            let gpu = need_gpu("frustum")?;
            let report = with_progress(|p| {
                rxpipe_app::bench::frustum::run(gpu, &objects, r.warmup, r.runs as usize, p)
            })?;
            out(&report, report.markdown(), &r)
        }
        What::Frame {
            backend,
            strategies,
            size,
            frustum,
            patch_cull,
            shading,
            parts,
            balance,
            gpus,
            common: c,
        } => {
            let spread = gpus.iter().any(|&n| n > 1);
            if spread && parts > 1 {
                return Err("--parts draws a frame in parts on one GPU; --gpus above 1 spreads it over GPUs, a part each: ask for one of them".into());
            }
            // (every renderer made first, so that a missing GPU is said before any mesh loads)
            let renderers = match backend {
                FrameBackend::Cuda => {
                    let first = need_gpu("frame")
                        .map_err(|e| format!("{e} (or measure the CPU backend: --backend cpu)"))?;
                    gpus.iter()
                        .map(|&n| match n {
                            1 => Ok(rxpipe::Renderer::from_gpu(first.clone())),
                            n => rxpipe::Renderer::on_devices(
                                rxpipe::Backend::Cuda,
                                &rxpipe::Devices::Count(n as usize),
                            )
                            .map_err(|e| format!("bench frame --gpus: {e}")),
                        })
                        .collect::<Result<Vec<_>, String>>()?
                }
                FrameBackend::Cpu if spread => {
                    return Err(
                        "--gpus spreads frames over GPUs: it measures the cuda backend".into(),
                    )
                }
                FrameBackend::Cpu => {
                    vec![rxpipe::Renderer::new(rxpipe::Backend::Cpu).map_err(|e| e.to_string())?]
                }
            };
            let names = stand_ins(&c.meshes);
            let r = &c.report;
            let report = with_progress(|p| {
                rxpipe_app::bench::frame::run(
                    &renderers,
                    &strs(&names),
                    &strategies,
                    size,
                    frustum.placement(),
                    patch_cull,
                    &shading,
                    (parts as usize, balance),
                    r.warmup,
                    r.runs as usize,
                    p,
                )
            })?;
            out(&report, report.markdown(), r)
        }
        What::Rxmesh {
            meshes,
            patch_faces,
            report: r,
        } => {
            let gpu = need_gpu("rxmesh")?;
            let names = stand_ins(&meshes);
            let report = with_progress(|p| {
                let (warmup, runs) = (r.warmup, r.runs as usize);
                rxpipe_app::bench::rxmesh::run(gpu, &strs(&names), patch_faces, warmup, runs, p)
            })?;
            out(&report, report.markdown(), &r)
        }
        What::Distance {
            pairs,
            rel_error,
            report,
        } => distance(pairs, rel_error, &report),
        What::Processing {
            meshes,
            tasks,
            report,
        } => processing(&meshes, &tasks, &report),
        What::Simplify {
            meshes,
            eps,
            width,
            runs,
            json,
            markdown,
        } => {
            let names = stand_ins(&meshes);
            let width = width.map(|w| w as usize);
            let report = with_progress(|p| {
                rxpipe_app::bench::simplify::run(&strs(&names), &eps, width, runs as usize, p)
            })?;
            let r = ReportArgs {
                runs,
                warmup: 0,
                json,
                markdown,
            };
            out(&report, report.markdown(), &r)
        }
    }
}

/// `bench reindex`: without a GPU, the CPU columns on the small grids only (unless sizes are
/// given).
fn reindex(sizes: Option<Vec<u32>>, serial_limit: f64, no_cpu: bool, r: &ReportArgs) -> Res {
    const DEFAULT: [u32; 5] = [8, 64, 1024, 4096, 8192];
    let gpu = gpu_if_any("measuring the CPU columns only");
    let sizes = match sizes {
        Some(s) => s,
        // without a GPU the large grids are the CPU's alone: minutes each, and gigabytes
        None if gpu.is_none() => {
            let (keep, skip): (Vec<u32>, Vec<u32>) = DEFAULT.iter().partition(|&&n| n <= 1024);
            let first = skip[0] as u64;
            eprintln!(
                "notice: without a GPU, sizes {} only; skipped {} (the {first}x{first} grid alone takes {:.1} GB, and the CPU methods need minutes for it; pass --sizes to measure them)",
                list(&keep),
                list(&skip),
                (84 * first * first) as f64 / 1e9
            );
            keep
        }
        None => DEFAULT.to_vec(),
    };
    let report = with_progress(|p| {
        let (warmup, runs) = (r.warmup, r.runs as usize);
        rxpipe_app::bench::reindex::run(gpu, &sizes, warmup, runs, !no_cpu, serial_limit, p)
    })?;
    out(&report, report.markdown(), r)
}

/// `bench distance`: without a GPU, every shared pair but the largest (unless pairs are given).
fn distance(pairs: Option<Vec<String>>, rel_error: f64, r: &ReportArgs) -> Res {
    rxpipe::distance::rel_keep(rel_error)?;
    let gpu = gpu_if_any("measuring the CPU column only");
    let shared = rxpipe_app::bench::distance::PAIRS;
    let names: Vec<String> = match pairs {
        Some(p) => p,
        // the nested spheres of 200 K triangles take minutes on a few cores (265 M triangle
        // pairs)
        None if gpu.is_none() => {
            eprintln!(
                "notice: without a GPU, sphere_100000 is skipped (minutes on the CPU; \
                 pass --pairs sphere_100000 to measure it)"
            );
            shared
                .into_iter()
                .filter(|&p| p != "sphere_100000")
                .map(String::from)
                .collect()
        }
        None => shared.iter().map(|s| s.to_string()).collect(),
    };
    let names = stand_ins(&names);
    let report = with_progress(|p| {
        let (warmup, runs) = (r.warmup, r.runs as usize);
        rxpipe_app::bench::distance::run(gpu, &strs(&names), rel_error, warmup, runs, p)
    })?;
    out(&report, report.markdown(), r)
}

/// `bench processing`: the GPU rows where there is a GPU.
fn processing(meshes: &[String], tasks: &[String], r: &ReportArgs) -> Res {
    // (stand-ins for the shared meshes keep their @N)
    let names: Vec<String> = meshes
        .iter()
        .map(|m| match m.split_once('@') {
            Some((base, n)) => format!("{}@{n}", stand_ins(&[base.to_string()])[0]),
            None => stand_ins(std::slice::from_ref(m)).remove(0),
        })
        .collect();
    let gpu = gpu_if_any("measuring the CPU rows only");
    let tasks = rxpipe_app::bench::processing::Tasks {
        subdivide: tasks.iter().any(|t| t == "subdivide"),
        envelope: tasks.iter().any(|t| t == "envelope"),
    };
    let report = with_progress(|p| {
        let (warmup, runs) = (r.warmup, r.runs as usize);
        rxpipe_app::bench::processing::run(&strs(&names), tasks, runs, warmup, gpu.as_ref(), p)
    })?;
    out(&report, report.markdown(), r)
}

/// Runs a benchmark under a spinner that shows its progress messages.
fn with_progress<R, E>(f: impl FnOnce(&dyn Fn(&str)) -> Result<R, E>) -> Result<R, E> {
    let pb = spinner("starting".into());
    let r = f(&|m| pb.set_message(m.to_string()));
    pb.finish_and_clear();
    r
}

fn strs(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

/// The GPU where there is one; without, a notice saying why and what is measured instead.
fn gpu_if_any(instead: &str) -> Option<std::sync::Arc<rxpipe::gpu::Gpu>> {
    match rxpipe::gpu::Gpu::new() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("notice: {e}; {instead}");
            None
        }
    }
}

/// The GPU a benchmark measures, or an error saying that it needs one and why none can be used.
fn need_gpu(bench: &str) -> Result<std::sync::Arc<rxpipe::gpu::Gpu>, String> {
    rxpipe::gpu::Gpu::new().map_err(|e| {
        format!("`rxpipe bench {bench}` measures the CUDA backend and needs an NVIDIA GPU: {e}")
    })
}

/// Numbers as "8, 64 and 1024".
fn list(v: &[u32]) -> String {
    let s: Vec<String> = v.iter().map(u32::to_string).collect();
    match s.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => s.join(""),
    }
}

/// Prints a benchmark report as markdown or JSON, and writes the markdown to a file when asked.
fn out(report: &impl serde::Serialize, md: String, a: &ReportArgs) -> Res {
    if let Some(p) = &a.markdown {
        if p.exists() {
            return Err(format!("{} exists; choose another file", p.display()).into());
        }
        rxpipe::io::write_atomically(p, |w| {
            std::io::Write::write_all(w, md.as_bytes()).map_err(rxpipe::io::IoError::at(p))
        })?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{md}");
    }
    Ok(())
}
