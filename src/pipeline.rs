//! The pipeline: scene -> re-indexing -> mesh passes -> vertex order -> (per frame) frame stages
//! -> geometry stage -> raster stage -> frame.
//!
//! [`Pipeline::prepare`] runs the mesh stages on every object and makes the result resident on
//! the renderer's backend; [`Pipeline::render_into`] runs one frame. Both are single code paths
//! over [`crate::backend::Api`]: the backend is chosen once, in the [`Renderer`], and every stage
//! reports which backend ran it.

use crate::backend::cpu::{CpuApi, CpuMesh};
use crate::backend::cuda::CudaApi;
use crate::backend::{Api, BackendKind, DrawRef, Renderer, ShadeJob};
use crate::geometry::cuda::CudaShader;
use crate::geometry::VertexShader;
use crate::geometry::{self, GeometryStats, Strategy, Transform, Uniforms, VertexOrder};
use crate::passes::{
    Derived, FrameContext, FrameStage, FrameStageStats, MeshPass, Normals, ObjectBounds, Order,
    PassContext, PassError, Stage, StageReport, Visibility, WorkingMesh,
};
use crate::raster::{self, CullMode, RasterSettings, RasterStats, ShadingMode};
use crate::reindex::{self, ReindexOptions, ReindexReport};
use crate::scene::{Camera, Scene};
use crate::Error;
use crate::Mesh;
use glam::Vec3;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
}

/// The backend a pipeline runs on, with its shader compiled in.
enum Engine {
    Cpu(CpuApi),
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
        let builtin =
            !self.custom_cpu_shader && self.cuda_shader.as_ref().is_none_or(CudaShader::is_builtin);
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
            renderer: renderer.clone(),
            engine,
        })
    }
}

/// One drawn object of a frame: its resident mesh, or the subset a frame stage left of it, with
/// the object's queue.
enum Slot<'a, A: Api> {
    Resident(usize, std::sync::MutexGuard<'a, Option<A::Queue>>),
    Subset(usize, A::Mesh, std::sync::MutexGuard<'a, Option<A::Queue>>),
}

/// Checks what a frame stage left: one entry per object, ranges sorted, disjoint and within the
/// object's triangles.
fn check_visibility(
    stage: &str,
    visibility: &[Visibility],
    objects: &[ObjectBounds],
) -> Result<(), PassError> {
    let bad = |message: String| PassError::Argument {
        stage: stage.into(),
        arg: "(its result)".into(),
        message,
    };
    if visibility.len() != objects.len() {
        return Err(bad(format!(
            "{} entries for {} objects",
            visibility.len(),
            objects.len()
        )));
    }
    for (k, (v, o)) in visibility.iter().zip(objects).enumerate() {
        let Some(keep) = &v.keep else { continue };
        let mut end = 0u32;
        for r in keep {
            if r.start < end || r.start > r.end || r.end as u64 > o.triangles {
                return Err(bad(format!(
                    "object {k}: triangle range {r:?} is not sorted, disjoint and within its {} triangles",
                    o.triangles
                )));
            }
            end = r.end;
        }
    }
    Ok(())
}

/// One object of a prepared scene, as the host sees it.
#[derive(Debug, Clone)]
pub struct PreparedObject {
    /// its index among the scene's objects
    pub object: usize,
    /// object to world
    pub model: glam::Mat4,
    /// linear RGBA
    pub color: [f32; 4],
    /// its material (`None`: the lit mode with `color`)
    pub material: Option<Arc<crate::material::Material>>,
    /// object-space bounds of its vertices (`None`: no vertices)
    pub bounds: Option<(Vec3, Vec3)>,
    /// vertices after the mesh stages
    pub vertices: usize,
    /// triangles after the mesh stages
    pub triangles: usize,
    /// what re-indexing removed (`None` when it is off or the mesh has no triangles)
    pub reindexed: Option<ReindexReport>,
    /// its patches' bounds and normal cones, when it was prepared in patch order
    pub patches: Option<Arc<crate::patch::PatchBounds>>,
    /// its positions and indices after the mesh stages, when a frame stage needs them
    /// ([`FrameStage::needs_meshes`])
    pub mesh: Option<Arc<Mesh>>,
}

/// An object made resident on a backend, with the queue its frames reuse.
struct Resident<A: Api> {
    mesh: A::Mesh,
    queue: Mutex<Option<A::Queue>>,
}

enum Residents {
    Cpu(Vec<Resident<CpuApi>>),
    Cuda(Vec<Resident<CudaApi>>),
}

/// A scene prepared for one pipeline configuration: stages run, order applied, batches built,
/// every object resident on the pipeline's backend.
pub struct Prepared {
    /// the objects prepared, in scene order (those a stage failed on are left out)
    pub objects: Vec<PreparedObject>,
    residents: Residents,
    /// what every mesh stage did to every object
    pub stages: Vec<StageReport>,
    /// objects left out because a stage failed on them (the others are intact)
    pub failures: Vec<String>,
    order: VertexOrder,
    layout: geometry::Layout,
    backend: BackendKind,
}

impl Prepared {
    /// One line per object whose re-indexing removed something, and per object a stage failed on.
    pub fn reindex_notes(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .objects
            .iter()
            .filter_map(|o| o.reindexed.as_ref().map(|r| (o.object, r)))
            .filter(|(_, r)| r.vertices_out != r.vertices_in || r.fallback.is_some())
            .map(|(k, r)| format!("object {k}: {r}"))
            .collect();
        v.extend(self.failures.iter().map(|f| format!("left out: {f}")));
        v
    }

    /// One line per mesh stage: its backend, total time and what it did (the first object's
    /// words, named as that object's when the stage ran on several, and how many objects it ran
    /// on).
    pub fn stage_summary(&self) -> Vec<String> {
        let mut names: Vec<(&str, BackendKind)> = Vec::new();
        for r in &self.stages {
            if !names.contains(&(r.stage.as_str(), r.backend)) {
                names.push((r.stage.as_str(), r.backend));
            }
        }
        names
            .into_iter()
            .map(|(n, b)| {
                let rs: Vec<&StageReport> = self
                    .stages
                    .iter()
                    .filter(|r| r.stage == n && r.backend == b)
                    .collect();
                let ms: f64 = rs.iter().map(|r| r.ms).sum();
                let moved = rs.iter().filter(|r| r.moved.is_some()).count();
                // (with several objects, whose words these are: not the scene's totals)
                let words = if rs.len() > 1 {
                    format!("object {}: {}", rs[0].object, rs[0].changed)
                } else {
                    rs[0].changed.clone()
                };
                let mut line = format!(
                    "stage {n} ({b}): {:.2} ms over {} object(s); {words}",
                    ms,
                    rs.len(),
                );
                if moved > 0 {
                    line += &format!(
                        "; the mesh moved for {moved} object(s) ({})",
                        rs.iter().find_map(|r| r.moved.clone()).unwrap_or_default()
                    );
                }
                line
            })
            .collect()
    }

    /// The CPU-resident mesh of prepared object `k` (with the CPU backend).
    pub fn cpu_mesh(&self, k: usize) -> Option<&CpuMesh> {
        match &self.residents {
            Residents::Cpu(v) => v.get(k).map(|r| &r.mesh),
            Residents::Cuda(_) => None,
        }
    }

    /// The backend the objects are resident on.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }
}

/// Per-frame statistics: which backend ran it, frame-stage results, geometry invocations, raster
/// counts and stage times.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FrameStats {
    /// the backend of the geometry and raster stages
    pub backend: Option<BackendKind>,
    /// the geometry stage's strategy
    pub strategy: &'static str,
    /// what each frame stage did
    pub stages: Vec<FrameStageStats>,
    /// shader invocations and triangles of the geometry stage
    pub geometry: GeometryStats,
    /// counts and times of the raster stage
    pub raster: RasterStats,
    /// the geometry stage's time in milliseconds (device time with CUDA)
    pub geometry_ms: f64,
    /// host wall time of the whole frame in milliseconds
    pub total_ms: f64,
    /// where the host's time of the frame went
    pub host: HostTimes,
}

/// Host wall times of a frame's parts, in milliseconds: what the host does for the device (on
/// the CPU backend, the work itself).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct HostTimes {
    /// the objects' model matrices (posed) and bounds, and the frame stages (each also in
    /// [`FrameStats::stages`])
    pub stages_ms: f64,
    /// the drawn objects' list and uniforms and the geometry stage's preparation (on the CPU,
    /// the geometry stage itself)
    pub draws_ms: f64,
    /// the raster stage's call: on the GPU its tables, its launches with the geometry stage's,
    /// the wait for the device and the download ([`RasterStats`]'s host times split it)
    pub raster_ms: f64,
    /// the frame's statistics and notes
    pub stats_ms: f64,
}

impl FrameStats {
    /// Objects and triangles the frame stages dropped.
    pub fn culled(&self) -> (u64, u64) {
        self.stages.iter().fold((0, 0), |(o, t), s| {
            (o + s.culled_objects, t + s.culled_triangles)
        })
    }
}

impl std::fmt::Display for FrameStats {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for s in &self.stages {
            write!(
                f,
                "{} ({}): {} objects / {} triangles culled in {:.3} ms; ",
                s.stage,
                s.backend.map_or("-", |b| b.name()),
                s.culled_objects,
                s.culled_triangles,
                s.ms
            )?;
        }
        write!(
            f,
            "{} triangles, {} invocations (ASR {:.3}, ideal {:.3}, strategy {}, {}), {} rasterised, {} fragments; geometry {:.2} ms, setup {:.2} ms, binning {:.2} ms, raster {:.2} ms, total {:.2} ms",
            self.geometry.triangles,
            self.geometry.invocations,
            self.geometry.asr(),
            self.geometry.ideal_asr(),
            self.strategy,
            self.backend.map_or("-", |b| b.name()),
            self.raster.rasterized,
            self.raster.fragments,
            self.geometry_ms,
            self.raster.setup_ms,
            self.raster.bin_ms,
            self.raster.raster_ms,
            self.total_ms
        )
    }
}

/// A rendered image: RGBA8 (sRGB) colour, f32 depth (NDC, 1 = far) and statistics.
#[derive(Debug, Clone)]
pub struct Frame {
    /// pixels across
    pub width: u32,
    /// pixels down
    pub height: u32,
    /// RGBA8, sRGB, row by row from the top
    pub color: Vec<u8>,
    /// NDC depth per pixel, 1 = far
    pub depth: Vec<f32>,
    /// fragments covering each pixel before the depth test, when requested
    pub coverage: Option<Vec<u32>>,
    /// what the frame's stages did and cost
    pub stats: FrameStats,
    /// what the renderer had to adapt for this frame (GPU buffers that grew), for the user
    pub notes: Vec<String>,
    /// the raster stage's working memory, reused by the next frame rendered into this one
    scratch: raster::Scratch,
}

impl Frame {
    /// A frame with no pixels; rendering sizes it.
    pub fn empty() -> Frame {
        Frame {
            width: 0,
            height: 0,
            color: Vec::new(),
            depth: Vec::new(),
            coverage: None,
            stats: FrameStats::default(),
            notes: Vec::new(),
            scratch: raster::Scratch::default(),
        }
    }

    /// Writes the colour buffer as PNG (to a temporary name first, then renamed into place).
    pub fn save_png(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::image::save_png(path.as_ref(), self.width, self.height, &self.color)
    }

    /// Writes the colour image in the format the path's extension names (PNG or JPEG; see
    /// [`crate::image::ImageFormat`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::image::save(path.as_ref(), self.width, self.height, &self.color)
    }

    /// The frame's buffers as a raster target (given back with [`Frame::put_output`]).
    fn take_output(&mut self) -> raster::RasterOutput {
        raster::RasterOutput {
            width: self.width,
            height: self.height,
            color: std::mem::take(&mut self.color),
            depth: std::mem::take(&mut self.depth),
            coverage: self.coverage.take(),
            stats: Default::default(),
            scratch: std::mem::take(&mut self.scratch),
        }
    }

    fn put_output(&mut self, out: raster::RasterOutput) {
        self.width = out.width;
        self.height = out.height;
        self.color = out.color;
        self.depth = out.depth;
        self.coverage = out.coverage;
        self.scratch = out.scratch;
        self.stats.raster = out.stats;
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

    /// Runs the mesh stages on every object (re-indexing, the passes, normals where missing, the
    /// vertex order) and makes the results resident on the backend, with the dynamic batches. A
    /// stage that fails on one object leaves that object out (named in
    /// [`Prepared::failures`]) and the others intact; when every object fails, the first
    /// failure is the error.
    pub fn prepare(&self, scene: &Scene) -> Result<Prepared, Error> {
        self.check_memory(scene)?;
        match &self.engine {
            Engine::Cpu(api) => {
                let (p, r) = self.prepare_on(api, scene)?;
                Ok(Prepared {
                    residents: Residents::Cpu(r),
                    ..p
                })
            }
            Engine::Cuda(api) => {
                let (p, r) = self.prepare_on(&**api, scene)?;
                Ok(Prepared {
                    residents: Residents::Cuda(r),
                    ..p
                })
            }
        }
    }

    /// What preparing and drawing `scene` will take of the host's and the device's memory
    /// ([`crate::footprint`]).
    pub fn footprint(&self, scene: &Scene) -> crate::footprint::Footprint {
        let counts: Vec<_> = scene
            .objects
            .iter()
            .map(|o| crate::footprint::Counts::of(&o.mesh))
            .collect();
        crate::footprint::of(
            &counts,
            self.renderer.kind(),
            self.strategy,
            self.reindex.is_some(),
        )
    }

    /// Refuses `scene` before any work where its [`Pipeline::footprint`] does not fit the host's
    /// memory or the device's, with the figure it needs and the figure available.
    pub fn check_memory(&self, scene: &Scene) -> Result<(), Error> {
        let f = self.footprint(scene);
        let what = |on: &str| {
            format!(
                "{} ({} triangles) through the {} strategy on {on}",
                scene.name,
                scene.triangle_count(),
                self.strategy.name()
            )
        };
        let on_host = match self.renderer.kind() {
            BackendKind::Cpu => "the CPU",
            BackendKind::Cuda => "the GPU (the host's part)",
        };
        crate::limits::check_host(f.host, || what(on_host))?;
        if let (Some(gpu), true) = (self.renderer.gpu(), f.device > 0) {
            let (free, _) = gpu
                .ctx
                .mem_get_info()
                .map_err(|e| Error::Backend(format!("querying the GPU's free memory: {e}")))?;
            if f.device > free as u64 {
                return Err(crate::limits::OutOfMemory {
                    what: what("the GPU (its memory)"),
                    needed: f.device,
                    available: free as u64,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Prepares objects `objects` of `scene` again, in `prepared` (which this pipeline prepared
    /// from `scene`), after their meshes changed: a skinned or morphed object posed at a new time
    /// ([`Scene::pose_meshes`]). Each goes through the mesh stages onto the backend as
    /// [`Pipeline::prepare`] takes it, and replaces its old self; the stage reports stay those
    /// of the first preparation.
    pub fn prepare_again(
        &self,
        prepared: &mut Prepared,
        scene: &Scene,
        objects: &[usize],
    ) -> Result<(), Error> {
        if !self.is_prepared_for(prepared) {
            return Err(Error::Backend(
                "the scene was prepared for another backend, order or layout".into(),
            ));
        }
        let mut scratch = self.empty_prepared(prepared.backend);
        for &k in objects {
            let (Some(o), Some(slot)) = (
                scene.objects.get(k),
                prepared.objects.iter().position(|p| p.object == k),
            ) else {
                continue;
            };
            match (&self.engine, &mut prepared.residents) {
                (Engine::Cpu(api), Residents::Cpu(r)) => {
                    let (obj, res) = self.prepare_object(api, k, o, &mut scratch)?;
                    (prepared.objects[slot], r[slot]) = (obj, res);
                }
                (Engine::Cuda(api), Residents::Cuda(r)) => {
                    let (obj, res) = self.prepare_object(&**api, k, o, &mut scratch)?;
                    (prepared.objects[slot], r[slot]) = (obj, res);
                }
                _ => {
                    return Err(Error::Backend(
                        "the scene was prepared on another backend: prepare it again".into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// A prepared scene of no objects yet, for this pipeline on `backend`.
    fn empty_prepared(&self, backend: BackendKind) -> Prepared {
        Prepared {
            objects: Vec::new(),
            residents: Residents::Cpu(Vec::new()),
            stages: Vec::new(),
            failures: Vec::new(),
            order: self.order,
            layout: self.layout(),
            backend,
        }
    }

    fn prepare_on<A: Api>(
        &self,
        api: &A,
        scene: &Scene,
    ) -> Result<(Prepared, Vec<Resident<A>>), Error> {
        let mut prepared = self.empty_prepared(api.kind());
        let mut residents = Vec::new();
        let mut first_error = None;
        let objects = &scene.objects;
        let mut step = |k: usize| {
            let o = &objects[k];
            match self.prepare_object(api, k, o, &mut prepared) {
                Ok((obj, r)) => {
                    prepared.objects.push(obj);
                    residents.push(r);
                }
                Err(e) => {
                    prepared
                        .failures
                        .push(format!("object {k} ('{}'): {e}", o.mesh.name));
                    first_error.get_or_insert(e);
                }
            }
        };
        // On a worker of the thread pool: the stages' parallel loops over a small object then
        // run mostly inline; from this thread each such loop would hand its work to the pool
        // and wait, which for a scene of many small objects costs more than the work. Large
        // objects take as long either way.
        rayon::scope(|_| (0..objects.len()).for_each(&mut step));
        if let (true, Some(e)) = (prepared.objects.is_empty(), first_error) {
            return Err(e);
        }
        Ok((prepared, residents))
    }

    /// One object through the mesh stages onto the backend.
    fn prepare_object<A: Api>(
        &self,
        api: &A,
        k: usize,
        o: &crate::scene::Object,
        prepared: &mut Prepared,
    ) -> Result<(PreparedObject, Resident<A>), Error> {
        o.mesh.validate()?;
        let kind = api.kind();
        let gpu = self.renderer.gpu();
        let (mesh, reindexed) = match &self.reindex {
            Some(opts) if !o.mesh.indices.is_empty() => {
                let t = Instant::now();
                let r = reindex::reindex(&o.mesh, opts, gpu)?;
                let mut changed = format!(
                    "{} -> {} vertices",
                    r.report.vertices_in, r.report.vertices_out
                );
                if let Some(why) = &r.report.fallback {
                    changed += &format!("; {why}");
                }
                prepared.stages.push(StageReport {
                    stage: "reindex".into(),
                    object: k,
                    backend: if r.report.method.is_gpu() {
                        BackendKind::Cuda
                    } else {
                        BackendKind::Cpu
                    },
                    ms: t.elapsed().as_secs_f64() * 1e3,
                    changed,
                    moved: None,
                });
                (r.mesh, Some(r.report))
            }
            _ => (o.mesh.clone(), None),
        };
        let mut bounds = mesh.bounds();
        let mut wm = WorkingMesh::new(mesh);
        let mut ctx = PassContext::new(kind, gpu, k);
        let normals = Normals::default();
        let order = Order(self.order);
        let user = self.passes.len();
        let defaults: [&dyn MeshPass; 2] = [&normals, &order];
        let passes = self.passes.iter().map(|p| &**p).chain(defaults);
        for (i, pass) in passes.enumerate() {
            // the default normals stage runs only where the mesh has none (lighting needs them)
            if i == user && wm.has_normals() {
                continue;
            }
            // a small mesh on the host stays there (SMALL_MESH_INDICES)
            let small = !wm.on_device()
                && 3 * wm.triangle_count() < crate::backend::SMALL_MESH_INDICES
                && pass.backends().contains(&BackendKind::Cpu);
            let runs_on = if pass.backends().contains(&kind) && !small {
                kind
            } else {
                BackendKind::Cpu
            };
            ctx.backend = runs_on;
            let moves = wm.move_count();
            let t = Instant::now();
            let changed = pass.run(&mut wm, &mut ctx).map_err(|e| match e {
                PassError::Failed { .. } => e,
                other => PassError::Failed {
                    stage: pass.name().into(),
                    object: k,
                    mesh: o.mesh.name.clone(),
                    message: other.to_string(),
                },
            })?;
            let inv = pass.invalidates();
            ctx.invalidate(inv);
            if inv.contains(Derived::NORMALS) {
                wm.clear_normals();
            }
            if inv.contains(Derived::BOUNDS) {
                bounds = None;
            }
            prepared.stages.push(StageReport {
                stage: pass.name().into(),
                object: k,
                backend: runs_on,
                ms: t.elapsed().as_secs_f64() * 1e3,
                changed,
                moved: wm.moves_since(moves).map(|m| {
                    if runs_on != kind {
                        format!("{m} (the stage has no {kind} implementation)")
                    } else {
                        m
                    }
                }),
            });
        }
        if bounds.is_none() {
            bounds = wm.host().map_err(crate::Error::from)?.bounds();
        }
        let (vertices, triangles) = (wm.vertex_count(), wm.triangle_count());
        // the patches' bounds, for per-patch culling (the patch order ran on the host)
        // (asked only with a patching, so a mesh the passes left on the device stays there)
        let patches = if wm.patching().is_some() {
            match wm.host_with_patching()? {
                (m, Some(p)) => crate::patch::PatchBounds::build(m, p).map(Arc::new),
                _ => None,
            }
        } else {
            None
        };
        // the triangles, for frame stages that measure them (host copies of positions and
        // indices alone)
        let triangles_copy = if self.frame_stages().any(|s| s.needs_meshes()) {
            let m = wm.host()?;
            Some(Arc::new(Mesh::new(
                m.name.clone(),
                m.positions.clone(),
                m.indices.clone(),
            )))
        } else {
            None
        };
        let t = Instant::now();
        let layout = self.layout();
        let moves = wm.move_count();
        let mesh = api.resident(&mut wm, layout)?;
        prepared.stages.push(StageReport {
            stage: "resident".into(),
            object: k,
            backend: kind,
            ms: t.elapsed().as_secs_f64() * 1e3,
            changed: match (layout.batches, layout.patches) {
                (None, false) => "shader inputs".into(),
                _ => format!("shader inputs and {layout}"),
            },
            moved: wm.moves_since(moves),
        });
        Ok((
            PreparedObject {
                object: k,
                model: o.transform,
                color: o.color,
                material: o.mesh.material.clone(),
                bounds,
                vertices,
                triangles,
                reindexed,
                patches,
                mesh: triangles_copy,
            },
            Resident {
                mesh,
                queue: Mutex::new(None),
            },
        ))
    }

    fn raster_settings(
        &self,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
    ) -> RasterSettings {
        RasterSettings {
            width,
            height,
            cull: self.cull,
            shading: self.shading,
            light: scene.light,
            eye: camera.eye,
            background: scene.background,
            depth_range: (camera.near, camera.far),
            count_coverage: false,
            lights: if scene.lights.is_empty() {
                raster::Lights::key(&scene.light)
            } else {
                raster::Lights::new(&scene.lights)
            },
            // (the depth mode's colours are made from the depth on the host)
            color_only: self.color_only && self.shading != ShadingMode::Depth,
            baseline_isa: self.baseline_isa,
        }
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
        p.order == self.order && p.layout == self.layout() && p.backend == self.renderer.kind()
    }

    /// Prepares and renders a scene; the frame's notes say what re-indexing removed.
    pub fn render(
        &mut self,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
    ) -> Result<Frame, Error> {
        let prepared = self.prepare(scene)?;
        let mut f = self.render_prepared(&prepared, scene, camera, size, 0.0)?;
        f.notes.extend(prepared.reindex_notes());
        Ok(f)
    }

    /// Renders a prepared scene into a new frame.
    pub fn render_prepared(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
    ) -> Result<Frame, Error> {
        let mut frame = Frame::empty();
        self.render_into(prepared, scene, camera, size, time, &mut frame)?;
        Ok(frame)
    }

    /// Renders a prepared scene into an existing frame, reusing its memory (the viewer prepares
    /// once and renders every frame this way). A scene prepared for another backend, order or
    /// layout is an error: prepare it again.
    pub fn render_into(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        if !self.is_prepared_for(prepared) {
            return Err(Error::Backend(format!(
                "the scene was prepared for the {} backend, {} order and {}; this pipeline needs {}, {} and {}: prepare it again",
                prepared.backend,
                prepared.order,
                prepared.layout,
                self.renderer.kind(),
                self.order,
                self.layout()
            )));
        }
        match (&self.engine, &prepared.residents) {
            (Engine::Cpu(api), Residents::Cpu(r)) => {
                self.frame(api, r, prepared, scene, camera, size, time, frame)
            }
            (Engine::Cuda(api), Residents::Cuda(r)) => {
                self.frame(&**api, r, prepared, scene, camera, size, time, frame)
            }
            _ => Err(Error::Backend(
                "the scene was prepared on another backend: prepare it again".into(),
            )),
        }
    }

    /// Runs the geometry stage alone once over every object of a prepared scene (identity
    /// transforms) and returns the invocation statistics: the shading rates, on the backend.
    pub fn geometry_stats(&self, prepared: &Prepared) -> Result<GeometryStats, Error> {
        if !self.is_prepared_for(prepared) {
            return Err(Error::Backend(
                "the scene was prepared for another backend, order or layout".into(),
            ));
        }
        match (&self.engine, &prepared.residents) {
            (Engine::Cpu(api), Residents::Cpu(r)) => self.shade_all(api, r),
            (Engine::Cuda(api), Residents::Cuda(r)) => self.shade_all(&**api, r),
            _ => Err(Error::Backend(
                "the scene was prepared on another backend: prepare it again".into(),
            )),
        }
    }

    fn shade_all<A: Api>(
        &self,
        api: &A,
        residents: &[Resident<A>],
    ) -> Result<GeometryStats, Error> {
        let mut queues: Vec<_> = residents
            .iter()
            .map(|r| r.queue.lock().unwrap_or_else(|p| p.into_inner()))
            .collect();
        let mut jobs: Vec<ShadeJob<A>> = residents
            .iter()
            .zip(queues.iter_mut())
            .map(|(r, q)| ShadeJob {
                mesh: &r.mesh,
                uniforms: Uniforms::default(),
                queue: &mut **q,
            })
            .collect();
        api.shade(self.strategy, &mut jobs, false)?;
        drop(jobs);
        let shaded: Vec<_> = residents
            .iter()
            .zip(&queues)
            .map(|(r, q)| (&r.mesh, q.as_ref().expect("shaded above")))
            .collect();
        api.stats(&shaded)
    }

    /// The frame, on any backend: frame stages, then every visible object's geometry stage into
    /// its queue, then the raster stage over all of them.
    #[allow(clippy::too_many_arguments)]
    fn frame<A: Api>(
        &self,
        api: &A,
        residents: &[Resident<A>],
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        frame.notes.clear();
        let start = Instant::now();
        let view_proj = camera.view_projection(width as f32 / height.max(1) as f32);
        // each object's model matrix: as prepared, or where the scene's animation puts it now
        let mut models: Vec<glam::Mat4> = prepared.objects.iter().map(|o| o.model).collect();
        if !scene.animation.is_empty() {
            let posed = scene.animation.poses(time, scene.objects.len());
            for (m, o) in models.iter_mut().zip(&prepared.objects) {
                if let Some(Some(p)) = posed.get(o.object) {
                    *m = *p;
                }
            }
        }
        let objects: Vec<ObjectBounds> = prepared
            .objects
            .iter()
            .zip(&models)
            .map(|(o, &model)| ObjectBounds {
                object: o.object,
                bounds: o.bounds.filter(|_| o.triangles > 0),
                model,
                triangles: o.triangles as u64,
                patches: o.patches.clone(),
                mesh: o.mesh.clone(),
            })
            .collect();
        let mut visibility = vec![Visibility::default(); objects.len()];
        let mut stages = Vec::new();
        for s in self.frame_stages() {
            let runs_on = s.runs_on(api.kind(), objects.len());
            let ctx = FrameContext {
                backend: runs_on,
                gpu: self.renderer.gpu(),
                camera,
                view_proj,
                objects: &objects,
                cull: self.cull,
            };
            let before: Vec<u64> = visibility
                .iter()
                .zip(&objects)
                .map(|(v, o)| v.drawn(o.triangles))
                .collect();
            let t = Instant::now();
            s.run(&ctx, &mut visibility)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            check_visibility(s.name(), &visibility, &objects)?;
            let (mut co, mut ct) = (0, 0);
            for ((v, o), b) in visibility.iter().zip(&objects).zip(&before) {
                co += (*b > 0 && !v.visible) as u64;
                ct += b - v.drawn(o.triangles).min(*b);
            }
            stages.push(FrameStageStats {
                stage: s.name().into(),
                backend: Some(runs_on),
                ms,
                culled_objects: co,
                culled_triangles: ct,
            });
        }
        let stages_ms = start.elapsed().as_secs_f64() * 1e3;
        let t_draws = Instant::now();
        api.begin_frame()?;
        let layout = self.layout();
        let rate = self.shading == ShadingMode::ShadingRate;
        // each drawn object: its resident mesh and queue, or a subset of this frame's own
        let mut slots: Vec<Slot<A>> = Vec::new();
        for (k, r) in residents.iter().enumerate() {
            let v = &visibility[k];
            if !v.visible {
                continue;
            }
            let q = r.queue.lock().unwrap_or_else(|p| p.into_inner());
            match &v.keep {
                None => slots.push(Slot::Resident(k, q)),
                Some(keep) => slots.push(Slot::Subset(k, api.subset(&r.mesh, keep, layout)?, q)),
            }
        }
        // every drawn object's geometry stage at once
        let mut jobs: Vec<ShadeJob<A>> = slots
            .iter_mut()
            .map(|s| {
                let (k, mesh, queue) = match s {
                    Slot::Resident(k, q) => (*k, &residents[*k].mesh, &mut **q),
                    Slot::Subset(k, mesh, q) => (*k, &*mesh, &mut **q),
                };
                let model = models[k];
                ShadeJob {
                    mesh,
                    uniforms: Uniforms::new(model, view_proj, camera.eye, time),
                    queue,
                }
            })
            .collect();
        api.shade(self.strategy, &mut jobs, rate)?;
        drop(jobs);
        // blended objects after the opaque ones, far to near (by their bounds' centres), as
        // the raster stage composites them in submission order
        let blended = |k: usize| {
            prepared.objects[k]
                .material
                .as_ref()
                .is_some_and(|m| m.alpha == crate::material::AlphaMode::Blend)
        };
        let slot_object = |s: &Slot<A>| match s {
            Slot::Resident(k, _) | Slot::Subset(k, _, _) => *k,
        };
        if slots.iter().any(|s| blended(slot_object(s))) {
            let distance = |k: usize| {
                let o = &prepared.objects[k];
                o.bounds.map_or(0.0, |(lo, hi)| {
                    models[k]
                        .transform_point3((lo + hi) * 0.5)
                        .distance(camera.eye)
                })
            };
            slots.sort_by(|a, b| {
                let (ka, kb) = (slot_object(a), slot_object(b));
                match (blended(ka), blended(kb)) {
                    (false, false) => std::cmp::Ordering::Equal,
                    (false, true) => std::cmp::Ordering::Less,
                    (true, false) => std::cmp::Ordering::Greater,
                    (true, true) => distance(kb).total_cmp(&distance(ka)),
                }
            });
        }
        let draws: Vec<DrawRef<A>> = slots
            .iter()
            .map(|s| match s {
                Slot::Resident(k, q) => DrawRef {
                    mesh: &residents[*k].mesh,
                    queue: q.as_ref().expect("shaded above"),
                    color: prepared.objects[*k].color,
                    material: prepared.objects[*k].material.as_deref(),
                    model: models[*k],
                },
                Slot::Subset(k, mesh, q) => DrawRef {
                    mesh,
                    queue: q.as_ref().expect("shaded above"),
                    color: prepared.objects[*k].color,
                    material: prepared.objects[*k].material.as_deref(),
                    model: models[*k],
                },
            })
            .collect();
        let settings = self.raster_settings(scene, camera, (width, height));
        let draws_ms = t_draws.elapsed().as_secs_f64() * 1e3;
        let t_raster = Instant::now();
        let mut out = frame.take_output();
        let r = api.raster(&draws, &settings, &mut out);
        frame.put_output(out);
        let geometry_ms = r?;
        let raster_ms = t_raster.elapsed().as_secs_f64() * 1e3;
        let t_stats = Instant::now();
        if self.shading == ShadingMode::Depth {
            raster::normalize_depth(&mut frame.color, &frame.depth, camera.near, camera.far);
        }
        let shaded: Vec<_> = draws.iter().map(|d| (d.mesh, d.queue)).collect();
        let geometry = api.stats(&shaded)?;
        frame.notes = api.notes();
        // one end for the total and the last part, so that the parts lie within the total
        let end = Instant::now();
        frame.stats = FrameStats {
            backend: Some(api.kind()),
            strategy: self.strategy.name(),
            stages,
            geometry,
            raster: frame.stats.raster,
            geometry_ms,
            total_ms: (end - start).as_secs_f64() * 1e3,
            host: HostTimes {
                stages_ms,
                draws_ms,
                raster_ms,
                stats_ms: (end - t_stats).as_secs_f64() * 1e3,
            },
        };
        let total: u64 = objects.iter().map(|o| o.triangles).sum();
        if let Some(why) = nothing_drawn(&frame.stats, total, self.cull) {
            frame.notes.push(why);
        } else if let Some(why) =
            mostly_culled(&frame.stats.raster, self.cull, width as u64 * height as u64)
        {
            frame.notes.push(why);
        }
        Ok(())
    }
}

/// Why a frame drew nothing, when it drew nothing: what dropped the scene's `total` triangles.
fn nothing_drawn(stats: &FrameStats, total: u64, cull: CullMode) -> Option<String> {
    let r = &stats.raster;
    if r.fragments > 0 || total == 0 {
        return None;
    }
    let n = thousands;
    let (_, staged) = stats.culled();
    let faced = match cull {
        CullMode::Front => "faced the camera (front faces are culled): try --cull none",
        _ => "faced away: try --cull none",
    };
    Some(if r.triangles_in == 0 {
        format!(
            "nothing was drawn: the frame stages dropped all {} triangles (outside the view or facing away)",
            n(total)
        )
    } else if r.culled == r.triangles_in {
        format!("nothing was drawn: all {} triangles {faced}", n(r.culled))
    } else if r.rejected == r.triangles_in {
        format!(
            "nothing was drawn: all {} triangles lie outside the view or cover no pixel centre (is the camera looking at the scene?)",
            n(r.rejected)
        )
    } else {
        format!(
            "nothing was drawn: of {} triangles, the frame stages dropped {}, {} {faced}, and {} lie outside the view or cover no pixel centre",
            n(total),
            n(staged),
            n(r.culled),
            n(r.rejected)
        )
    })
}

/// What to say when back-face culling drops most of the triangles in view: a closed mesh shows
/// about half of its faces, so most culled means surfaces seen from their backs, as an open
/// scan is from behind. rxpipe keeps culling on (and a material's doubleSided draws both
/// sides): it says so instead of drawing every open surface two-sided.
///
/// The count of culled triangles also holds those of no area, which is most of them where
/// triangles are smaller than a pixel: said only where the triangles in view average at least
/// half a pixel of the frame's `pixels`.
fn mostly_culled(r: &raster::RasterStats, cull: CullMode, pixels: u64) -> Option<String> {
    let in_view = r.triangles_in.saturating_sub(r.rejected);
    let large = 2 * pixels >= in_view;
    (cull == CullMode::Back && large && in_view >= 16 && r.culled * 4 > in_view * 3).then(|| {
        format!(
            "back-face culling dropped {} of the {} triangles in view ({:.0}%): surfaces seen \
             from their backs (an open mesh from behind?) are not drawn; --cull none draws both \
             sides",
            thousands(r.culled),
            thousands(in_view),
            100.0 * r.culled as f64 / in_view as f64
        )
    })
}

/// `n` with a comma between groups of three digits (2,553).
fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
