//! Distance culling (after gDist): a frame stage that keeps, of every object, only those whose
//! triangles come within a distance of one reference object's triangles, in the world, as the
//! objects stand this frame. The reference object itself always stays. It shows what touches or
//! nearly touches a part (the parts around a selected one, the contacts of a moving one).
//!
//! An object whose world box (its bounds under its transform, on the host) lies farther than the
//! distance from the reference's is beyond with nothing more done. For the others, each object's
//! tree ([`crate::distance::bvh::Bvh`]) is built once, in object space, the first time the stage
//! meets the object; when its transform changes, its positions are transformed and the tree refit
//! ([`crate::distance::placed`]), on the host or on the device. Then whether some pair of
//! triangles lies within the distance: on the host a tolerance query per object, the objects in
//! parallel ([`crate::distance::cpu::within`]: depth first, ending at the first such pair); on
//! the GPU one breadth-first search for all objects at once, one cooperative launch with a
//! barrier of the grid between its levels, an object leaving it once found
//! ([`crate::distance::cuda::Distance::within_many`]). Both compare exact squared distances of
//! the same triangles, computed alike, so both keep the same objects. A pair is searched again
//! only when one of its two objects moved or changed: a still scene costs the stage nothing
//! after its first frame.

pub use super::Placement;
use super::{ArgInfo, Args, FrameContext, FrameStage, PassError, StageInfo, StageKind, Visibility};
#[cfg(feature = "cuda")]
use crate::distance::bvh::Bvh;
#[cfg(feature = "cuda")]
use crate::distance::cuda;
#[cfg(feature = "cuda")]
use crate::distance::placed::check_model;
use crate::distance::placed::{box_gap, world_box, Placed};
use crate::distance::{cpu, DistanceError};
use glam::Mat4;
use rayon::prelude::*;
use rxpipe_core::execution::BackendKind;
use rxpipe_core::mesh::Mesh;
use std::sync::{Arc, Mutex};

/// The distance-culling stage.
pub struct DistanceCull {
    /// the reference object: its index among the scene's objects
    pub to: usize,
    /// the greatest distance at which an object stays (world units)
    pub within: f64,
    /// where the distances are measured
    pub placement: Placement,
    state: Arc<Mutex<State>>,
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "distance",
    kind: StageKind::Frame,
    about: "keeps only the objects whose triangles come within a distance of one object's (gDist: trees refit as objects move)",
    args: &[
        ArgInfo {
            name: "to",
            values: "an object's index in the scene",
            default: "0",
            about: "the reference object, which always stays",
        },
        ArgInfo {
            name: "within",
            values: "a distance >= 0",
            default: "0",
            about: "the greatest least distance at which an object stays (0: touching or crossing it)",
        },
        ArgInfo {
            name: "on",
            values: "auto|cpu|cuda",
            default: "auto",
            about: "where the distances are measured: auto takes the pipeline's backend",
        },
    ],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "only when asked",
};

/// One object's tree, where it is now, and the version of that placement.
struct Entry {
    /// the mesh the tree was built for (its identity tells when the object was prepared again)
    mesh: Arc<Mesh>,
    /// its bounds ([`Mesh::bounds`]), kept for checking each transform on the device (the host
    /// checks in [`Placed::place`])
    #[cfg(feature = "cuda")]
    bounds: Option<(glam::Vec3, glam::Vec3)>,
    at: Where,
    /// bumped each time the object moves
    version: u64,
}

impl Entry {
    /// The transform it is placed under.
    fn model(&self) -> Mat4 {
        match &self.at {
            Where::Host(p) => p.model,
            #[cfg(feature = "cuda")]
            Where::Device { model, .. } => *model,
        }
    }
}

enum Where {
    Host(Placed),
    #[cfg(feature = "cuda")]
    Device {
        mesh: cuda::DeviceMesh,
        model: Mat4,
    },
}

/// What the stage found of one object: whether its least distance to the reference is at most
/// the stage's `within` (squared distances compared, in double precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// some pair of triangles within `within`
    Within,
    /// every pair farther
    Beyond,
}

/// A reach measured, and the placements it was measured between.
#[derive(Clone, Copy)]
struct Measured {
    versions: (u64, u64),
    reach: Reach,
}

#[derive(Default)]
struct State {
    /// per object of the frame (in `FrameContext::objects` order)
    entries: Vec<Option<Entry>>,
    measured: Vec<Option<Measured>>,
    /// the last frame's reaches, for [`Measures`]
    last: Vec<Option<Reach>>,
    next_version: u64,
    /// the GPU's kernels and buffers, kept from frame to frame
    #[cfg(feature = "cuda")]
    gpu: Option<cuda::Distance>,
}

/// What the stage measured in its last frame, per object (in the frame's object order): its
/// reach, or `None` for the reference itself, objects without triangles and objects an earlier
/// stage dropped.
#[derive(Clone)]
pub struct Measures(Arc<Mutex<State>>);

impl Measures {
    /// The last frame's reaches.
    pub fn last(&self) -> Vec<Option<Reach>> {
        let s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.last.clone()
    }
}

impl DistanceCull {
    /// Keeps the objects within `within` of object `to`, measured where `placement` says.
    pub fn new(to: usize, within: f64, placement: Placement) -> DistanceCull {
        DistanceCull {
            to,
            within,
            placement,
            state: Default::default(),
        }
    }

    /// A handle on the distances the stage measures, which stays valid after the stage is
    /// given to a pipeline.
    pub fn measures(&self) -> Measures {
        Measures(self.state.clone())
    }

    pub(crate) fn from_args(a: &Args) -> Result<DistanceCull, PassError> {
        let bad = |arg: &str, v: &str, message: &str| PassError::Argument {
            stage: INFO.name.into(),
            arg: format!("{arg}={v}"),
            message: message.into(),
        };
        let to = match a.get("to") {
            None => 0,
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| bad("to", v, "expected an object's index (0, 1, ...)"))?,
        };
        let within = match a.get("within") {
            None => 0.0,
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|d| d.is_finite() && *d >= 0.0)
                .ok_or_else(|| bad("within", v, "expected a finite distance >= 0"))?,
        };
        let placement = a.placement()?;
        Ok(DistanceCull::new(to, within, placement))
    }
}

impl FrameStage for DistanceCull {
    fn name(&self) -> &str {
        INFO.name
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn runs_on(&self, backend: BackendKind, _objects: usize) -> BackendKind {
        match (backend, self.placement) {
            (BackendKind::Cuda, Placement::Auto | Placement::Cuda) => BackendKind::Cuda,
            _ => BackendKind::Cpu,
        }
    }

    fn needs_meshes(&self) -> bool {
        true
    }

    fn run(&self, ctx: &FrameContext, visible: &mut [Visibility]) -> Result<(), PassError> {
        let failed = |k: usize, e: DistanceError| PassError::Failed {
            stage: INFO.name.into(),
            object: k,
            mesh: ctx.objects[k]
                .mesh
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_default(),
            message: e.to_string(),
        };
        let r = self.reference(ctx)?;
        #[cfg(feature = "cuda")]
        let gpu = match ctx.backend {
            BackendKind::Cuda => Some(ctx.gpu.ok_or_else(no_device)?),
            BackendKind::Cpu => None,
        };
        // (always none: this build has no GPU)
        #[cfg(not(feature = "cuda"))]
        let gpu = ctx.gpu;
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        state.begin(ctx.objects.len());
        let reference_has_triangles = ctx.objects[r]
            .mesh
            .as_ref()
            .is_some_and(|m| m.triangle_count() > 0);
        if !reference_has_triangles {
            return Err(failed(
                r,
                DistanceError::Empty(format!("object {} (the stage's reference)", self.to)),
            ));
        }
        #[cfg(feature = "cuda")]
        if let (Some(g), None) = (gpu, &state.gpu) {
            state.gpu = Some(cuda::Distance::new(g).map_err(|e| failed(r, e))?);
        }
        let near = state.cull_far(ctx, r, self.within, visible);
        state.build_trees(ctx, &near, gpu, &failed)?;
        state.place_moved(ctx, &near, r, &failed)?;
        state.measure(r, &near, self.within, &failed)?;
        // keep what is within reach
        for k in (0..near.len()).filter(|&k| k != r && near[k]) {
            let reach = state.measured[k].expect("measured above").reach;
            state.last[k] = Some(reach);
            if reach == Reach::Beyond {
                visible[k].visible = false;
            }
        }
        Ok(())
    }
}

impl DistanceCull {
    /// The reference object's index in the frame's objects.
    fn reference(&self, ctx: &FrameContext) -> Result<usize, PassError> {
        ctx.objects
            .iter()
            .position(|o| o.object == self.to)
            .ok_or_else(|| PassError::Argument {
                stage: INFO.name.into(),
                arg: format!("to={}", self.to),
                message: format!(
                    "the scene has no prepared object {} (objects: {})",
                    self.to,
                    ctx.objects
                        .iter()
                        .map(|o| o.object.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }
}

/// The error of a frame on the CUDA backend without a device.
#[cfg(feature = "cuda")]
fn no_device() -> PassError {
    PassError::Gpu {
        stage: INFO.name.into(),
        source: crate::gpu::GpuError::Limit(
            "the stage runs on the GPU but the pipeline has no device".into(),
        ),
    }
}

/// A stage error for object `k`.
type Failed<'a> = dyn Fn(usize, DistanceError) -> PassError + Sync + 'a;

impl State {
    /// Readies the records for a frame of `n` objects.
    fn begin(&mut self, n: usize) {
        self.entries.resize_with(n, || None);
        self.measured.resize_with(n, || None);
        self.last.clear();
        self.last.resize(n, None);
    }

    /// The objects that take part and are near: the reference, and every other object still
    /// drawn with triangles whose world box (its bounds under its transform, on the host) lies
    /// within `within` of the reference's. The others taking part are beyond with no tree
    /// placed or searched: a far object that moves costs eight corners a frame on either
    /// backend.
    fn cull_far(
        &mut self,
        ctx: &FrameContext,
        r: usize,
        within: f64,
        visible: &mut [Visibility],
    ) -> Vec<bool> {
        let world_box = |k: usize| {
            let o = &ctx.objects[k];
            o.bounds.map(|b| world_box(b, &o.model))
        };
        let reference_box = world_box(r);
        (0..ctx.objects.len())
            .map(|k| {
                if k == r {
                    return true;
                }
                let has_triangles = ctx.objects[k]
                    .mesh
                    .as_ref()
                    .is_some_and(|m| m.triangle_count() > 0);
                if !(visible[k].visible && has_triangles) {
                    return false;
                }
                let gap = match (&reference_box, world_box(k)) {
                    (Some(a), Some(b)) => box_gap(a, &b),
                    _ => 0.0,
                };
                if gap > within {
                    self.last[k] = Some(Reach::Beyond);
                    visible[k].visible = false;
                }
                gap <= within
            })
            .collect()
    }

    /// Makes a tree for each near object met for the first time (or prepared again, or last
    /// placed on the other side), on the device where the frame has one.
    fn build_trees(
        &mut self,
        ctx: &FrameContext,
        near: &[bool],
        gpu: Option<&Arc<crate::gpu::Gpu>>,
        failed: &Failed,
    ) -> Result<(), PassError> {
        for k in (0..near.len()).filter(|&k| near[k]) {
            let mesh = ctx.objects[k]
                .mesh
                .as_ref()
                .expect("taking part: it has triangles");
            let stale = match &self.entries[k] {
                Some(e) => {
                    !Arc::ptr_eq(&e.mesh, mesh) || matches!(e.at, Where::Host(_)) != gpu.is_none()
                }
                None => true,
            };
            if !stale {
                continue;
            }
            let at = Where::place(gpu, mesh).map_err(|e| failed(k, e))?;
            self.next_version += 1;
            self.entries[k] = Some(Entry {
                mesh: mesh.clone(),
                #[cfg(feature = "cuda")]
                bounds: mesh.bounds(),
                at,
                version: self.next_version,
            });
        }
        Ok(())
    }

    /// Places each near object whose transform changed where it stands this frame (a still
    /// scene wakes no thread): on the host the objects in parallel (each refit is itself
    /// parallel over its leaves), on the device in one call.
    fn place_moved(
        &mut self,
        ctx: &FrameContext,
        near: &[bool],
        r: usize,
        failed: &Failed,
    ) -> Result<(), PassError> {
        let models: Vec<Mat4> = ctx.objects.iter().map(|o| o.model).collect();
        let moving: Vec<(usize, &mut Entry)> = self
            .entries
            .iter_mut()
            .enumerate()
            .filter_map(|(k, e)| Some((k, e.as_mut()?)))
            .filter(|(k, e)| near[*k] && e.model() != models[*k])
            .collect();
        let moved: Vec<usize> = moving.iter().map(|(k, _)| *k).collect();
        #[cfg(feature = "cuda")]
        if let Some(d) = self.gpu.as_mut() {
            place_on_device(d, moving, &models, r, failed)?;
        } else {
            place_on_host(moving, &models, failed)?;
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = r;
            place_on_host(moving, &models, failed)?;
        }
        for k in moved {
            self.next_version += 1;
            self.entries[k].as_mut().expect("made above").version = self.next_version;
        }
        Ok(())
    }

    /// Measures the near pairs of which one moved or changed since last measured: on the host
    /// the objects in parallel, each a tolerance query (the search ends at the first pair of
    /// triangles within reach); on the device all of them in one search, one launch.
    #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
    fn measure(
        &mut self,
        r: usize,
        near: &[bool],
        cap: f64,
        failed: &Failed,
    ) -> Result<(), PassError> {
        let entries = &self.entries;
        let version = |k: usize| entries[k].as_ref().expect("placed above").version;
        let rv = version(r);
        let stale: Vec<usize> = (0..near.len())
            .filter(|&k| k != r && near[k])
            .filter(|&k| !matches!(self.measured[k], Some(m) if m.versions == (rv, version(k))))
            .collect();
        if stale.is_empty() {
            return Ok(());
        }
        let at = |k: usize| &entries[k].as_ref().expect("placed above").at;
        let within: Vec<bool> = match at(r) {
            Where::Host(a) => stale
                .par_iter()
                .map(|&k| match at(k) {
                    Where::Host(b) => cpu::within(&a.world, &a.tree, &b.world, &b.tree, cap),
                    #[cfg(feature = "cuda")]
                    Where::Device { .. } => unreachable!("every entry is on this frame's side"),
                })
                .collect(),
            #[cfg(feature = "cuda")]
            Where::Device { mesh: a, .. } => {
                let objects: Vec<&cuda::DeviceMesh> = stale
                    .iter()
                    .map(|&k| match at(k) {
                        Where::Device { mesh, .. } => mesh,
                        Where::Host(_) => unreachable!("every entry is on this frame's side"),
                    })
                    .collect();
                let g = self.gpu.as_mut().expect("a device entry has a GPU");
                g.within_many(a, &objects, cap).map_err(|e| failed(r, e))?
            }
        };
        let versions: Vec<(u64, u64)> = stale.iter().map(|&k| (rv, version(k))).collect();
        for ((&k, w), versions) in stale.iter().zip(within).zip(versions) {
            let reach = if w { Reach::Within } else { Reach::Beyond };
            self.measured[k] = Some(Measured { versions, reach });
        }
        Ok(())
    }
}

impl Where {
    /// A mesh's tree made and placed under the identity: on the device where there is one.
    fn place(gpu: Option<&Arc<crate::gpu::Gpu>>, mesh: &Arc<Mesh>) -> Result<Where, DistanceError> {
        match gpu {
            None => Ok(Where::Host(Placed::new(mesh.clone())?)),
            #[cfg(not(feature = "cuda"))]
            Some(g) => match **g {},
            #[cfg(feature = "cuda")]
            Some(g) => {
                let tree = Bvh::build(mesh)?;
                Ok(Where::Device {
                    mesh: cuda::DeviceMesh::placed(g, mesh, &tree)?,
                    model: Mat4::IDENTITY,
                })
            }
        }
    }
}

/// Refits the host trees of the objects that moved, in parallel.
fn place_on_host(
    moving: Vec<(usize, &mut Entry)>,
    models: &[Mat4],
    failed: &Failed,
) -> Result<(), PassError> {
    moving
        .into_par_iter()
        .map(|(k, e)| match &mut e.at {
            Where::Host(p) => p.place(models[k]).map(|_| ()).map_err(|x| failed(k, x)),
            #[cfg(feature = "cuda")]
            Where::Device { .. } => unreachable!("a device entry has a GPU"),
        })
        .collect()
}

/// Refits the device trees of the objects that moved, in one call; each stands where it was
/// placed only once placed (after a failure they are placed again).
#[cfg(feature = "cuda")]
fn place_on_device(
    d: &mut cuda::Distance,
    moving: Vec<(usize, &mut Entry)>,
    models: &[Mat4],
    r: usize,
    failed: &Failed,
) -> Result<(), PassError> {
    let (mut jobs, mut placed_at) = (Vec::new(), Vec::new());
    for (k, e) in moving {
        check_model(&e.mesh.name, e.bounds, &models[k]).map_err(|x| failed(k, x))?;
        match &mut e.at {
            Where::Device { mesh, model } => {
                jobs.push((mesh, models[k]));
                placed_at.push((model, models[k]));
            }
            Where::Host(_) => unreachable!("every entry is on this frame's side"),
        }
    }
    d.place_many(&mut jobs).map_err(|x| failed(r, x))?;
    for (at, model) in placed_at {
        *at = model;
    }
    Ok(())
}
