//! The rxpipe command line: one module per command.

mod asr;
mod bench;
mod distance;
mod envelope;
mod info;
mod mesh_tools;
mod passes;
mod patch;
mod query;
mod render;
mod subdivide;
mod view;

use clap::{Parser, Subcommand};
use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, ShadingMode, Strategy, VertexOrder};
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
    /// Open a scene (.toml, glTF or any mesh file) in a window [default: the built-in scene]
    View(view::Args),
    /// Render a scene to a PNG or JPEG file
    Render(render::Args),
    /// Average shading rate of each reuse strategy on a mesh
    Asr(asr::Args),
    /// Remove duplicate and unused vertices (Wald), writing OBJ or binary PLY
    Reindex(mesh_tools::ReindexCmd),
    /// Merge meshes into one, vertices they share stored once
    Merge(mesh_tools::MergeCmd),
    /// Extract some faces as a compact mesh: index ranges, or one part (glTF primitive/material)
    Subset(mesh_tools::SubsetCmd),
    /// Simplify a mesh within an envelope: the result within ε of the input and the input within
    /// ε of the result (the `simplify` stage), written as OBJ or PLY
    Simplify(mesh_tools::SimplifyCmd),
    /// A mesh's inner and outer simplification envelopes (the `envelope` stage: every vertex
    /// moved along its normal by the largest safe offset, checked exactly), written as OBJ or PLY
    Envelope(envelope::Args),
    /// Loop subdivision of a mesh (the `subdivide` stage, optionally on a reuse strategy),
    /// written as OBJ or PLY
    Subdivide(subdivide::Args),
    /// List the pipeline's stages (mesh passes and frame stages) with their arguments
    Passes(passes::Args),
    /// Partition a mesh into RXMesh patches and report them (CPU or CUDA)
    Patch(patch::Args),
    /// Answer an RXMesh query (vv, ve, vf, ev, ef, fv, fe, ff) for every element of a mesh
    Query(query::Args),
    /// The least (or greatest: --max) distance between two meshes and where it is reached (gDist; CPU or CUDA)
    Distance(distance::Args),
    /// The papers' tables and whole frames measured (most need an NVIDIA GPU)
    Bench {
        #[command(subcommand)]
        what: bench::What,
    },
    /// Version, backend, CUDA device and NVRTC
    Info(info::Args),
    /// Panics on purpose: checks the panic hook (tests/cli.rs)
    #[command(hide = true)]
    Panic,
}

/// Exit status after an internal error (a panic): EX_SOFTWARE of sysexits.h, distinct from the 1
/// of an error the user can act on and from clap's 2 for bad arguments.
const EXIT_BUG: i32 = 70;

/// A panic is a bug in rxpipe, never the user's doing: say so in one paragraph, without a Rust
/// backtrace (unless RXPIPE_BACKTRACE=1), and exit with EXIT_BUG.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        eprintln!(
            "rxpipe: internal error{location}: {message}\n\
             This is a bug in rxpipe {}, not in your input. Please report it with the command \
             line and, if you can, the input file. RXPIPE_BACKTRACE=1 adds a backtrace.",
            env!("CARGO_PKG_VERSION")
        );
        if std::env::var_os("RXPIPE_BACKTRACE").is_some_and(|v| v == "1") {
            eprintln!("{}", std::backtrace::Backtrace::force_capture());
        }
        std::process::exit(EXIT_BUG);
    }));
}

/// The pipeline options of `view` and `render`.
#[derive(clap::Args)]
pub struct PipelineArgs {
    #[arg(long, value_parser = rxpipe_app::named::<Strategy>(), default_value = "hash")]
    strategy: Strategy,
    #[arg(long, value_parser = rxpipe_app::named::<VertexOrder>(), default_value = "input")]
    order: VertexOrder,
    #[arg(long, value_parser = rxpipe_app::named::<ShadingMode>(), default_value = "lit")]
    shading: ShadingMode,
    #[arg(long, value_parser = rxpipe_app::named::<Backend>(), default_value = "auto")]
    backend: Backend,
    /// the GPUs each frame is drawn on: N (the first N), `all`, or `list:0,1` (ordinals);
    /// with more than one, each draws a share of the frame and the shares are composited by
    /// depth through NCCL (`rxpipe info` says whether NCCL loads)
    #[arg(long, value_parser = gpus, default_value = "1", value_name = "N|all|list:I,J")]
    gpus: rxpipe::Devices,
    /// a stage NAME[:ARG[:ARG...]] (repeatable or comma-separated; `rxpipe passes` lists them);
    /// runs after the scene file's `passes`
    #[arg(long = "pass", value_name = "NAME[:ARGS]")]
    passes: Vec<String>,
}

impl PipelineArgs {
    /// Refuses a generator spec whose mesh and pipeline would not fit the host's memory, before
    /// the mesh is generated ([`rxpipe::footprint`]; a file's scene is checked once loaded, by
    /// [`Pipeline::prepare`]).
    fn check_spec(&self, path: &std::path::Path) -> Res {
        let Some(spec) = path
            .to_str()
            .filter(|s| !path.exists() && rxpipe::mesh::looks_like_spec(s))
        else {
            return Ok(());
        };
        let g = rxpipe::mesh::Generator::parse(spec)?;
        let (vertices, triangles) = g.counts();
        let counts = rxpipe::footprint::Counts {
            vertices,
            triangles,
            attribute_bytes: 32,
            placements: 1,
            copied: true,
            // (a generator's meshes have positions, and normals and uvs where they have more)
            stays_on_device: true,
        };
        let kind = match self.backend {
            Backend::Cpu => rxpipe::BackendKind::Cpu,
            _ => rxpipe::BackendKind::Cuda,
        };
        let f = rxpipe::footprint::of(&[counts], kind, self.strategy, true);
        rxpipe::limits::check_host(f.host.saturating_add(g.bytes()), || {
            format!(
                "{spec} ({triangles} triangles) through the {} strategy",
                self.strategy.name()
            )
        })?;
        Ok(())
    }

    /// The renderer these options ask for and a pipeline on it, with the scene's stages first.
    fn build(
        &self,
        scene: &Scene,
        cull: CullMode,
    ) -> Result<(Renderer, Pipeline), Box<dyn std::error::Error>> {
        let renderer = Renderer::on_devices(self.backend, &self.gpus)?;
        let builder = Pipeline::builder()
            .strategy(self.strategy)
            .order(self.order)
            .shading(self.shading)
            .cull(cull)
            .stages(&scene.passes)
            .map_err(|e| format!("{}: passes: {e}", scene.name))?;
        let pipeline = builder.stages(&self.passes)?.build(&renderer)?;
        Ok((renderer, pipeline))
    }
}

/// `--gpus`: a count, `all` or a list of ordinals.
fn gpus(s: &str) -> Result<rxpipe::Devices, String> {
    rxpipe::Devices::parse(s).ok_or_else(|| {
        format!("'{s}' is not a number of GPUs (1 or more), `all`, or `list:` and ordinals such as list:0,1")
    })
}

/// Where `view` and `render` look from, around the framed scene, when asked.
#[derive(clap::Args)]
pub struct Viewpoint {
    /// the axis that points up in the mesh's coordinates (scans are often stored Z-up):
    /// x, y, z, -x, -y or -z; the camera frames the scene from its front with this axis up
    #[arg(long, value_parser = axis, allow_hyphen_values = true, value_name = "AXIS")]
    up: Option<glam::Vec3>,
    /// degrees around the up axis from the front, positive to the right (the framing's view
    /// is 19.3)
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = degrees)]
    azimuth: Option<f32>,
    /// degrees above the plane across the up axis, -89 to 89 (the framing's view is 15.8)
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = elevation)]
    elevation: Option<f32>,
}

impl Viewpoint {
    /// Whether any of the options was given.
    fn asked(&self) -> bool {
        self.up.is_some() || self.azimuth.is_some() || self.elevation.is_some()
    }

    /// Frames `scene` from the viewpoint asked for, if one was ([`rxpipe::Camera::orbit`]
    /// around its bounding box); the scene's own camera otherwise stays.
    fn apply(&self, scene: &mut Scene) {
        if !self.asked() {
            return;
        }
        if let Some((lo, hi)) = scene.bounds() {
            let (azimuth, elevation) = rxpipe::Camera::framing_angles();
            scene.camera = rxpipe::Camera::orbit(
                lo,
                hi,
                self.up.unwrap_or(glam::Vec3::Y),
                self.azimuth.unwrap_or(azimuth),
                self.elevation.unwrap_or(elevation),
            );
        }
    }
}

fn axis(s: &str) -> Result<glam::Vec3, String> {
    use glam::Vec3;
    Ok(match s.to_ascii_lowercase().as_str() {
        "x" | "+x" => Vec3::X,
        "y" | "+y" => Vec3::Y,
        "z" | "+z" => Vec3::Z,
        "-x" => Vec3::NEG_X,
        "-y" => Vec3::NEG_Y,
        "-z" => Vec3::NEG_Z,
        _ => return Err("an axis: x, y, z, -x, -y or -z".into()),
    })
}

/// A finite number of `unit`s, for an option's value parser.
fn finite(s: &str, unit: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(t) if t.is_finite() => Ok(t),
        Ok(_) => Err(format!("a finite number of {unit}")),
        Err(e) => Err(e.to_string()),
    }
}

fn degrees(s: &str) -> Result<f32, String> {
    finite(s, "degrees")
}

fn elevation(s: &str) -> Result<f32, String> {
    match degrees(s)? {
        d if d.abs() < 89.5 => Ok(d),
        _ => Err("from -89 to 89 degrees (at 90 the camera looks along the up axis)".into()),
    }
}

fn main() -> ExitCode {
    // output into a pipe that closes early (`rxpipe passes | head -1`) ends the program quietly,
    // as other command-line tools do, instead of as a failed print
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default, before any thread is started
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    install_panic_hook();
    // this program uses the GPU from one thread: its CUDA frames may hold their stream while
    // they are enqueued (rxpipe::gpu::gate)
    rxpipe::gpu::gate::enable();
    let cli = Cli::parse();
    // no command: `view` with its defaults
    let command = cli.command.unwrap_or_else(|| {
        Cli::parse_from(["rxpipe", "view"])
            .command
            .expect("`view` parses")
    });
    let result = match command {
        Command::View(a) => view::run(a),
        Command::Render(a) => render::run(a),
        Command::Asr(a) => asr::run(a),
        Command::Reindex(a) => mesh_tools::reindex(a),
        Command::Merge(a) => mesh_tools::merge(a),
        Command::Subset(a) => mesh_tools::subset(a),
        Command::Simplify(a) => mesh_tools::simplify(a),
        Command::Envelope(a) => envelope::run(a),
        Command::Subdivide(a) => subdivide::run(a),
        Command::Passes(a) => passes::run(a),
        Command::Patch(a) => patch::run(a),
        Command::Query(a) => query::run(a),
        Command::Distance(a) => distance::run(a),
        Command::Bench { what } => bench::run(what),
        Command::Info(a) => info::run(a),
        Command::Panic => panic!("the hidden `panic` command"),
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

/// A spinner on standard error for slow steps.
fn spinner(msg: String) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// Refuses to write `out` over one of the `inputs` or a file they refer to (a glTF's buffers and
/// images, an OBJ's material libraries and theirs), or over an existing file without `force`;
/// and a folder, or a file in a folder that does not exist, before any work is done.
fn check_output(out: &std::path::Path, inputs: &[&std::path::Path], force: bool) -> Res {
    let referred: Vec<_> = inputs
        .iter()
        .flat_map(|i| rxpipe::io::referenced_files(i))
        .collect();
    let all: Vec<&std::path::Path> = inputs
        .iter()
        .copied()
        .chain(referred.iter().map(|p| p.as_path()))
        .collect();
    check_output_files(out, &all, force)
}

/// [`check_output`] for a list of files that already holds what they refer to (a loaded
/// scene's sources).
fn check_output_files(out: &std::path::Path, all: &[&std::path::Path], force: bool) -> Res {
    for i in all {
        if out.exists() && std::fs::canonicalize(i).ok() == std::fs::canonicalize(out).ok() {
            return Err(format!("{} is an input; choose another output", out.display()).into());
        }
    }
    if out.is_dir() {
        return Err(format!("{} is a folder; name the file to write", out.display()).into());
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(format!(
                "{}: the folder {} does not exist",
                out.display(),
                dir.display()
            )
            .into());
        }
    }
    if out.exists() && !force {
        return Err(format!("{} exists (use --force to overwrite it)", out.display()).into());
    }
    Ok(())
}
