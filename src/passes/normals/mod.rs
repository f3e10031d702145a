//! The normals stage: vertex normals from the triangles, flat, area-weighted or angle-weighted,
//! on the CPU ([`cpu`]) and on the GPU ([`cuda`], kernels/normals.cu). Both compute in double
//! precision and agree with a float64 reference within 1e-5 relative.
//!
//! A pipeline runs it as a default stage after the user's passes when a mesh has no normals
//! (lighting needs them), area-weighted; listed explicitly (`--pass normals:angle`) it overwrites
//! the mesh's own normals unless told `overwrite=no`.

pub mod cpu;
pub mod cuda;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use crate::backend::BackendKind;
use crate::mesh::Mesh;

/// Which normals to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NormalsMode {
    /// the sum of the adjacent faces' normals weighted by their areas, shared vertices kept
    #[default]
    Area,
    /// the sum of the adjacent faces' unit normals weighted by the corner angles (Thürmer and
    /// Wüthrich), shared vertices kept
    Angle,
    /// one normal per face: vertices are split so that every triangle has its own three
    Flat,
}

impl NormalsMode {
    /// The mode's name as the stage's argument takes it.
    pub fn name(self) -> &'static str {
        match self {
            NormalsMode::Area => "area",
            NormalsMode::Angle => "angle",
            NormalsMode::Flat => "flat",
        }
    }
}

/// The normals stage.
///
/// ```
/// use rxpipe::passes::{Normals, NormalsMode};
/// let mut m = rxpipe::mesh::icosphere(2);
/// m.normals = None;
/// Normals::new(NormalsMode::Angle).apply(&mut m);
/// let n = m.normals.as_ref().unwrap();
/// assert!((n[0] - m.positions[0]).length() < 0.05);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Normals {
    /// which normals
    pub mode: NormalsMode,
    /// recompute normals the mesh already has
    pub overwrite: bool,
}

impl Default for Normals {
    /// The default stage: area-weighted, only where a mesh has none.
    fn default() -> Self {
        Normals {
            mode: NormalsMode::Area,
            overwrite: false,
        }
    }
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "normals",
    kind: StageKind::Mesh,
    about: "vertex normals from the triangles (float64 accumulation)",
    args: &[
        ArgInfo {
            name: "mode",
            values: "area|angle|flat",
            default: "area",
            about: "area- or angle-weighted face normals, or flat (splits vertices)",
        },
        ArgInfo {
            name: "overwrite",
            values: "yes|no",
            default: "yes when listed",
            about: "recompute normals the mesh already has",
        },
    ],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "default: area-weighted, for meshes without normals",
};

impl Normals {
    /// Explicit normals of `mode`, overwriting the mesh's own.
    pub fn new(mode: NormalsMode) -> Normals {
        Normals {
            mode,
            overwrite: true,
        }
    }

    pub(crate) fn from_args(a: &Args) -> Result<Normals, PassError> {
        Ok(Normals {
            mode: a.choice(
                "mode",
                &[
                    ("area", NormalsMode::Area),
                    ("angle", NormalsMode::Angle),
                    ("flat", NormalsMode::Flat),
                ],
                NormalsMode::Area,
            )?,
            overwrite: a.flag("overwrite", true)?,
        })
    }

    /// Runs the stage on a host mesh with the CPU implementation.
    pub fn apply(&self, mesh: &mut Mesh) {
        if mesh.normals.is_some() && !self.overwrite {
            return;
        }
        match self.mode {
            NormalsMode::Flat => cpu::flat(mesh),
            m => cpu::smooth(
                mesh,
                m,
                &super::VertexFaces::build(&mesh.indices, mesh.vertex_count()),
            ),
        }
    }
}

impl MeshPass for Normals {
    fn name(&self) -> &str {
        "normals"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn invalidates(&self) -> Derived {
        match self.mode {
            // new vertices and indices
            NormalsMode::Flat => Derived::ADJACENCY,
            _ => Derived::NONE,
        }
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        if mesh.has_normals() && !self.overwrite {
            return Ok("kept the mesh's normals".into());
        }
        let (v, t) = (mesh.vertex_count(), mesh.triangle_count());
        match (ctx.backend, ctx.gpu) {
            (BackendKind::Cuda, Some(gpu)) => {
                cuda::run(gpu, mesh, self.mode).map_err(PassError::gpu("normals"))?
            }
            _ => {
                let host = mesh.host_mut().map_err(PassError::gpu("normals"))?;
                match self.mode {
                    NormalsMode::Flat => cpu::flat(host),
                    m => cpu::smooth(host, m, &ctx.adjacency(host)),
                }
            }
        }
        Ok(match self.mode {
            NormalsMode::Flat => format!(
                "flat normals: {v} vertices -> {} (one per triangle corner)",
                3 * t
            ),
            m => format!("{}-weighted normals for {v} vertices", m.name()),
        })
    }
}
