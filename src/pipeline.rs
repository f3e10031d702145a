//! The pipeline: scene -> passes -> vertex order -> geometry stage -> raster stage -> frame.

use crate::geometry::cuda::{CudaGeometry, CudaShader, DeviceMesh, DeviceQueue};
use crate::geometry::{
    self, Batches, GeometryStats, ShadedGeometry, Strategy, Transform, Uniforms, VertexIn,
    VertexOrder, VertexShader,
};
use crate::gpu::Gpu;
use crate::io::scene::{Camera, Scene};
use crate::passes::{Normals, Pass};
use crate::raster::cuda::{CudaRaster, GpuDraw};
use crate::raster::{self, CullMode, Draw, RasterSettings, RasterStats, ShadingMode};
use crate::reindex::{self, ReindexOptions, ReindexReport};
use crate::Error;
use glam::Mat4;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where stages run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// CUDA when a device and NVRTC load, otherwise the CPU
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl Backend {
    pub fn parse(s: &str) -> Option<Backend> {
        Some(match s.to_ascii_lowercase().as_str() {
            "auto" => Backend::Auto,
            "cpu" => Backend::Cpu,
            "cuda" | "gpu" => Backend::Cuda,
            _ => return None,
        })
    }
}

/// The chosen backend, made once and shared by pipelines.
#[derive(Debug, Clone)]
pub struct Renderer {
    backend: Backend,
    /// the device, with the CUDA backend
    gpu: Option<Arc<Gpu>>,
    /// why the renderer chose what it chose, for the user
    pub notice: String,
}

impl Renderer {
    /// Chooses a backend. `Auto` takes CUDA when a device and NVRTC can be used and otherwise
    /// falls back to the CPU, saying why; `Cuda` without a usable device is an error. With CUDA the
    /// geometry and raster stages run on the GPU.
    pub fn new(backend: Backend) -> Result<Renderer, Error> {
        match backend {
            Backend::Cpu => Ok(Renderer {
                backend: Backend::Cpu,
                gpu: None,
                notice: "backend: cpu".into(),
            }),
            Backend::Auto => match Gpu::new() {
                Ok(gpu) => Ok(Renderer::from_gpu(gpu)),
                Err(e) => Ok(Renderer {
                    backend: Backend::Cpu,
                    gpu: None,
                    notice: format!("backend: cpu ({e})"),
                }),
            },
            Backend::Cuda => Ok(Renderer::from_gpu(Gpu::new()?)),
        }
    }

    /// The CUDA backend on a device already opened.
    pub fn from_gpu(gpu: Arc<Gpu>) -> Renderer {
        Renderer {
            backend: Backend::Cuda,
            notice: format!(
                "backend: cuda, {} (geometry and rasterisation on the GPU)",
                gpu.name
            ),
            gpu: Some(gpu),
        }
    }

    /// The device, with the CUDA backend.
    pub fn gpu(&self) -> Option<&Arc<Gpu>> {
        self.gpu.as_ref()
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }
}

/// Settings of a pipeline; see [`PipelineBuilder`].
pub struct Pipeline {
    pub strategy: Strategy,
    pub order: VertexOrder,
    pub shading: ShadingMode,
    pub cull: CullMode,
    shader: Arc<dyn VertexShader>,
    passes: Vec<Box<dyn Pass>>,
    /// the re-indexing every object goes through first (`None`: meshes are used as given)
    pub reindex: Option<ReindexOptions>,
    renderer: Renderer,
    /// the geometry and raster kernels (and the raster's buffers), with the CUDA backend
    cuda: Option<GpuStages>,
}

/// The stages a pipeline runs on the GPU.
struct GpuStages {
    geometry: CudaGeometry,
    raster: Mutex<CudaRaster>,
}

/// Builds a [`Pipeline`]; every knob has a default.
///
/// ```
/// use rxpipe::{Backend, Pipeline, Renderer, Strategy};
/// let renderer = Renderer::new(Backend::Cpu)?;
/// let mut pipeline = Pipeline::builder()
///     .strategy(Strategy::parse("hash").unwrap())
///     .pass(rxpipe::passes::Normals::default())
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
    passes: Vec<Box<dyn Pass>>,
    reindex: Option<ReindexOptions>,
}

impl Default for PipelineBuilder {
    fn default() -> Self {
        PipelineBuilder {
            strategy: Strategy::parse("hash").unwrap(),
            order: VertexOrder::Input,
            shading: ShadingMode::Lit,
            cull: CullMode::Back,
            shader: Arc::new(Transform),
            cuda_shader: None,
            custom_cpu_shader: false,
            passes: Vec::new(),
            reindex: Some(ReindexOptions::default()),
        }
    }
}

impl PipelineBuilder {
    pub fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    pub fn order(mut self, o: VertexOrder) -> Self {
        self.order = o;
        self
    }
    pub fn shading(mut self, m: ShadingMode) -> Self {
        self.shading = m;
        self
    }
    pub fn cull(mut self, c: CullMode) -> Self {
        self.cull = c;
        self
    }
    /// The vertex shader of the CPU backend (the standard transform by default).
    pub fn vertex_shader(mut self, s: impl VertexShader + 'static) -> Self {
        self.shader = Arc::new(s);
        self.custom_cpu_shader = true;
        self
    }
    /// The vertex shader of the CUDA backend: CUDA C defining `vs_main` (see
    /// [`CudaShader`]). Give the CPU version with [`PipelineBuilder::vertex_shader`]; a pipeline
    /// with a custom CPU shader and no CUDA one runs its geometry on the CPU.
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
    pub fn pass(mut self, p: impl Pass + 'static) -> Self {
        self.passes.push(Box::new(p));
        self
    }
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
        let shader = match (renderer.gpu(), self.cuda_shader, self.custom_cpu_shader) {
            (Some(gpu), Some(s), _) => Some((gpu, s)),
            (Some(gpu), None, false) => Some((gpu, CudaShader::transform())),
            (None, Some(s), false) => {
                return Err(Error::Backend(format!(
                    "the vertex shader {} is CUDA only; give the CPU backend its own with vertex_shader()",
                    s.name
                )))
            }
            _ => None,
        };
        let cuda = match shader {
            Some((gpu, s)) => Some(GpuStages {
                geometry: CudaGeometry::new(gpu.clone(), s, true)?,
                raster: Mutex::new(CudaRaster::new(gpu.clone())?),
            }),
            None => None,
        };
        Ok(Pipeline {
            strategy: self.strategy,
            order: self.order,
            shading: self.shading,
            cull: self.cull,
            shader: self.shader,
            passes: self.passes,
            reindex: self.reindex,
            renderer: renderer.clone(),
            cuda,
        })
    }
}

/// A scene object after passes and reordering, ready for the geometry stage.
pub struct PreparedObject {
    pub vertices: Vec<VertexIn>,
    pub indices: Vec<u32>,
    pub batches: Option<Batches>,
    pub model: Mat4,
    pub color: [f32; 4],
    /// the inputs on the device and the object's triangle queue, with the CUDA backend
    pub device: Option<(DeviceMesh, Mutex<Option<DeviceQueue>>)>,
}

/// A scene prepared for one pipeline configuration (passes run, order applied, batches built).
pub struct Prepared {
    pub objects: Vec<PreparedObject>,
    /// what re-indexing removed from each object (empty when it is off)
    pub reindexed: Vec<ReindexReport>,
    order: VertexOrder,
    limits: Option<(u32, u32)>,
}

impl Prepared {
    /// One line per object whose re-indexing removed something.
    pub fn reindex_notes(&self) -> Vec<String> {
        self.reindexed
            .iter()
            .enumerate()
            .filter(|(_, r)| r.vertices_out != r.vertices_in || r.fallback.is_some())
            .map(|(k, r)| format!("object {k}: {r}"))
            .collect()
    }
}

/// Per-frame statistics: geometry invocations, raster counts and stage times.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct FrameStats {
    pub strategy: &'static str,
    pub geometry: GeometryStats,
    pub raster: RasterStats,
    pub geometry_ms: f64,
    pub total_ms: f64,
}

impl std::fmt::Display for FrameStats {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} triangles, {} invocations (ASR {:.3}, ideal {:.3}, strategy {}), {} rasterised, {} fragments; geometry {:.2} ms, setup {:.2} ms, binning {:.2} ms, raster {:.2} ms, total {:.2} ms",
            self.geometry.triangles,
            self.geometry.invocations,
            self.geometry.asr(),
            self.geometry.ideal_asr(),
            self.strategy,
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
    pub width: u32,
    pub height: u32,
    pub color: Vec<u8>,
    pub depth: Vec<f32>,
    /// fragments covering each pixel before the depth test, when requested
    pub coverage: Option<Vec<u32>>,
    pub stats: FrameStats,
    /// what the renderer had to adapt for this frame (GPU buffers that grew), for the user
    pub notes: Vec<String>,
    /// geometry and raster working memory, reused by the next frame rendered into this one
    shaded: Vec<ShadedGeometry>,
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
            shaded: Vec::new(),
            scratch: raster::Scratch::default(),
        }
    }

    /// Writes the colour buffer as PNG (to a temporary name first, then renamed into place).
    pub fn save_png(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::image::save_png(path.as_ref(), self.width, self.height, &self.color)
    }
}

impl Pipeline {
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    pub fn set_shader(&mut self, s: Arc<dyn VertexShader>) {
        self.shader = s;
    }

    /// Runs the passes and the vertex order on every object and builds the dynamic batches.
    pub fn prepare(&self, scene: &Scene) -> Result<Prepared, Error> {
        let mut objects = Vec::with_capacity(scene.objects.len());
        let mut reindexed = Vec::new();
        let normals = Normals::default();
        for o in &scene.objects {
            o.mesh.validate()?;
            let mut m = match &self.reindex {
                Some(opts) if !o.mesh.indices.is_empty() => {
                    let r = reindex::reindex(&o.mesh, opts, self.renderer.gpu())?;
                    reindexed.push(r.report);
                    r.mesh
                }
                _ => o.mesh.clone(),
            };
            for p in &self.passes {
                p.run(&mut m)?;
            }
            // lighting needs normals: compute smooth ones when no pass provided them
            normals.run(&mut m)?;
            self.order.arrange(&mut m);
            let indices = std::mem::take(&mut m.indices);
            let vertices = VertexIn::from_mesh(&m);
            let limits = self.strategy.dynamic_limits();
            // with the CUDA backend the batches are built on the GPU, else on the CPU
            let (batches, device) = match self.cuda.as_ref().map(|g| &g.geometry) {
                Some(c) => {
                    let mut dm = DeviceMesh::upload(&c.gpu, &vertices, &indices, None)?;
                    if let Some((mi, mv)) = limits {
                        dm.build_batches(&c.gpu, mi, mv)?;
                    }
                    (None, Some((dm, Mutex::new(None))))
                }
                None => match limits {
                    Some((mi, mv)) => (
                        Some(Batches::build(&indices, m.vertex_count(), mi, mv)?),
                        None,
                    ),
                    None => (None, None),
                },
            };
            objects.push(PreparedObject {
                vertices,
                indices,
                batches,
                model: o.transform,
                color: o.color,
                device,
            });
        }
        Ok(Prepared {
            objects,
            reindexed,
            order: self.order,
            limits: self.strategy.dynamic_limits(),
        })
    }

    /// The whole frame on the GPU: each object's geometry stage into its device queue, the raster
    /// stage over all queues, and one download of colour and depth.
    #[allow(clippy::too_many_arguments)]
    fn render_gpu(
        &self,
        stages: &GpuStages,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        let start = Instant::now();
        let view_proj = camera.view_projection(width as f32 / height.max(1) as f32);
        let c = &stages.geometry;
        let mut rast = stages.raster.lock().unwrap_or_else(|p| p.into_inner());
        rast.mark_start()?;
        let mut queues = Vec::with_capacity(prepared.objects.len());
        for o in &prepared.objects {
            let Some((dm, queue)) = &o.device else {
                return Err(Error::Backend(
                    "an object was prepared without the GPU".into(),
                ));
            };
            let u = Uniforms::new(o.model, view_proj, camera.eye, time);
            let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
            if q.as_ref().is_none_or(|q| q.strategy != self.strategy) {
                *q = Some(c.queue(dm, self.strategy)?);
            }
            let qm = q.as_mut().unwrap();
            c.reset_counts(qm)?;
            c.enqueue(self.strategy, dm, &u, qm)?;
            c.sum_counts(qm, dm.vertex_count)?;
            queues.push(q);
        }
        let draws: Vec<GpuDraw> = queues
            .iter()
            .zip(&prepared.objects)
            .map(|(q, o)| {
                let q = q.as_ref().expect("made above");
                let dm = &o.device.as_ref().expect("checked above").0;
                GpuDraw {
                    queue: q,
                    triangles: dm.index_count / 3,
                    color: o.color,
                    rate: (self.shading == ShadingMode::ShadingRate).then_some((dm, &q.counts)),
                }
            })
            .collect();
        let settings = self.raster_settings(scene, camera, (width, height));
        let mut out = self.take_output(frame);
        let r = rast.render(&draws, &settings, &mut out);
        Self::put_output(frame, out);
        r?;
        let mut gstats = GeometryStats::default();
        for (q, o) in queues.iter().zip(&prepared.objects) {
            let q = q.as_ref().expect("made above");
            let dm = &o.device.as_ref().expect("checked above").0;
            gstats.add(&GeometryStats {
                invocations: c.gpu.download(&q.total, 1)?[0],
                triangles: (dm.index_count / 3) as u64,
                unique_vertices: dm.unique_vertices as u64,
            });
        }
        frame.notes = rast.grown.clone();
        frame.stats = FrameStats {
            strategy: self.strategy.name(),
            geometry: gstats,
            raster: frame.stats.raster,
            geometry_ms: rast.times.before_ms,
            total_ms: start.elapsed().as_secs_f64() * 1e3,
        };
        Ok(())
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
        }
    }

    /// The frame's buffers as a raster target (given back with [`Pipeline::put_output`]).
    fn take_output(&self, frame: &mut Frame) -> raster::RasterOutput {
        raster::RasterOutput {
            width: frame.width,
            height: frame.height,
            color: std::mem::take(&mut frame.color),
            depth: std::mem::take(&mut frame.depth),
            coverage: frame.coverage.take(),
            stats: Default::default(),
            scratch: std::mem::take(&mut frame.scratch),
        }
    }

    fn put_output(frame: &mut Frame, out: raster::RasterOutput) {
        frame.width = out.width;
        frame.height = out.height;
        frame.color = out.color;
        frame.depth = out.depth;
        frame.coverage = out.coverage;
        frame.scratch = out.scratch;
        frame.stats.raster = out.stats;
    }

    /// Whether a prepared scene still matches this pipeline's order and batch limits.
    pub fn is_prepared_for(&self, p: &Prepared) -> bool {
        p.order == self.order && p.limits == self.strategy.dynamic_limits()
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
        (width, height): (u32, u32),
        time: f32,
    ) -> Result<Frame, Error> {
        let mut frame = Frame::empty();
        self.render_into(prepared, scene, camera, (width, height), time, &mut frame)?;
        Ok(frame)
    }

    /// Renders a prepared scene into an existing frame, reusing its memory (the viewer prepares
    /// once and renders every frame this way).
    pub fn render_into(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        if let Some(stages) = &self.cuda {
            if prepared.objects.iter().all(|o| o.device.is_some()) {
                return self.render_gpu(
                    stages,
                    prepared,
                    scene,
                    camera,
                    (width, height),
                    time,
                    frame,
                );
            }
        }
        frame.notes.clear();
        let start = Instant::now();
        let view_proj = camera.view_projection(width as f32 / height.max(1) as f32);
        // the previous frame's geometry buffers are reused
        let mut shaded = std::mem::take(&mut frame.shaded);
        shaded.resize_with(prepared.objects.len(), Default::default);
        let mut gstats = GeometryStats::default();
        for (o, g) in prepared.objects.iter().zip(shaded.iter_mut()) {
            let u = Uniforms::new(o.model, view_proj, camera.eye, time);
            let batches = o
                .batches
                .as_ref()
                .filter(|_| self.is_prepared_for(prepared));
            geometry::cpu::run_into(
                self.strategy,
                &o.vertices,
                &o.indices,
                batches,
                &*self.shader,
                &u,
                g,
            )?;
            if self.shading == ShadingMode::ShadingRate {
                let counts = g.invocations_per_vertex(o.vertices.len());
                for (v, &s) in g.vertices.iter_mut().zip(&g.sources) {
                    v.extra = counts[s as usize] as f32;
                }
            }
            gstats.add(&g.stats);
        }
        let geometry_ms = start.elapsed().as_secs_f64() * 1e3;
        let draws: Vec<Draw> = shaded
            .iter()
            .zip(&prepared.objects)
            .map(|(g, o)| Draw {
                geometry: g,
                color: o.color,
            })
            .collect();
        let settings = self.raster_settings(scene, camera, (width, height));
        let mut out = self.take_output(frame);
        let r = raster::rasterize_into(&draws, &settings, &mut out);
        Self::put_output(frame, out);
        drop(draws);
        frame.shaded = shaded;
        r?;
        frame.stats = FrameStats {
            strategy: self.strategy.name(),
            geometry: gstats,
            raster: frame.stats.raster,
            geometry_ms,
            total_ms: start.elapsed().as_secs_f64() * 1e3,
        };
        Ok(())
    }
}
