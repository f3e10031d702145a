//! The envelope stage: a mesh's inner or outer simplification envelope (Cohen et al. 1996) at a
//! distance D, built on the geometry stage's strategies as Kenzel et al. (2018, section 5.2)
//! build it.
//!
//! The envelope has the input's topology; each vertex moves along its normal, inwards or
//! outwards, by the largest offset up to D that its program finds safe ([`cpu::SafeOffset`]:
//! a cast along the normal and a clearance test against the input's BVH). That program is one
//! run per vertex of the index stream through the chosen strategy ([`crate::geometry::cpu::process`]
//! on the CPU, the geometry stage's kernels in the processing mode on the GPU with
//! kernels/programs/envelope.cu), so a vertex a batch shares is searched for once: the more the
//! program costs, the more the strategies save.
//!
//! The result is then checked exactly ([`repair`]): no envelope triangle meets the input or an
//! envelope triangle it shares no vertex with; where one does, the offsets of its vertices are
//! halved until none does (after [`repair::SHRINKS`] halvings a vertex stays). Every vertex
//! moves at most D, to the side asked for. Where D cannot be reached, [`EnvelopeReport`] says
//! how far the vertices got (least, median and greatest offset).
//!
//! ```
//! use rxpipe::passes::envelope::{build, Side};
//! let sphere = rxpipe::mesh::icosphere(3);
//! let (outer, report) = build(&sphere, Side::Outer, 0.02, None, None)?;
//! // a unit sphere (diagonal 2 sqrt 3): every vertex 0.069 further out
//! assert_eq!(outer.indices, sphere.indices);
//! assert!(report.offsets.max <= report.distance && report.full == sphere.vertex_count() as u64);
//! assert!((outer.positions[0].length() - 1.0 - report.distance as f32).abs() < 1e-5);
//! # Ok::<(), rxpipe::passes::envelope::EnvelopeError>(())
//! ```

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod repair;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use crate::distance::bvh::Bvh;
use crate::geometry::{GeometryStats, Strategy};
use cpu::{Limit, Record, SafeOffset};
use rxpipe_core::execution::BackendKind;
use rxpipe_core::mesh::Mesh;
use std::sync::Arc;

/// Which envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// along the normals
    Outer,
    /// against them
    Inner,
}

impl Side {
    /// +1 or -1: the sign the normals are taken with.
    pub fn sign(self) -> f64 {
        match self {
            Side::Outer => 1.0,
            Side::Inner => -1.0,
        }
    }

    /// "outer" or "inner".
    pub fn name(self) -> &'static str {
        match self {
            Side::Outer => "outer",
            Side::Inner => "inner",
        }
    }
}

/// The least, median and greatest of the vertices' offsets (in the mesh's units).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// What one envelope took and how far its vertices got.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EnvelopeReport {
    pub side: Side,
    /// D, in the mesh's units
    pub distance: f64,
    /// D as a fraction of the bounding box's diagonal
    pub fraction: f64,
    /// the strategy the program ran through (`None`: each vertex once, the reference)
    pub strategy: Option<String>,
    /// where the program ran
    pub backend: BackendKind,
    /// runs of the program, triangles, distinct vertices
    pub runs: u64,
    pub triangles: u64,
    pub vertices: u64,
    /// the offsets after the repair, over the vertices the triangles name
    pub offsets: Spread,
    /// of those, the vertices that moved the whole distance
    pub full: u64,
    /// and those that stayed where they were
    pub pinned: u64,
    /// what the exact check had to repair
    pub repaired: repair::Repaired,
    /// milliseconds: the program's runs, and the exact check with its repair
    pub program_ms: f64,
    pub check_ms: f64,
    /// on the GPU, the strategy's kernels alone (CUDA events)
    pub kernel_ms: Option<f64>,
}

/// Why an envelope could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    #[error("mesh '{0}' has no triangles: an envelope needs a surface")]
    Empty(String),
    #[error("distance {0}: it must be a fraction of the bounding box's diagonal from 0 to 1")]
    Distance(f64),
    #[error(transparent)]
    Mesh(#[from] rxpipe_core::mesh::MeshError),
    #[error(transparent)]
    Memory(#[from] rxpipe_core::limits::OutOfMemory),
    #[error(transparent)]
    Repair(#[from] repair::RepairError),
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    #[error("{0}")]
    Device(String),
}

/// Host bytes an envelope of a mesh of `v` vertices and `f` triangles holds at its peak beside
/// the input: two BVHs (boxes, order, corners), the adjacency, the streamed records (at most
/// three per triangle, with their sources), the scattered ones, and the envelope's copy of the
/// mesh.
pub fn bytes(v: usize, f: usize) -> u64 {
    let (v, f) = (v as u64, f as u64);
    2 * (24 * 2 * f + 16 * f) + (4 * (v + 1) + 12 * f) + 36 * 3 * f + 32 * v + (12 * v + 12 * f)
}

/// The envelope of `mesh` on `side` at `fraction` of its bounding box's diagonal, its program
/// run through `strategy` (`None`: each vertex once, with no batches: the multi strategy on the
/// GPU) on the GPU where `gpu` is given, else on the CPU; then checked exactly and repaired
/// ([`repair`]). Returns the envelope (the input's topology and attributes, moved positions, no
/// normals) and the report.
pub fn build(
    mesh: &Mesh,
    side: Side,
    fraction: f64,
    strategy: Option<Strategy>,
    gpu: Option<&Arc<crate::gpu::Gpu>>,
) -> Result<(Mesh, EnvelopeReport), EnvelopeError> {
    build_checked(mesh, side, fraction, strategy, gpu, true)
}

/// [`build`], with the exact check and its repair only where `check` is set: without it the
/// result is the program's alone, which may cross (for measuring the program by itself).
pub fn build_checked(
    mesh: &Mesh,
    side: Side,
    fraction: f64,
    strategy: Option<Strategy>,
    gpu: Option<&Arc<crate::gpu::Gpu>>,
    check: bool,
) -> Result<(Mesh, EnvelopeReport), EnvelopeError> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(EnvelopeError::Distance(fraction));
    }
    mesh.validate()?;
    if mesh.triangle_count() == 0 {
        return Err(EnvelopeError::Empty(mesh.name.clone()));
    }
    let (v, f) = (mesh.vertex_count(), mesh.triangle_count());
    rxpipe_core::limits::check_host(bytes(v, f), || {
        format!(
            "the {} envelope of '{}' ({f} triangles)",
            side.name(),
            mesh.name
        )
    })?;
    let (lo, hi) = mesh.bounds().expect("a mesh with triangles has bounds");
    let diagonal = (hi - lo).as_dvec3().length();
    let distance = fraction * diagonal;
    let tree = Bvh::of_checked(mesh);
    let faces = rxpipe_core::mesh::VertexFaces::build(&mesh.indices, v);
    let program = SafeOffset {
        positions: &mesh.positions,
        indices: &mesh.indices,
        faces: &faces,
        bvh: &tree,
        side: side.sign(),
        distance,
    };
    let strategy = match (strategy, gpu) {
        (None, Some(_)) => Some(Strategy::Multi),
        (s, _) => s,
    };
    let start = std::time::Instant::now();
    #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
    let mut kernel_ms = None;
    let (mut records, stats) = match (strategy, gpu) {
        #[cfg(feature = "cuda")]
        (Some(s), Some(g)) => {
            let (records, stats, ms) = cuda::run(g, &program, s)?;
            kernel_ms = Some(ms);
            (records, stats)
        }
        (Some(s), _) => {
            let streamed = crate::geometry::cpu::process(s, v, &mesh.indices, None, &program)
                .map_err(|e| EnvelopeError::Device(e.to_string()))?;
            // (a vertex no triangle names is no run of the strategy: it stays)
            let mut records: Vec<Record> = (0..v as u32).map(|i| program.pinned(i)).collect();
            streamed.scatter(&mut records);
            (records, streamed.stats)
        }
        (None, _) => {
            let records = cpu::reference(&program);
            let stats = GeometryStats {
                invocations: v as u64,
                triangles: f as u64,
                unique_vertices: faces.offsets.windows(2).filter(|w| w[1] > w[0]).count() as u64,
            };
            (records, stats)
        }
    };
    let program_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = std::time::Instant::now();
    let repaired = if check {
        repair::repair(&program, mesh, &tree, &mut records)?
    } else {
        repair::Repaired::default()
    };
    let check_ms = start.elapsed().as_secs_f64() * 1e3;
    let named: Vec<bool> = faces.offsets.windows(2).map(|w| w[1] > w[0]).collect();
    let mut report = report(
        &records, &named, side, distance, fraction, strategy, gpu, &stats, repaired, program_ms,
        check_ms,
    );
    report.kernel_ms = kernel_ms;
    let mut out = mesh.clone();
    out.positions = records
        .iter()
        .map(|r| glam::Vec3::new(r[0], r[1], r[2]))
        .collect();
    out.normals = None;
    Ok((out, report))
}

#[allow(clippy::too_many_arguments)]
fn report(
    records: &[Record],
    named: &[bool],
    side: Side,
    distance: f64,
    fraction: f64,
    strategy: Option<Strategy>,
    gpu: Option<&Arc<crate::gpu::Gpu>>,
    stats: &GeometryStats,
    repaired: repair::Repaired,
    program_ms: f64,
    check_ms: f64,
) -> EnvelopeReport {
    // (a vertex no triangle names is no part of the surface: it stays, uncounted)
    let surface = || {
        records
            .iter()
            .zip(named)
            .filter(|(_, &n)| n)
            .map(|(r, _)| r)
    };
    let mut offsets: Vec<f64> = surface().map(|r| r[3] as f64).collect();
    offsets.sort_unstable_by(f64::total_cmp);
    let count = |l: Limit| surface().filter(|r| r[7] == l as u8 as f32).count() as u64;
    EnvelopeReport {
        side,
        distance,
        fraction,
        strategy: strategy.map(|s| s.to_string()),
        backend: if gpu.is_some() {
            BackendKind::Cuda
        } else {
            BackendKind::Cpu
        },
        runs: stats.invocations,
        triangles: stats.triangles,
        vertices: stats.unique_vertices,
        offsets: Spread {
            min: offsets[0],
            median: offsets[offsets.len() / 2],
            max: offsets[offsets.len() - 1],
        },
        full: count(Limit::Full),
        pinned: count(Limit::Pinned),
        repaired,
        program_ms,
        check_ms,
        kernel_ms: None,
    }
}

impl EnvelopeReport {
    /// The report in one line.
    pub fn summary(&self) -> String {
        let frac = |x: f64| {
            if self.distance > 0.0 {
                x / self.distance
            } else {
                1.0
            }
        };
        format!(
            "{} envelope at {:.4} ({} of the diagonal): offsets min {:.4} ({:.0}%), median {:.4} \
             ({:.0}%), max {:.4} ({:.0}%); {} of {} vertices moved the whole distance, {} stayed; \
             {} runs of the program through {} ({:.3} a triangle); {} vertices moved back by the \
             exact check in {} rounds",
            self.side.name(),
            self.distance,
            self.fraction,
            self.offsets.min,
            100.0 * frac(self.offsets.min),
            self.offsets.median,
            100.0 * frac(self.offsets.median),
            self.offsets.max,
            100.0 * frac(self.offsets.max),
            self.full,
            self.vertices,
            self.pinned,
            self.runs,
            self.strategy
                .as_deref()
                .unwrap_or("no strategy (each vertex once)"),
            self.runs as f64 / self.triangles.max(1) as f64,
            self.repaired.vertices,
            self.repaired.rounds,
        )
    }
}

/// The envelope stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envelope {
    pub side: Side,
    /// D, as a fraction of the bounding box's diagonal
    pub distance: f64,
    /// the strategy the program runs through (`None`: each vertex once, no batches; on the GPU
    /// the multi strategy, its fastest)
    pub strategy: Option<Strategy>,
}

impl Default for Envelope {
    fn default() -> Self {
        Envelope {
            side: Side::Outer,
            distance: 0.02,
            strategy: None,
        }
    }
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "envelope",
    kind: StageKind::Mesh,
    about: "the inner or outer simplification envelope: every vertex moved along its normal by the largest safe offset up to the distance, the result free of crossings (checked exactly)",
    args: &[
        ArgInfo {
            name: "side",
            values: "outer, inner",
            default: "outer",
            about: "along the normals or against them",
        },
        ArgInfo {
            name: "distance",
            values: "0..=1",
            default: "0.02",
            about: "the most a vertex moves, as a fraction of the bounding box's diagonal",
        },
        ArgInfo {
            name: "strategy",
            values: "naive, warp, sort, hash, phash, multi, patch",
            default: "none",
            about: "run the per-vertex program through this strategy of the geometry stage (the same result)",
        },
    ],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "only when listed",
};

impl Envelope {
    pub(crate) fn from_args(a: &Args) -> Result<Envelope, PassError> {
        let d = Envelope::default();
        let bad = |arg: String, message: String| PassError::Argument {
            stage: "envelope".into(),
            arg,
            message,
        };
        let side = a.choice(
            "side",
            &[("outer", Side::Outer), ("inner", Side::Inner)],
            d.side,
        )?;
        let distance = match a.get("distance") {
            None => d.distance,
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    bad(
                        format!("distance={v}"),
                        "expected a fraction of the diagonal from 0 to 1".into(),
                    )
                })?,
        };
        let strategy = a.strategy()?;
        Ok(Envelope {
            side,
            distance,
            strategy,
        })
    }
}

impl MeshPass for Envelope {
    fn name(&self) -> &str {
        "envelope"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn invalidates(&self) -> Derived {
        Derived::NORMALS | Derived::BOUNDS
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        if mesh.triangle_count() == 0 {
            return Ok("nothing to do (no triangles)".into());
        }
        let (object, name) = (ctx.object, mesh.name().to_string());
        let gpu = ctx.gpu.filter(|_| ctx.backend == BackendKind::Cuda);
        let host = mesh.host_mut().map_err(PassError::gpu("envelope"))?;
        let (out, report) =
            build(host, self.side, self.distance, self.strategy, gpu).map_err(|e| {
                PassError::Failed {
                    stage: "envelope".into(),
                    object,
                    mesh: name,
                    message: e.to_string(),
                }
            })?;
        host.positions = out.positions;
        host.normals = None;
        Ok(report.summary())
    }
}
