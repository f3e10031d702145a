//! A scene prepared for one pipeline configuration, object by object.

use crate::backend::cpu::{CpuApi, CpuMesh};
#[cfg(feature = "cuda")]
use crate::backend::cuda::CudaApi;
use crate::backend::{Api, BackendKind};
use crate::geometry::{self, VertexOrder};
use crate::passes::StageReport;
use crate::reindex::ReindexReport;
use glam::Vec3;
use rxpipe_core::mesh::Mesh;
use std::sync::{Arc, Mutex};

/// One object of a prepared scene, as the host sees it.
#[derive(Debug, Clone)]
pub struct PreparedObject {
    /// its index among the scene's objects
    pub object: usize,
    /// object to world (for an instance, the object's transform times the instance's matrix)
    pub model: glam::Mat4,
    /// the instance's own matrix, for an instance of an instanced object: placed by
    /// `transform * instance` wherever the object's transform moves
    pub instance: Option<glam::Mat4>,
    /// linear RGBA
    pub color: [f32; 4],
    /// its material (`None`: the lit mode with `color`)
    pub material: Option<Arc<rxpipe_core::material::Material>>,
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
    /// ([`crate::passes::FrameStage::needs_meshes`])
    pub mesh: Option<Arc<Mesh>>,
}

/// An object (or one instance of it) made resident on a backend, with the queue its frames
/// reuse. The instances of an object share its mesh; each has its own queue.
pub(super) struct Resident<A: Api> {
    pub(super) mesh: Arc<A::Mesh>,
    pub(super) queue: Mutex<Option<A::Queue>>,
}

pub(super) enum Residents {
    Cpu(Vec<Resident<CpuApi>>),
    #[cfg(feature = "cuda")]
    Cuda(Vec<Resident<CudaApi>>),
}

/// A scene prepared for one pipeline configuration: stages run, order applied, batches built,
/// every object resident on the pipeline's backend.
pub struct Prepared {
    /// the objects prepared, in scene order (those a stage failed on are left out)
    pub objects: Vec<PreparedObject>,
    pub(super) residents: Residents,
    /// the objects resident on the pipeline's other GPUs, in their ranks' order (each GPU
    /// holds the whole scene, so that any share of a frame can be drawn on any)
    pub(super) peers: Vec<Residents>,
    /// what every mesh stage did to every object
    pub stages: Vec<StageReport>,
    /// objects left out because a stage failed on them (the others are intact)
    pub failures: Vec<String>,
    pub(super) order: VertexOrder,
    pub(super) layout: geometry::Layout,
    pub(super) backend: BackendKind,
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
            Residents::Cpu(v) => v.get(k).map(|r| &*r.mesh),
            #[cfg(feature = "cuda")]
            Residents::Cuda(_) => None,
        }
    }

    /// The backend the objects are resident on.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }
}
