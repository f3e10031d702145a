//! The pipeline: scene -> re-indexing -> mesh passes -> vertex order -> (per frame) frame stages
//! -> geometry stage -> raster stage -> frame.
//!
//! [`Pipeline::prepare`] runs the mesh stages on every object and makes the result resident on
//! the renderer's backend; [`Pipeline::render_into`] runs one frame. Both are single code paths
//! over [`crate::backend::Api`]: the backend is chosen once, in the [`Renderer`], and every stage
//! reports which backend ran it.

mod diagnostics;
mod frame;
mod prepare;
mod prepared;
mod render;
mod spread;

pub use frame::{Frame, FrameStats, HostTimes, PartsStats};
pub use prepared::{Prepared, PreparedObject};

use crate::backend::cpu::CpuApi;
#[cfg(feature = "cuda")]
use crate::backend::cuda::CudaApi;
use crate::backend::Renderer;
use crate::error::Error;
#[cfg(feature = "cuda")]
use crate::geometry::cuda::CudaShader;
use crate::geometry::VertexShader;
use crate::geometry::{self, Strategy, Transform, VertexOrder};
use crate::passes::{FrameStage, MeshPass, PassError, Stage};
use crate::raster::{CullMode, ShadingMode};
use crate::reindex::ReindexOptions;
use std::sync::Arc;

pub use crate::backend::Backend;

/// A pipeline: its settings, its stages and the backend they run on; see [`PipelineBuilder`].
pub struct Pipeline {
    /// how the geometry stage finds reusable vertices
    pub strategy: Strategy,
    /// the vertex order, the last mesh stage
    pub order: VertexOrder,
    /// how fragments are coloured
    pub shading: ShadingMode,
    /// which faces are dropped before rasterisation
    pub cull: CullMode,
    /// the re-indexing every object goes through first (`None`: meshes are used as given)
    pub reindex: Option<ReindexOptions>,
    /// frames for a window: only their colour is wanted, so the CUDA backend downloads no
    /// depth ([`Frame::depth`] stays empty; the depth shading mode still reads it)
    pub color_only: bool,
    /// the CPU backend shades fragments with its baseline x86-64 build even on a CPU with
    /// x86-64-v3 (AVX2, FMA), whose faster build it otherwise uses; the images are the same
    pub baseline_isa: bool,
    /// the user's mesh passes, in order
    passes: Vec<Arc<dyn MeshPass>>,
    /// the frame stages, in order
    frame_stages: Vec<Arc<dyn FrameStage>>,
    /// the default per-patch culling stage, which runs after the others whenever the order is
    /// the patch order (the viewer changes the order at run time); `None` when the default
    /// stages are off, the shader is the user's, or the stage was listed
    patch_cull: Option<Arc<dyn FrameStage>>,
    /// what the builder decided about the default stages, for the user
    pub notices: Vec<String>,
    renderer: Renderer,
    engine: Engine,
    /// the engines of the renderer's other GPUs, in rank order after `engine`'s (empty with one
    /// GPU): each draws its share of every frame ([`spread`])
    peers: Vec<Engine>,
    /// a frame over several GPUs: the ranks' shares and the composite
    spread: std::sync::Mutex<spread::Spread>,
}

/// The backend a pipeline runs on, with its shader compiled in.
enum Engine {
    Cpu(CpuApi),
    #[cfg(feature = "cuda")]
    Cuda(Box<CudaApi>),
}

/// Builds a [`Pipeline`]; every knob has a default.
///
/// ```
/// use rxpipe::{Backend, Pipeline, Renderer, Strategy};
/// use rxpipe::passes::{Normals, NormalsMode};
/// let renderer = Renderer::new(Backend::Cpu)?;
/// let mut pipeline = Pipeline::builder()
///     .strategy(Strategy::parse("hash").unwrap())
///     .pass(Normals::new(NormalsMode::Angle))
///     .build(&renderer)?;
/// let scene = rxpipe::Scene::from_meshes("ball", vec![rxpipe::mesh::icosphere(3)]);
/// let frame = pipeline.render(&scene, &scene.camera, (160, 120))?;
/// assert_eq!(frame.color.len(), 160 * 120 * 4);
/// println!("{}", frame.stats);
/// # Ok::<(), rxpipe::Error>(())
/// ```
pub struct PipelineBuilder {
    strategy: Strategy,
    order: VertexOrder,
    shading: ShadingMode,
    cull: CullMode,
    shader: Arc<dyn VertexShader>,
    #[cfg(feature = "cuda")]
    cuda_shader: Option<CudaShader>,
    custom_cpu_shader: bool,
    passes: Vec<Arc<dyn MeshPass>>,
    frame_stages: Vec<Arc<dyn FrameStage>>,
    default_stages: bool,
    reindex: Option<ReindexOptions>,
}

impl Default for PipelineBuilder {
    fn default() -> Self {
        PipelineBuilder {
            strategy: Strategy::parse("hash").expect("a known strategy"),
            order: VertexOrder::Input,
            shading: ShadingMode::Lit,
            cull: CullMode::Back,
            shader: Arc::new(Transform),
            #[cfg(feature = "cuda")]
            cuda_shader: None,
            custom_cpu_shader: false,
            passes: Vec::new(),
            frame_stages: Vec::new(),
            default_stages: true,
            reindex: Some(ReindexOptions::default()),
        }
    }
}

impl PipelineBuilder {
    /// How the geometry stage finds reusable vertices (hashing by default).
    pub fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    /// The vertex order, the last mesh stage.
    pub fn order(mut self, o: VertexOrder) -> Self {
        self.order = o;
        self
    }
    /// How fragments are coloured (lit by default).
    pub fn shading(mut self, m: ShadingMode) -> Self {
        self.shading = m;
        self
    }
    /// Which faces are dropped (back faces by default).
    pub fn cull(mut self, c: CullMode) -> Self {
        self.cull = c;
        self
    }
    /// The vertex shader of the CPU backend (the standard transform by default). With the CUDA
    /// backend a custom shader needs its CUDA version too ([`PipelineBuilder::cuda_shader`]).
    pub fn vertex_shader(mut self, s: impl VertexShader + 'static) -> Self {
        self.shader = Arc::new(s);
        self.custom_cpu_shader = true;
        self
    }
    /// The vertex shader of the CUDA backend: CUDA C defining `vs_main` (see [`CudaShader`]).
    #[cfg(feature = "cuda")]
    pub fn cuda_shader(mut self, s: CudaShader) -> Self {
        self.cuda_shader = Some(s);
        self
    }
    /// How every mesh is re-indexed before the passes (duplicate and unused vertices removed, on
    /// the GPU with the CUDA backend); on by default, `None` turns it off.
    pub fn reindex(mut self, r: Option<ReindexOptions>) -> Self {
        self.reindex = r;
        self
    }
    /// Adds a mesh pass (run in the order added, before the default normals and the order).
    pub fn pass(mut self, p: impl MeshPass + 'static) -> Self {
        self.passes.push(Arc::new(p));
        self
    }
    /// Adds a frame stage (run every frame in the order added).
    pub fn frame_stage(mut self, s: impl FrameStage + 'static) -> Self {
        self.frame_stages.push(Arc::new(s));
        self
    }
    /// Adds a stage made by [`crate::passes::parse`]. An `order` stage sets the vertex order.
    pub fn stage(mut self, s: Stage) -> Self {
        match s {
            Stage::Mesh(p) => self.passes.push(p),
            // the order is the last mesh stage whatever its place in the list
            Stage::Order(o) => self.order = o,
            Stage::Frame(f) => self.frame_stages.push(f),
        }
        self
    }
    /// Adds the stages named by specifications such as `normals:angle` (each possibly a
    /// comma-separated list); an unknown name or argument is an error listing what exists.
    pub fn stages<S: AsRef<str>>(mut self, specs: &[S]) -> Result<Self, PassError> {
        for s in crate::passes::parse_list(specs)? {
            self = self.stage(s);
        }
        Ok(self)
    }
    /// Whether the default stages run (on by default): normals for meshes without them, and the
    /// frustum stage with the built-in vertex shaders.
    pub fn default_stages(mut self, on: bool) -> Self {
        self.default_stages = on;
        self
    }

    /// The pipeline on `renderer`'s backend, its kernels compiled there. A shader with no version for that backend is an error.
    pub fn build(self, renderer: &Renderer) -> Result<Pipeline, Error> {
        if let Some((mi, mv)) = self.strategy.dynamic_limits() {
            if mi < 3 || mv < 3 {
                return Err(geometry::GeometryError::BatchLimits {
                    max_indices: mi,
                    max_vertices: mv,
                }
                .into());
            }
        }
        // the patch strategy shades the patches the patch order makes
        let mut order = self.order;
        if self.strategy == Strategy::Patch {
            match order {
                VertexOrder::Patch(_) => {}
                VertexOrder::Input => order = VertexOrder::Patch(geometry::order::PATCH_FACES),
                other => {
                    return Err(Error::Backend(format!(
                        "the patch strategy shades patches, which the patch order makes: the {other} order cannot be used with it (leave the order out, or ask for --order patch)"
                    )))
                }
            }
        }
        #[cfg(feature = "cuda")]
        let builtin =
            !self.custom_cpu_shader && self.cuda_shader.as_ref().is_none_or(CudaShader::is_builtin);
        #[cfg(feature = "cuda")]
        let engine = match (renderer.gpu(), self.cuda_shader) {
            (Some(gpu), Some(s)) => Engine::Cuda(Box::new(CudaApi::new(gpu.clone(), s)?)),
            (Some(_), None) if self.custom_cpu_shader => {
                return Err(Error::Backend(
                    "the vertex shader given with vertex_shader() runs on the CPU only, and the backend is cuda: give its CUDA version with cuda_shader(), or choose the cpu backend".into(),
                ))
            }
            (Some(gpu), None) => {
                Engine::Cuda(Box::new(CudaApi::new(gpu.clone(), CudaShader::transform())?))
            }
            (None, Some(s)) if !self.custom_cpu_shader => {
                return Err(Error::Backend(format!(
                    "the vertex shader {} is CUDA only, and the backend is cpu: give the CPU its own with vertex_shader(), or choose the cuda backend",
                    s.name
                )))
            }
            (None, _) => Engine::Cpu(CpuApi::new(self.shader)),
        };
        // (the other GPUs' engines, with the same shader)
        #[cfg(feature = "cuda")]
        let peers = match &engine {
            Engine::Cuda(api) => renderer.gpus()[1..]
                .iter()
                .map(|g| {
                    let api = CudaApi::new(g.clone(), api.geometry.shader.clone())?;
                    Ok(Engine::Cuda(Box::new(api)))
                })
                .collect::<Result<Vec<_>, Error>>()?,
            Engine::Cpu(_) => Vec::new(),
        };
        #[cfg(not(feature = "cuda"))]
        let peers = Vec::new();
        #[cfg(not(feature = "cuda"))]
        let (builtin, engine) = (
            !self.custom_cpu_shader,
            Engine::Cpu(CpuApi::new(self.shader)),
        );
        let mut frame_stages = self.frame_stages;
        let mut notices = Vec::new();
        let listed =
            |stages: &[Arc<dyn FrameStage>], name: &str| stages.iter().any(|s| s.name() == name);
        if self.default_stages && !listed(&frame_stages, "frustum") {
            if builtin {
                frame_stages.insert(0, Arc::new(crate::passes::Frustum::default()));
            } else {
                notices.push(
                    "the frustum stage is off: a custom vertex shader may move vertices outside their object's bounds (list it to turn it on)".into(),
                );
            }
        }
        // per-patch culling, after the frustum stage, for objects in patch order
        let mut patch_cull: Option<Arc<dyn FrameStage>> = None;
        if self.default_stages && !listed(&frame_stages, "patch-cull") {
            if builtin {
                patch_cull = Some(Arc::new(crate::passes::PatchCull));
            } else if matches!(order, VertexOrder::Patch(_)) {
                notices.push(
                    "the patch-cull stage is off: a custom vertex shader may move vertices outside their patch's bounds (list it to turn it on)".into(),
                );
            }
        }
        Ok(Pipeline {
            strategy: self.strategy,
            order,
            shading: self.shading,
            cull: self.cull,
            reindex: self.reindex,
            color_only: false,
            baseline_isa: false,
            passes: self.passes,
            frame_stages,
            patch_cull,
            notices,
            spread: std::sync::Mutex::new(spread::Spread::new(renderer)?),
            renderer: renderer.clone(),
            engine,
            peers,
        })
    }
}

impl Pipeline {
    /// A builder with every knob at its default.
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    /// The renderer (backend) the pipeline runs on.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// The frame stages that run with the pipeline as it is now, in order.
    fn frame_stages(&self) -> impl Iterator<Item = &Arc<dyn FrameStage>> {
        let patch_order = matches!(self.order, VertexOrder::Patch(_));
        self.frame_stages
            .iter()
            .chain(self.patch_cull.iter().filter(move |_| patch_order))
    }

    /// The frame stages, by name.
    pub fn frame_stage_names(&self) -> Vec<String> {
        self.frame_stages().map(|s| s.name().to_string()).collect()
    }

    /// What the objects must be prepared with: the strategy's batches or patch lists, and the
    /// triangles' patch colours in the patch shading mode.
    pub fn layout(&self) -> geometry::Layout {
        geometry::Layout {
            patch_colors: self.shading == ShadingMode::Patches,
            ..self.strategy.layout()
        }
    }

    /// Whether a prepared scene still matches this pipeline's backend, order and layout (batch
    /// limits, patches).
    pub fn is_prepared_for(&self, p: &Prepared) -> bool {
        p.order == self.order
            && p.layout == self.layout()
            && p.backend == self.renderer.kind()
            && p.peers.len() == self.peers.len()
    }

    /// [`Pipeline::is_prepared_for`], as the error that says what differs.
    pub(crate) fn check_prepared(&self, p: &Prepared) -> Result<(), Error> {
        if self.is_prepared_for(p) {
            return Ok(());
        }
        Err(Error::Backend(format!(
            "the scene was prepared for the {} backend on {} GPU(s), {} order and {}; this pipeline needs {} on {}, {} and {}: prepare it again",
            p.backend,
            1 + p.peers.len(),
            p.order,
            p.layout,
            self.renderer.kind(),
            self.ranks(),
            self.order,
            self.layout()
        )))
    }
}
