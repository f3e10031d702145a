//! Backends: where the stages of a frame run.
//!
//! [`Api`] says what a backend provides to the frame: a resident mesh (shader inputs, indices and
//! dynamic batches), the geometry stage with a strategy and a vertex shader, the raster stage and
//! the statistics. The CPU reference ([`cpu::CpuApi`]) and CUDA ([`cuda::CudaApi`]) implement it,
//! and [`crate::pipeline`] runs one generic frame over it, so there is exactly one frame path.
//!
//! [`Backend`] is what a user asks for (`auto`, `cpu`, `cuda`); [`BackendKind`] is what ran. A
//! [`Renderer`] is the choice made once: `Auto` says what it picked and why, and nothing falls
//! back silently afterwards (a combination that cannot run where asked is an error naming why).

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;

use crate::error::Error;
use crate::geometry::{GeometryStats, Layout, Strategy, Uniforms};
use crate::gpu::Gpu;
use crate::raster::{RasterOutput, RasterSettings};
pub use rxpipe_core::execution::{Backend, BackendKind, GRAIN, SMALL_MESH_INDICES};
use std::sync::Arc;

/// What a geometry stage's queues are for ([`Api::shade`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShadeFor {
    /// its statistics only ([`Api::stats`]): the queues hold every shaded vertex
    Stats,
    /// the raster stage over the same jobs ([`Api::raster`]); `rate`: in the shading-rate mode;
    /// `over_target`: drawn over a target's colour and depth
    /// ([`crate::raster::RasterSettings::over_target`]), which a fused frame cannot be
    Frame { rate: bool, over_target: bool },
}

/// The chosen backend, made once and shared by pipelines.
#[derive(Debug, Clone)]
pub struct Renderer {
    kind: BackendKind,
    /// the devices, with the CUDA backend: the first draws every frame (and alone, the whole
    /// frame); with more, each draws a share and the shares are composited
    /// ([`crate::sortlast`])
    gpus: Vec<Arc<Gpu>>,
    /// what the renderer chose and why, for the user
    pub notice: String,
}

/// Which GPUs a renderer draws on: a number of them (the first `n` of the host), all of them,
/// or a list of ordinals. A list may name a device more than once: its shares are then drawn
/// on that device in turn (sort-last on one GPU, for testing the spread where there is one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    Count(usize),
    All,
    List(Vec<usize>),
}

impl Default for Devices {
    /// One GPU, the first: the default, which costs nothing for the others.
    fn default() -> Self {
        Devices::Count(1)
    }
}

impl Devices {
    /// `N` (a count), `all`, or ordinals separated by commas (`0,1`); `None` for anything else,
    /// including a count of 0.
    pub fn parse(s: &str) -> Option<Devices> {
        let s = s.trim();
        if s == "all" {
            return Some(Devices::All);
        }
        if let Some(list) = s.strip_prefix("list:") {
            let ordinals: Option<Vec<usize>> =
                list.split(',').map(|o| o.trim().parse().ok()).collect();
            return ordinals.filter(|o| !o.is_empty()).map(Devices::List);
        }
        s.parse().ok().filter(|&n| n > 0).map(Devices::Count)
    }

    /// The ordinals of the devices meant, on a host of `available` devices; an error names what
    /// is missing.
    pub fn ordinals(&self, available: usize) -> Result<Vec<usize>, Error> {
        let missing = |what: String| {
            Error::Backend(format!(
                "{what}, and this host has {available} CUDA device{}",
                if available == 1 { "" } else { "s" }
            ))
        };
        match self {
            Devices::All if available == 0 => Err(missing("all GPUs were asked for".into())),
            Devices::All => Ok((0..available).collect()),
            Devices::Count(n) if *n > available => Err(missing(format!("{n} GPUs were asked for"))),
            Devices::Count(n) => Ok((0..*n).collect()),
            Devices::List(l) => match l.iter().find(|&&o| o >= available) {
                Some(o) => Err(missing(format!("GPU {o} was asked for"))),
                None => Ok(l.clone()),
            },
        }
    }
}

impl std::fmt::Display for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Devices::Count(n) => write!(f, "{n}"),
            Devices::All => write!(f, "all"),
            Devices::List(l) => {
                let l: Vec<String> = l.iter().map(|o| o.to_string()).collect();
                write!(f, "list:{}", l.join(","))
            }
        }
    }
}

impl Renderer {
    /// Chooses a backend. `Auto` takes CUDA when a device and NVRTC can be used and otherwise the
    /// CPU, saying why in [`Renderer::notice`]; `Cuda` without a usable device is an error.
    pub fn new(backend: Backend) -> Result<Renderer, Error> {
        match backend {
            Backend::Cpu => Ok(Renderer::cpu("backend: cpu (asked for)".into())),
            #[cfg(feature = "cuda")]
            Backend::Auto => match Gpu::new() {
                Ok(gpu) => {
                    let mut r = Renderer::from_gpu(gpu);
                    r.notice = format!("{} (auto: a CUDA device and NVRTC were found)", r.notice);
                    Ok(r)
                }
                Err(e) => Ok(Renderer::cpu(format!("backend: cpu (auto: {e})"))),
            },
            #[cfg(feature = "cuda")]
            Backend::Cuda => Ok(Renderer::from_gpu(Gpu::new()?)),
            #[cfg(not(feature = "cuda"))]
            Backend::Auto => Ok(Renderer::cpu(format!(
                "backend: cpu (auto: {})",
                crate::gpu::UNAVAILABLE
            ))),
            #[cfg(not(feature = "cuda"))]
            Backend::Cuda => Err(Error::Backend(format!(
                "the CUDA backend: {}",
                crate::gpu::UNAVAILABLE
            ))),
        }
    }

    /// [`Renderer::new`] on `devices`: one GPU (the default) is [`Renderer::new`]; more need
    /// the CUDA backend (`Auto` then means CUDA) and that many devices, else an error saying
    /// what there is.
    pub fn on_devices(backend: Backend, devices: &Devices) -> Result<Renderer, Error> {
        if *devices == Devices::Count(1) {
            return Renderer::new(backend);
        }
        if backend == Backend::Cpu {
            return Err(Error::Backend(format!(
                "--gpus {devices} asks for GPUs, and the backend is cpu: leave --gpus out, or choose the cuda backend"
            )));
        }
        #[cfg(feature = "cuda")]
        {
            let ordinals = devices.ordinals(Gpu::count())?;
            // (compositing over distinct GPUs needs NCCL: said before any scene is loaded)
            if ordinals.iter().any(|&o| o != ordinals[0]) && !crate::gpu::probe().nccl_library {
                return Err(Error::Backend(format!(
                    "--gpus {devices}: compositing a frame over several GPUs needs the NCCL library (libnccl.so.2), which is not installed (`rxpipe info` says what is found)"
                )));
            }
            let mut gpus: Vec<Arc<Gpu>> = Vec::with_capacity(ordinals.len());
            for &o in &ordinals {
                // (a device named again is the one already opened: its shares take turns)
                match gpus.iter().find(|g| g.ordinal == o) {
                    Some(g) => gpus.push(g.clone()),
                    None => gpus.push(Gpu::open_device(o, crate::gpu::cache::default_dir())?),
                }
            }
            Renderer::from_gpus(gpus)
        }
        #[cfg(not(feature = "cuda"))]
        Err(Error::Backend(format!(
            "--gpus {devices}: {}",
            crate::gpu::UNAVAILABLE
        )))
    }

    fn cpu(notice: String) -> Renderer {
        Renderer {
            kind: BackendKind::Cpu,
            gpus: Vec::new(),
            notice,
        }
    }

    /// The CUDA backend on a device already opened.
    pub fn from_gpu(gpu: Arc<Gpu>) -> Renderer {
        #[cfg(feature = "cuda")]
        return Renderer {
            kind: BackendKind::Cuda,
            notice: format!("backend: cuda, {}", gpu.name),
            gpus: vec![gpu],
        };
        #[cfg(not(feature = "cuda"))]
        match *gpu {}
    }

    /// The CUDA backend on devices already opened, the first drawing the frame's first share
    /// (and the blended objects) and holding the composite; an empty list is an error.
    pub fn from_gpus(gpus: Vec<Arc<Gpu>>) -> Result<Renderer, Error> {
        let Some(first) = gpus.first() else {
            return Err(Error::Backend("a renderer needs at least one GPU".into()));
        };
        #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
        let mut r = Renderer::from_gpu(first.clone());
        #[cfg(feature = "cuda")]
        if gpus.len() > 1 {
            let names: Vec<String> = gpus
                .iter()
                .map(|g| format!("{} ({})", g.ordinal, g.name))
                .collect();
            r.notice = format!(
                "backend: cuda, {} GPU ranks on GPUs {}; each frame drawn as a share a rank, composited by depth",
                gpus.len(),
                names.join(", ")
            );
        }
        r.gpus = gpus;
        Ok(r)
    }

    /// The device, with the CUDA backend (the first, with several).
    pub fn gpu(&self) -> Option<&Arc<Gpu>> {
        self.gpus.first()
    }

    /// The devices, with the CUDA backend, in rank order (empty on the CPU).
    pub fn gpus(&self) -> &[Arc<Gpu>] {
        &self.gpus
    }

    /// The ordinals of the devices, in rank order (a device named twice, twice).
    pub fn ordinals(&self) -> Vec<usize> {
        #[cfg(feature = "cuda")]
        return self.gpus.iter().map(|g| g.ordinal).collect();
        #[cfg(not(feature = "cuda"))]
        self.gpus.iter().map(|g| match **g {}).collect()
    }

    /// The backend every stage of this renderer's pipelines runs on.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }
}

/// The patch strategy's lists of a mesh the stages left, when `layout` asks for them: built from
/// the patching the patch order left (an error without one), on the host, where the order ran.
pub fn patch_lists(
    mesh: &mut crate::passes::WorkingMesh,
    layout: Layout,
) -> Result<Option<crate::geometry::PatchBatches>, Error> {
    if !layout.patches {
        return Ok(None);
    }
    match mesh.host_with_patching()? {
        (m, Some(p)) => Ok(Some(crate::geometry::PatchBatches::build(
            &m.indices,
            m.vertex_count(),
            &p.patch_of_face,
        )?)),
        (_, None) => Err(crate::geometry::GeometryError::NoPatches.into()),
    }
}

/// The patch shading mode's value of every triangle of the mesh ([`rxpipe_core::color::patch_value`]):
/// its patch in the patching the patch order made, or in one made now with the default options.
pub fn patch_values(
    mesh: &mut crate::passes::WorkingMesh,
    layout: Layout,
) -> Result<Option<Vec<f32>>, Error> {
    if !layout.patch_colors {
        return Ok(None);
    }
    let (m, p) = mesh.host_with_patching()?;
    let made;
    let p = match p {
        Some(p) => p,
        None => {
            made = crate::patch::cpu::patch_indices(&m.indices, &Default::default())?;
            &made
        }
    };
    let ribbon = p.in_ribbons(&m.indices);
    Ok(Some(
        p.patch_of_face
            .iter()
            .zip(ribbon)
            .map(|(&q, r)| rxpipe_core::color::patch_value(q, r))
            .collect(),
    ))
}

/// One object's geometry stage for [`Api::shade`]: its resident mesh (or this frame's subset
/// of it), its uniforms, and its queue.
pub struct ShadeJob<'a, A: Api + ?Sized> {
    pub mesh: &'a A::Mesh,
    pub uniforms: Uniforms,
    pub queue: &'a mut Option<A::Queue>,
}

/// One object's draw for [`Api::raster`]: its resident mesh, the queue the geometry stage wrote
/// for it this frame, and its base colour.
pub struct DrawRef<'a, A: Api + ?Sized> {
    /// the object's resident mesh (or this frame's subset of it)
    pub mesh: &'a A::Mesh,
    /// what the geometry stage wrote for it this frame
    pub queue: &'a A::Queue,
    /// linear RGBA
    pub color: [f32; 4],
    /// the object's material (`None`: the lit mode with `color`)
    pub material: Option<&'a rxpipe_core::material::Material>,
    /// the object's model matrix (the material path takes the mesh's tangents to world space)
    pub model: glam::Mat4,
}

/// What a backend provides to a frame. Implemented by the CPU reference and by CUDA; the frame in
/// [`crate::pipeline`] is one generic function over it.
pub trait Api: Send + Sync {
    /// A mesh made resident for the geometry stage: shader inputs, whole triangles, batches.
    type Mesh: Send + Sync;
    /// The geometry stage's output for one object, reused frame after frame.
    type Queue: Send;

    /// The backend this is.
    fn kind(&self) -> BackendKind;

    /// Makes a prepared mesh resident, with what `layout` asks for: dynamic batches, or the
    /// patches' vertex lists (from the patching the patch order left; an error without one). The
    /// mesh has passed its stages; `mesh` is what the stages left (on the host or, with CUDA,
    /// possibly on the device already). It is drawn `placements` times a frame (its instances),
    /// which may choose its form (the CUDA backend's batch tables, for the triangles drawn); its
    /// steps' times go to `steps`.
    fn resident(
        &self,
        mesh: &mut crate::passes::WorkingMesh,
        layout: Layout,
        placements: usize,
        steps: &mut crate::passes::Steps,
    ) -> Result<Self::Mesh, Error>;

    /// The triangles `keep` of `mesh` (sorted, disjoint ranges within its triangles, as a frame
    /// stage left them), in order, as a mesh of their own that shares `mesh`'s vertices, with
    /// what `layout` asks for (the patches of the kept triangles, each whole): what the geometry
    /// stage shades when a frame stage dropped part of an object. Made each frame.
    fn subset(
        &self,
        mesh: &Arc<Self::Mesh>,
        keep: &[std::ops::Range<u32>],
        layout: Layout,
    ) -> Result<Self::Mesh, Error>;

    /// Where a part of a frame drawn in parts ([`crate::sortlast`]) had best cut `mesh` near its
    /// triangle `triangle`: a triangle at which [`Api::subset`] of the parts' runs copies
    /// nothing (with the CUDA backend, a start of the mesh's dynamic batches, so that a part is
    /// a window of its resident batches and their tables). As given where any cut is as good.
    fn align_cut(&self, _mesh: &Self::Mesh, triangle: u32) -> u32 {
        triangle
    }

    /// Starts a frame (on the CPU the geometry stage's time runs from here to the raster
    /// stage).
    fn begin_frame(&self) -> Result<(), Error>;

    /// The geometry stage of a frame: `strategy` over each job's mesh with the backend's vertex
    /// shader and the job's uniforms into its queue (made or remade to fit when it does not),
    /// all jobs at once (the CUDA backend shades them in one launch), for `what` (statistics
    /// only, or the raster stage over the same jobs). In the shading-rate mode each shaded
    /// vertex's `extra` varying carries how often its source vertex was shaded (the CUDA
    /// backend's raster stage reads the per-vertex counts its queue keeps instead). For a
    /// frame the CUDA backend makes the queues of a frame it fuses without vertices (the fused
    /// geometry stage writes only the survivors', into the raster stage's buffer). The CUDA backend uploads the stage's table here and launches it from
    /// [`Api::raster`] (or [`Api::stats`]) once the raster stage's host work is done, so that
    /// the device runs the frame without waiting on the host between its stages.
    fn shade(
        &self,
        strategy: Strategy,
        jobs: &mut [ShadeJob<'_, Self>],
        what: ShadeFor,
    ) -> Result<(), Error>;

    /// The raster stage over the draws, in order, into `out`; returns the geometry stage's time
    /// in milliseconds (on the CPU since [`Api::begin_frame`]; on the GPU the device's, from
    /// its first kernel to the raster stage's first).
    fn raster(
        &self,
        draws: &[DrawRef<'_, Self>],
        settings: &RasterSettings,
        out: &mut RasterOutput,
    ) -> Result<f64, Error>;

    /// Invocation statistics, summed, of the last [`Api::shade`], whose jobs' meshes and queues
    /// `shaded` are (the CUDA backend reads the sum of its invocation counts with one download).
    fn stats(&self, shaded: &[(&Self::Mesh, &Self::Queue)]) -> Result<GeometryStats, Error>;

    /// Notes about the last frame (buffers that had to grow), for the user.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
