//! Pluggable stages: mesh passes, run when a scene is prepared, and frame stages, run every frame
//! before the geometry stage.
//!
//! - A [`MeshPass`] takes one object's mesh ([`WorkingMesh`], on the host or, with CUDA, on the
//!   device) and changes it: it may change the topology, and says which derived data it
//!   invalidates ([`Derived`]) so that normals, adjacency, vertex order and batches are rebuilt
//!   after it and not before. It gets a [`PassContext`]: the backend, the device when there is
//!   one, and derived data built on first use and cached until a pass invalidates it.
//! - A [`FrameStage`] sees the camera and every object's bounds and may drop objects, or ranges
//!   of their triangles, from the frame ([`FrameContext`], [`Visibility`]); the frustum stage is
//!   the first.
//!
//! Every stage reports which backend ran it, how long it took and what it changed
//! ([`StageReport`], [`FrameStageStats`]). A pass with only a CPU implementation still runs with
//! the CUDA backend: the mesh is moved to the host and the report says so.
//!
//! Stages are chosen by name with arguments, `NAME[:ARG[:ARG...]]` where an argument is
//! `key=value` or a bare value for the stage's first argument (`normals:angle`,
//! `normals:mode=flat:overwrite=no`); [`registry`] lists them and [`parse`] builds one.
//!
//! ```
//! use rxpipe::passes::{self, Stage};
//! let Stage::Mesh(p) = passes::parse("normals:angle")? else { unreachable!() };
//! assert_eq!(p.name(), "normals");
//! assert!(passes::parse("normals:mode=sideways").is_err());
//! # Ok::<(), rxpipe::passes::PassError>(())
//! ```

pub mod distance_cull;
pub mod envelope;
pub mod frustum;
pub mod normals;
mod order;
pub mod patch_cull;
pub mod simplify;
pub mod smooth;
pub mod subdivide;
mod working;

pub use distance_cull::DistanceCull;
pub use envelope::Envelope;
pub use frustum::Frustum;
pub use normals::{Normals, NormalsMode, NormalsVia};
pub use order::Order;
pub use patch_cull::PatchCull;
pub use rxpipe_core::execution::{StepTime, Steps};
pub use simplify::Simplify;
pub use smooth::{Smooth, SmoothMethod};
pub use subdivide::Subdivide;
#[cfg(feature = "cuda")]
pub use working::DeviceAttributes;
pub use working::WorkingMesh;

use crate::gpu::Gpu;
use glam::{Mat4, Vec3};
use rxpipe_core::execution::BackendKind;
use rxpipe_core::scene::Camera;
use std::sync::Arc;

/// Errors of the stages and of choosing them.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("unknown stage '{name}' (stages: {known})")]
    /// A stage name nobody registered; `known` lists the registered ones.
    Unknown {
        /// the name asked for
        name: String,
        /// the registered names
        known: String,
    },
    #[error("stage '{stage}': bad argument '{arg}': {message}")]
    /// An argument a stage does not take, or a value it does not accept.
    Argument {
        /// the stage
        stage: String,
        /// the argument as given
        arg: String,
        /// what is wrong and what is expected
        message: String,
    },
    #[error("stage '{stage}' on object {object} ('{mesh}'): {message}")]
    /// A stage failed on one object.
    Failed {
        /// the stage
        stage: String,
        /// the object's index in the scene
        object: usize,
        /// the object's mesh name
        mesh: String,
        /// what went wrong
        message: String,
    },
    #[error("stage '{stage}': {source}")]
    /// A GPU error met by a stage.
    Gpu {
        /// the stage
        stage: String,
        #[source]
        /// the GPU's error
        source: crate::gpu::GpuError,
    },
}

impl PassError {
    /// A GPU error met by `stage`.
    pub fn gpu(stage: &str) -> impl FnOnce(crate::gpu::GpuError) -> PassError + '_ {
        move |source| PassError::Gpu {
            stage: stage.into(),
            source,
        }
    }
}

/// Derived data a mesh pass can invalidate (a small bit set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Derived(u8);

impl Derived {
    /// nothing
    pub const NONE: Derived = Derived(0);
    /// vertex normals (a pass that moves positions invalidates them)
    pub const NORMALS: Derived = Derived(1);
    /// vertex-face adjacency and patches: any change of the index buffer
    pub const ADJACENCY: Derived = Derived(2);
    /// object bounds (a pass that moves positions invalidates them)
    pub const BOUNDS: Derived = Derived(4);
    /// everything built from the topology and the positions
    pub const ALL: Derived = Derived(7);

    /// Whether every flag of `o` is set here.
    pub fn contains(self, o: Derived) -> bool {
        self.0 & o.0 == o.0
    }
}

impl std::ops::BitOr for Derived {
    type Output = Derived;
    fn bitor(self, o: Derived) -> Derived {
        Derived(self.0 | o.0)
    }
}

/// What one pass is given besides its mesh: the backend, the device (with CUDA) and the derived
/// data of the object, built on first use and cached until a pass invalidates it.
pub struct PassContext<'a> {
    /// where the pass runs
    pub backend: BackendKind,
    /// the device, with the CUDA backend
    pub gpu: Option<&'a Arc<Gpu>>,
    /// the object's index in the scene, for messages
    pub object: usize,
    adjacency: Option<Arc<rxpipe_core::mesh::VertexFaces>>,
    patches: Option<Arc<crate::patch::PatchData>>,
}

impl<'a> PassContext<'a> {
    /// A context for one object.
    pub fn new(backend: BackendKind, gpu: Option<&'a Arc<Gpu>>, object: usize) -> Self {
        PassContext {
            backend,
            gpu,
            object,
            adjacency: None,
            patches: None,
        }
    }

    /// The vertex-face adjacency of `mesh` (built now, or the cached one).
    pub fn adjacency(
        &mut self,
        mesh: &rxpipe_core::mesh::Mesh,
    ) -> Arc<rxpipe_core::mesh::VertexFaces> {
        self.adjacency
            .get_or_insert_with(|| {
                Arc::new(rxpipe_core::mesh::VertexFaces::build(
                    &mesh.indices,
                    mesh.vertex_count(),
                ))
            })
            .clone()
    }

    /// The RXMesh patch data of `mesh` (built now, or the cached one): from `patching` when the
    /// patch order left one for the index buffer as it is, else from a patching of 512 faces per
    /// patch made now on the CPU; patches too large for a block's shared memory split
    /// ([`crate::patch::fit`]).
    pub fn patches(
        &mut self,
        mesh: &rxpipe_core::mesh::Mesh,
        patching: Option<&crate::patch::Patching>,
    ) -> Result<Arc<crate::patch::PatchData>, crate::patch::PatchError> {
        if let Some(p) = &self.patches {
            return Ok(p.clone());
        }
        let made;
        let patching = match patching {
            Some(p) => p,
            None => {
                made = crate::patch::cpu::patch(mesh, &Default::default())?;
                &made
            }
        };
        // (patches a block's shared memory cannot hold are split, on both backends alike)
        let (_, data) =
            crate::patch::fit(mesh, patching, crate::patch::query::shared::fits_shared)?;
        let data = Arc::new(data);
        self.patches = Some(data.clone());
        Ok(data)
    }

    /// Whether the adjacency is cached (for tests and reports).
    pub fn has_adjacency(&self) -> bool {
        self.adjacency.is_some()
    }

    /// Drops the derived data `d` names.
    pub fn invalidate(&mut self, d: Derived) {
        if d.contains(Derived::ADJACENCY) {
            self.adjacency = None;
            self.patches = None;
        }
    }
}

/// A mesh pass: runs on every object when a scene is prepared.
///
/// The smallest complete pass (docs/architecture.md walks through it): it scales every mesh,
/// on the CPU, and says that normals and bounds are stale after it.
///
/// ```
/// use rxpipe::backend::BackendKind;
/// use rxpipe::passes::{Derived, MeshPass, PassContext, PassError, WorkingMesh};
///
/// struct Scale(f32);
///
/// impl MeshPass for Scale {
///     fn name(&self) -> &str { "scale" }
///     fn backends(&self) -> &'static [BackendKind] { &[BackendKind::Cpu] }
///     fn invalidates(&self) -> Derived { Derived::NORMALS | Derived::BOUNDS }
///     fn run(&self, mesh: &mut WorkingMesh, _: &mut PassContext) -> Result<String, PassError> {
///         let m = mesh.host_mut().map_err(PassError::gpu("scale"))?;
///         for p in &mut m.positions { *p *= self.0; }
///         Ok(format!("scaled by {}", self.0))
///     }
/// }
///
/// let renderer = rxpipe::Renderer::new(rxpipe::Backend::Cpu)?;
/// let pipeline = rxpipe::Pipeline::builder().pass(Scale(2.0)).build(&renderer)?;
/// let scene = rxpipe::Scene::from_meshes("ball", vec![rxpipe::mesh::icosphere(2)]);
/// let prepared = pipeline.prepare(&scene)?;
/// let (lo, hi) = prepared.objects[0].bounds.unwrap();
/// assert!((hi.x - lo.x - 4.0).abs() < 1e-4);
/// assert!(prepared.stages.iter().any(|r| r.stage == "scale" && r.changed == "scaled by 2"));
/// # Ok::<(), rxpipe::Error>(())
/// ```
pub trait MeshPass: Send + Sync {
    /// The stage's name, as [`parse`] knows it.
    fn name(&self) -> &str;
    /// The backends with an implementation; on any other the pass runs on the CPU.
    fn backends(&self) -> &'static [BackendKind];
    /// The derived data this pass makes stale when it changes the mesh.
    fn invalidates(&self) -> Derived;
    /// Runs on one object; returns what it changed, in a few words.
    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError>;
}

/// One object as a frame stage sees it.
#[derive(Debug, Clone)]
pub struct ObjectBounds {
    /// its index among the scene's objects
    pub object: usize,
    /// object-space bounds of the vertices its triangles use (`None`: no triangles)
    pub bounds: Option<(Vec3, Vec3)>,
    /// object to world
    pub model: Mat4,
    /// its triangles (before any frame stage)
    pub triangles: u64,
    /// its patches' bounds, when it was prepared in patch order
    pub patches: Option<Arc<crate::patch::PatchBounds>>,
    /// its triangles in object space after the mesh stages (positions and indices only), when
    /// a frame stage of the pipeline asked for them ([`FrameStage::needs_meshes`])
    pub mesh: Option<Arc<rxpipe_core::mesh::Mesh>>,
}

/// What a frame stage is given: the backend, the device, the camera and the objects.
pub struct FrameContext<'a> {
    /// where the stage runs
    pub backend: BackendKind,
    /// the device, with the CUDA backend
    pub gpu: Option<&'a Arc<Gpu>>,
    /// the frame's camera
    pub camera: &'a Camera,
    /// projection times view, for the frame's aspect ratio
    pub view_proj: Mat4,
    /// every prepared object, in order
    pub objects: &'a [ObjectBounds],
    /// the faces the raster stage culls
    pub cull: crate::raster::CullMode,
}

/// What the frame stages leave of one object for the geometry stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visibility {
    /// whether the object is drawn at all
    pub visible: bool,
    /// when set, only these triangle ranges of the object are drawn: sorted, disjoint, within
    /// its triangles (the frame checks this and refuses a stage that breaks it)
    pub keep: Option<Vec<std::ops::Range<u32>>>,
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility {
            visible: true,
            keep: None,
        }
    }
}

impl Visibility {
    /// Triangles drawn of an object of `triangles` triangles.
    pub fn drawn(&self, triangles: u64) -> u64 {
        match (&self.keep, self.visible) {
            (_, false) => 0,
            (None, true) => triangles,
            (Some(k), true) => k.iter().map(|r| (r.end - r.start) as u64).sum(),
        }
    }
}

/// Where a frame stage with both backends runs (its `on=` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// as the stage decides for the pipeline's backend (the frustum stage: the GPU from
    /// [`frustum::GPU_FROM_OBJECTS`] objects; the distance stage: the pipeline's backend)
    #[default]
    Auto,
    /// on the host
    Cpu,
    /// on the GPU whenever the backend is CUDA
    Cuda,
}

/// A frame stage: runs every frame before the geometry stage and may drop objects or ranges of
/// their triangles.
pub trait FrameStage: Send + Sync {
    /// The stage's name, as it reports it.
    fn name(&self) -> &str;
    /// The backends with an implementation; on any other the stage runs on the CPU.
    fn backends(&self) -> &'static [BackendKind];
    /// Where the stage runs for `objects` objects when the pipeline's backend is `backend` (a
    /// stage may keep small work on the host; the frame reports what this returns). By default
    /// the backend itself when the stage implements it, else the CPU.
    fn runs_on(&self, backend: BackendKind, objects: usize) -> BackendKind {
        let _ = objects;
        if self.backends().contains(&backend) {
            backend
        } else {
            BackendKind::Cpu
        }
    }
    /// Whether the stage needs the objects' triangles ([`ObjectBounds::mesh`]): the pipeline
    /// then keeps a host copy of every prepared object's positions and indices.
    fn needs_meshes(&self) -> bool {
        false
    }
    /// Drops objects (clears `visible`) or narrows the triangle ranges `keep` of objects, one
    /// entry per object of `ctx.objects`; it never brings back what an earlier stage dropped.
    fn run(&self, ctx: &FrameContext, visibility: &mut [Visibility]) -> Result<(), PassError>;
}

/// What one mesh pass did to one object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StageReport {
    /// the stage
    pub stage: String,
    /// the object's index in the scene
    pub object: usize,
    /// the backend that ran it
    pub backend: BackendKind,
    /// wall time in milliseconds
    pub ms: f64,
    /// what it changed, in a few words
    pub changed: String,
    /// where the mesh had to move for it (to the host for a CPU-only pass, to the device)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
    /// where its time went, step by step, where the stage says (making a mesh resident: its
    /// shader inputs, the upload, the batches and their tables)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTime>,
}

/// What one frame stage did in one frame.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FrameStageStats {
    /// the stage
    pub stage: String,
    /// the backend that ran it
    pub backend: Option<BackendKind>,
    /// host wall time in milliseconds (a GPU stage's copies and wait included)
    pub ms: f64,
    /// objects it dropped whole
    pub culled_objects: u64,
    /// triangles it dropped (whole objects and ranges)
    pub culled_triangles: u64,
}

/// A stage built from its name and arguments.
pub enum Stage {
    /// a mesh pass
    Mesh(Arc<dyn MeshPass>),
    /// a frame stage
    Frame(Arc<dyn FrameStage>),
    /// the vertex order, which always runs last among the mesh stages
    Order(crate::geometry::VertexOrder),
}

/// When a stage runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageKind {
    /// when a scene is prepared
    Mesh,
    /// every frame, before the geometry stage
    Frame,
}

/// One argument of a stage.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ArgInfo {
    /// its name (`key=value`)
    pub name: &'static str,
    /// the values it takes
    pub values: &'static str,
    /// what it is when not given
    pub default: &'static str,
    /// what it does
    pub about: &'static str,
}

/// A stage as `rxpipe passes` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StageInfo {
    /// the name `--pass` takes
    pub name: &'static str,
    /// mesh pass or frame stage
    pub kind: StageKind,
    /// what it does
    pub about: &'static str,
    /// its arguments, the first of which may be given bare
    pub args: &'static [ArgInfo],
    /// the backends it has an implementation for
    pub backends: &'static [BackendKind],
    /// whether a pipeline runs it without being asked
    pub default: &'static str,
}

/// Every stage rxpipe knows, in the order they run.
pub fn registry() -> &'static [StageInfo] {
    &[
        simplify::INFO,
        subdivide::INFO,
        envelope::INFO,
        smooth::INFO,
        normals::INFO,
        order::INFO,
        frustum::INFO,
        patch_cull::INFO,
        distance_cull::INFO,
    ]
}

/// Parsed arguments of one stage: `(key, value)` pairs, bare values under the first argument's
/// name, each checked against the stage's [`ArgInfo`].
pub struct Args<'a> {
    stage: &'static StageInfo,
    pairs: Vec<(&'static str, &'a str)>,
}

impl<'a> Args<'a> {
    fn new(stage: &'static StageInfo, args: &[&'a str]) -> Result<Args<'a>, PassError> {
        let mut pairs = Vec::new();
        for a in args {
            let (key, value) = match a.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => match stage.args.first() {
                    Some(first) => (first.name, a.trim()),
                    None => ("", a.trim()),
                },
            };
            let Some(info) = stage.args.iter().find(|i| i.name == key) else {
                let known: Vec<&str> = stage.args.iter().map(|i| i.name).collect();
                return Err(PassError::Argument {
                    stage: stage.name.into(),
                    arg: a.to_string(),
                    message: if known.is_empty() {
                        "this stage takes no arguments".into()
                    } else {
                        format!("unknown argument (arguments: {})", known.join(", "))
                    },
                });
            };
            if pairs.iter().any(|(k, _)| *k == info.name) {
                return Err(PassError::Argument {
                    stage: stage.name.into(),
                    arg: a.to_string(),
                    message: "given twice".into(),
                });
            }
            pairs.push((info.name, value));
        }
        Ok(Args { stage, pairs })
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The value of `key` as one of `choices` (case-insensitive), or `default` when not given.
    pub fn choice<T: Copy>(
        &self,
        key: &str,
        choices: &[(&str, T)],
        default: T,
    ) -> Result<T, PassError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        choices
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(v))
            .map(|(_, t)| *t)
            .ok_or_else(|| PassError::Argument {
                stage: self.stage.name.into(),
                arg: format!("{key}={v}"),
                message: format!(
                    "expected one of {}",
                    choices
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }

    /// The `on=auto|cpu|cuda` argument of a frame stage with both backends.
    pub fn placement(&self) -> Result<Placement, PassError> {
        self.choice(
            "on",
            &[
                ("auto", Placement::Auto),
                ("cpu", Placement::Cpu),
                ("cuda", Placement::Cuda),
            ],
            Placement::Auto,
        )
    }

    /// The `strategy=S` argument of a stage that can run on the geometry stage's strategies
    /// (`None` when not given).
    pub fn strategy(&self) -> Result<Option<crate::geometry::Strategy>, PassError> {
        use crate::geometry::Strategy;
        let Some(v) = self.get("strategy") else {
            return Ok(None);
        };
        Strategy::parse(v)
            .map(Some)
            .ok_or_else(|| PassError::Argument {
                stage: self.stage.name.into(),
                arg: format!("strategy={v}"),
                message: format!("expected one of {}", Strategy::NAMES.join(", ")),
            })
    }

    /// A yes/no argument.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, PassError> {
        self.choice(
            key,
            &[
                ("yes", true),
                ("on", true),
                ("true", true),
                ("no", false),
                ("off", false),
                ("false", false),
            ],
            default,
        )
    }
}

/// Builds a stage from `NAME[:ARG[:ARG...]]`. An unknown name or argument is an error that lists
/// what exists.
pub fn parse(spec: &str) -> Result<Stage, PassError> {
    let mut parts = spec.split(':');
    let name = parts.next().unwrap_or("").trim();
    let args: Vec<&str> = parts.filter(|a| !a.trim().is_empty()).collect();
    let Some(info) = registry()
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(name))
    else {
        return Err(PassError::Unknown {
            name: name.into(),
            known: registry()
                .iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let args = Args::new(info, &args)?;
    match info.name {
        "normals" => Ok(Stage::Mesh(Arc::new(Normals::from_args(&args)?))),
        "simplify" => Ok(Stage::Mesh(Arc::new(Simplify::from_args(&args)?))),
        "smooth" => Ok(Stage::Mesh(Arc::new(Smooth::from_args(&args)?))),
        "subdivide" => Ok(Stage::Mesh(Arc::new(Subdivide::from_args(&args)?))),
        "envelope" => Ok(Stage::Mesh(Arc::new(Envelope::from_args(&args)?))),
        "order" => Ok(Stage::Order(Order::from_args(&args)?.0)),
        "frustum" => Ok(Stage::Frame(Arc::new(Frustum::from_args(&args)?))),
        "patch-cull" => Ok(Stage::Frame(Arc::new(PatchCull))),
        "distance" => Ok(Stage::Frame(Arc::new(DistanceCull::from_args(&args)?))),
        _ => unreachable!("every registered stage is built above"),
    }
}

/// Parses a list of stage specifications, each possibly comma-separated (`--pass a,b --pass c`).
pub fn parse_list<S: AsRef<str>>(specs: &[S]) -> Result<Vec<Stage>, PassError> {
    specs
        .iter()
        .flat_map(|s| {
            s.as_ref()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .map(|s| parse(&s))
        .collect()
}

/// The registry as a table, for `rxpipe passes`.
pub fn describe() -> String {
    let mut s = String::new();
    for i in registry() {
        let backends: Vec<&str> = i.backends.iter().map(|b| b.name()).collect();
        s += &format!(
            "{} ({} stage; backends: {}; {})\n    {}\n",
            i.name,
            match i.kind {
                StageKind::Mesh => "mesh",
                StageKind::Frame => "frame",
            },
            backends.join(", "),
            i.default,
            i.about
        );
        for a in i.args {
            s += &format!(
                "    {}={} (default {}): {}\n",
                a.name, a.values, a.default, a.about
            );
        }
    }
    s
}
