//! Preparing a scene for a pipeline: the mesh stages on every object, then each made resident
//! on the pipeline's backend.

use super::prepared::{Prepared, PreparedObject, Resident, Residents};
use super::{Engine, Pipeline};
use crate::backend::{Api, BackendKind};
use crate::error::Error;
use crate::passes::{
    Derived, MeshPass, Normals, Order, PassContext, PassError, StageReport, WorkingMesh,
};
use crate::reindex;
use rxpipe_core::mesh::Mesh;
use rxpipe_core::scene::Scene;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A mesh's bounds (`None`: no vertices).
type Bounds = Option<(glam::Vec3, glam::Vec3)>;

/// An object's mesh after the re-indexing stage: the working mesh, its bounds and the stage's
/// report (`None`: not re-indexed).
type Reindexed<'o> = (WorkingMesh<'o>, Bounds, Option<reindex::ReindexReport>);

impl Pipeline {
    /// Runs the mesh stages on every object (re-indexing, the passes, normals where missing, the
    /// vertex order) and makes the results resident on the backend, with the dynamic batches. A
    /// stage that fails on one object leaves that object out (named in
    /// [`Prepared::failures`]) and the others intact; when every object fails, the first
    /// failure is the error.
    ///
    /// On several GPUs every GPU holds the whole scene, each having run the mesh stages itself
    /// (they give the same meshes on every device).
    pub fn prepare(&self, scene: &Scene) -> Result<Prepared, Error> {
        self.check_memory(scene)?;
        let (mut prepared, residents) = self.prepare_with(&self.engine, scene)?;
        prepared.residents = residents;
        for (r, engine) in self.peers.iter().enumerate() {
            let (p, residents) = self.prepare_with(engine, scene)?;
            if p.objects.len() != prepared.objects.len() {
                return Err(Error::Backend(format!(
                    "GPU rank {} prepared {} objects of the scene where rank 0 prepared {}: {}",
                    r + 1,
                    p.objects.len(),
                    prepared.objects.len(),
                    p.failures.join("; ")
                )));
            }
            prepared.peers.push(residents);
        }
        Ok(prepared)
    }

    /// The scene prepared on `engine`, and its residents there.
    fn prepare_with(&self, engine: &Engine, scene: &Scene) -> Result<(Prepared, Residents), Error> {
        match engine {
            Engine::Cpu(api) => {
                let (p, r) = self.prepare_on(api, scene)?;
                Ok((p, Residents::Cpu(r)))
            }
            #[cfg(feature = "cuda")]
            Engine::Cuda(api) => {
                let (p, r) = self.prepare_on(&**api, scene)?;
                Ok((p, Residents::Cuda(r)))
            }
        }
    }

    /// What preparing and drawing `scene` will take of the host's and the device's memory
    /// ([`crate::footprint`]).
    pub fn footprint(&self, scene: &Scene) -> crate::footprint::Footprint {
        // the mesh stages change a mesh on the host (a copy of the scene's) where the pipeline
        // has stages of its own, an order other than the input's, or the mesh has no normals
        let staged = !self.passes.is_empty() || self.order != crate::VertexOrder::Input;
        // (a mesh re-indexed on the GPU stays there: `reindex_on_device`)
        let on_gpu = |m: &Mesh| {
            self.renderer.kind() == BackendKind::Cuda
                && self.renderer.gpu().is_some()
                && self
                    .reindex
                    .is_some_and(|r| reindex::resolve(r.method, m, true).is_gpu())
        };
        let counts: Vec<_> = scene
            .objects
            .iter()
            .map(|o| {
                let c = crate::footprint::Counts::of(&o.mesh);
                c.placed(o.placement_count())
                    .copied(staged || o.mesh.normals.is_none())
                    .stays_on_device(c.stays_on_device && on_gpu(&o.mesh))
            })
            .collect();
        let mut f = crate::footprint::of(
            &counts,
            self.renderer.kind(),
            self.strategy,
            self.reindex.is_some(),
        );
        // frame stages that measure the triangles keep a copy of every object's positions and
        // indices
        if self.frame_stages().any(|s| s.needs_meshes()) {
            f.host += counts
                .iter()
                .map(|c| 12 * c.vertices + 12 * c.triangles)
                .sum::<u64>();
        }
        f
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
        // (the device's free memory, where there is a device and the work needs it)
        #[cfg(feature = "cuda")]
        let device_free = match (self.renderer.gpu(), f.device > 0) {
            (Some(gpu), true) => Some(
                gpu.ctx
                    .mem_get_info()
                    .map_err(|e| Error::Backend(format!("querying the GPU's free memory: {e}")))?
                    .0 as u64,
            ),
            _ => None,
        };
        #[cfg(not(feature = "cuda"))]
        let device_free = None;
        f.check(self.renderer.kind(), device_free, what)?;
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
        self.check_prepared(prepared)?;
        let mut scratch = self.empty_prepared(prepared.backend);
        for &k in objects {
            // (the object's placements: each of its instances)
            let slots: Vec<usize> = (0..prepared.objects.len())
                .filter(|&s| prepared.objects[s].object == k)
                .collect();
            let Some(o) = scene.objects.get(k).filter(|_| !slots.is_empty()) else {
                continue;
            };
            let objs = &mut prepared.objects;
            // (on every GPU the pipeline draws on)
            let engines = std::iter::once(&self.engine).chain(&self.peers);
            let residents = std::iter::once(&mut prepared.residents).chain(&mut prepared.peers);
            for (engine, residents) in engines.zip(residents) {
                match (engine, residents) {
                    (Engine::Cpu(api), Residents::Cpu(r)) => {
                        self.replace_object(api, (k, o), &slots, objs, r, &mut scratch)?
                    }
                    #[cfg(feature = "cuda")]
                    (Engine::Cuda(api), Residents::Cuda(r)) => {
                        self.replace_object(&**api, (k, o), &slots, objs, r, &mut scratch)?
                    }
                    #[cfg(feature = "cuda")]
                    _ => {
                        return Err(Error::Backend(
                            "the scene was prepared on another backend: prepare it again".into(),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Object `k` (`o`) prepared again into its placements' `slots` of `objects` and
    /// `residents`.
    fn replace_object<A: Api>(
        &self,
        api: &A,
        (k, o): (usize, &rxpipe_core::scene::Object),
        slots: &[usize],
        objects: &mut [PreparedObject],
        residents: &mut [Resident<A>],
        scratch: &mut Prepared,
    ) -> Result<(), Error> {
        let placed = self.prepare_object(api, k, o, scratch)?;
        if placed.len() != slots.len() {
            return Err(Error::Backend(format!(
                "object {k} has {} placements where it was prepared with {}: prepare the scene \
                 again",
                placed.len(),
                slots.len()
            )));
        }
        for (&slot, (obj, res)) in slots.iter().zip(placed) {
            (objects[slot], residents[slot]) = (obj, res);
        }
        Ok(())
    }

    /// A prepared scene of no objects yet, for this pipeline on `backend`.
    fn empty_prepared(&self, backend: BackendKind) -> Prepared {
        Prepared {
            objects: Vec::new(),
            residents: Residents::Cpu(Vec::new()),
            peers: Vec::new(),
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
                Ok(placed) => {
                    for (obj, r) in placed {
                        prepared.objects.push(obj);
                        residents.push(r);
                    }
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

    /// One object through the mesh stages onto the backend: a prepared object and a resident
    /// for each placement (each instance of an instanced object, all sharing the one mesh the
    /// stages made, each with a queue of its own).
    fn prepare_object<A: Api>(
        &self,
        api: &A,
        k: usize,
        o: &rxpipe_core::scene::Object,
        prepared: &mut Prepared,
    ) -> Result<Vec<(PreparedObject, Resident<A>)>, Error> {
        o.mesh.validate()?;
        let kind = api.kind();
        let gpu = self.renderer.gpu();
        let (mut wm, mut bounds, reindexed) = self.reindex_object(o, k, kind, prepared)?;
        let mut ctx = PassContext::new(kind, gpu, k);
        if !self.run_mesh_passes(&mut wm, &mut ctx, (k, &o.mesh.name), kind, prepared)? {
            bounds = None;
        }
        if bounds.is_none() {
            bounds = wm.host().map_err(crate::error::Error::from)?.bounds();
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
        let mut steps = crate::passes::Steps::default();
        let mesh = api.resident(&mut wm, layout, o.placement_count(), &mut steps)?;
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
            steps: steps.list,
        });
        let mesh = Arc::new(mesh);
        let instances: Vec<Option<glam::Mat4>> = match &o.instances {
            None => vec![None],
            Some(list) => list.iter().copied().map(Some).collect(),
        };
        Ok(instances
            .into_iter()
            .map(|instance| {
                (
                    PreparedObject {
                        object: k,
                        model: o.transform * instance.unwrap_or(glam::Mat4::IDENTITY),
                        instance,
                        color: o.color,
                        material: o.mesh.material.clone(),
                        bounds,
                        vertices,
                        triangles,
                        reindexed: reindexed.clone(),
                        patches: patches.clone(),
                        mesh: triangles_copy.clone(),
                    },
                    Resident {
                        mesh: mesh.clone(),
                        queue: Mutex::new(None),
                    },
                )
            })
            .collect())
    }

    /// Object `k`'s mesh re-indexed where the pipeline asks for it (reported as a stage), with
    /// its bounds and the re-indexing's report; else the mesh as it is. On the CUDA backend
    /// (`kind`) a mesh re-indexed on the GPU stays there for the stages after.
    fn reindex_object<'o>(
        &self,
        o: &'o rxpipe_core::scene::Object,
        k: usize,
        kind: BackendKind,
        prepared: &mut Prepared,
    ) -> Result<Reindexed<'o>, Error> {
        let opts = match &self.reindex {
            Some(opts) if !o.mesh.indices.is_empty() => opts,
            // (the scene's mesh as it is: copied only where a pass changes it)
            _ => return Ok((WorkingMesh::borrowing(&o.mesh), o.mesh.bounds(), None)),
        };
        let t = Instant::now();
        let (wm, bounds, report) = match self.reindex_on_device(&o.mesh, opts, kind)? {
            Some(done) => done,
            None => {
                let r = reindex::reindex(&o.mesh, opts, self.renderer.gpu())?;
                let bounds = r.mesh.bounds();
                (WorkingMesh::new(r.mesh), bounds, r.report)
            }
        };
        let mut changed = format!("{} -> {} vertices", report.vertices_in, report.vertices_out);
        if let Some(why) = &report.fallback {
            changed += &format!("; {why}");
        }
        prepared.stages.push(StageReport {
            stage: "reindex".into(),
            object: k,
            backend: if report.method.is_gpu() {
                BackendKind::Cuda
            } else {
                BackendKind::Cpu
            },
            ms: t.elapsed().as_secs_f64() * 1e3,
            changed,
            moved: None,
            steps: report.steps.clone(),
        });
        Ok((wm, bounds, Some(report)))
    }

    /// `mesh` re-indexed on the GPU and left there, where the backend (`kind`) is CUDA, the
    /// method one of the GPU's and the mesh's attributes ones its device arrays hold; `None`
    /// where not, or where the GPU cannot (its memory, its limits): then [`reindex::reindex`]
    /// decides, and says why it fell back.
    fn reindex_on_device(
        &self,
        mesh: &Mesh,
        opts: &reindex::ReindexOptions,
        kind: BackendKind,
    ) -> Result<Option<(WorkingMesh<'static>, Bounds, reindex::ReindexReport)>, Error> {
        #[cfg(feature = "cuda")]
        if let (BackendKind::Cuda, Some(gpu)) = (kind, self.renderer.gpu()) {
            use crate::gpu::GpuError;
            use crate::reindex::{cuda, ReindexError};
            let method = reindex::resolve(opts.method, mesh, true);
            if let (Some(m), true) = (cuda::GpuMethod::of(method), cuda::stays_on_device(mesh)) {
                return match cuda::reindex_on_device(gpu, mesh, opts.weld, m) {
                    Ok(r) => {
                        let mut wm = WorkingMesh::new(mesh.shell());
                        wm.set_device(r.arrays);
                        Ok(Some((wm, r.bounds, r.report)))
                    }
                    Err(ReindexError::Gpu(GpuError::OutOfMemory { .. } | GpuError::Limit(_))) => {
                        Ok(None)
                    }
                    Err(e) => Err(e.into()),
                };
            }
        }
        let _ = (mesh, opts, kind);
        Ok(None)
    }

    /// The mesh passes, the pipeline's and then the default ones (normals where the mesh has
    /// none, the vertex order), over object `k`'s working mesh (`name`, for errors), each on the
    /// backend that runs it (the pipeline's, `kind`, where the pass has it) and reported as a
    /// stage. Returns whether the mesh's bounds still hold.
    fn run_mesh_passes(
        &self,
        wm: &mut WorkingMesh,
        ctx: &mut PassContext,
        (k, name): (usize, &str),
        kind: BackendKind,
        prepared: &mut Prepared,
    ) -> Result<bool, Error> {
        let mut bounds_kept = true;
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
            let changed = pass.run(wm, ctx).map_err(|e| match e {
                PassError::Failed { .. } => e,
                other => PassError::Failed {
                    stage: pass.name().into(),
                    object: k,
                    mesh: name.to_string(),
                    message: other.to_string(),
                },
            })?;
            let inv = pass.invalidates();
            ctx.invalidate(inv);
            if inv.contains(Derived::NORMALS) {
                wm.clear_normals();
            }
            if inv.contains(Derived::BOUNDS) {
                bounds_kept = false;
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
                steps: Vec::new(),
            });
        }
        Ok(bounds_kept)
    }
}
