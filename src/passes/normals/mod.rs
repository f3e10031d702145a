//! The normals stage: vertex normals from the triangles, flat, area-weighted or angle-weighted,
//! on the CPU ([`cpu`]) and on the GPU ([`cuda`], kernels/normals.cu). Both compute in double
//! precision and agree with a float64 reference within 1e-5 relative.
//!
//! A pipeline runs it as a default stage after the user's passes when a mesh has no normals
//! (lighting needs them), area-weighted; listed explicitly (`--pass normals:angle`) it overwrites
//! the mesh's own normals unless told `overwrite=no`.
//!
//! Smooth normals have three implementations with one result ([`NormalsVia`]): the hardwired
//! one over the index buffer, and two through the RXMesh patches' queries (FV: each face adds
//! to its vertices; VF: each vertex sums its faces inside its patch), as the paper's section 8.4
//! compares them (`rxpipe bench rxmesh` times all three).

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use rxpipe_core::execution::BackendKind;
use rxpipe_core::mesh::Mesh;

/// Which normals to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NormalsMode {
    /// the sum of the adjacent faces' normals weighted by their areas, shared vertices kept
    #[default]
    Area,
    /// the sum of the adjacent faces' unit normals weighted by the corner angles (Thürmer and
    /// Wüthrich), shared vertices kept
    Angle,
    /// the sum of the adjacent faces' normals weighted by the inverse squared lengths of the
    /// corner's two edges (Max 1999; what RXMesh's vertex normals use), shared vertices kept
    Max,
    /// one normal per face: vertices are split so that every triangle has its own three
    Flat,
}

/// How smooth normals are computed (the result is the same within float rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NormalsVia {
    /// the hardwired form: every triangle of the index buffer adds to its three vertices
    #[default]
    Indices,
    /// the patches' FV query: every patch's owned faces add to their vertices
    Fv,
    /// the patches' VF query: every vertex sums its faces inside the patch that owns it
    Vf,
}

impl NormalsVia {
    /// The implementation's name as the stage's argument takes it.
    pub fn name(self) -> &'static str {
        match self {
            NormalsVia::Indices => "indices",
            NormalsVia::Fv => "fv",
            NormalsVia::Vf => "vf",
        }
    }
}

impl NormalsMode {
    /// The mode's name as the stage's argument takes it.
    pub fn name(self) -> &'static str {
        match self {
            NormalsMode::Area => "area",
            NormalsMode::Angle => "angle",
            NormalsMode::Max => "max",
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
/// Normals::new(NormalsMode::Angle).apply(&mut m).unwrap();
/// let n = m.normals.as_ref().unwrap();
/// assert!((n[0] - m.positions[0]).length() < 0.05);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Normals {
    /// which normals
    pub mode: NormalsMode,
    /// recompute normals the mesh already has
    pub overwrite: bool,
    /// which implementation computes smooth normals
    pub via: NormalsVia,
}

impl Default for Normals {
    /// The default stage: area-weighted, only where a mesh has none.
    fn default() -> Self {
        Normals {
            mode: NormalsMode::Area,
            overwrite: false,
            via: NormalsVia::Indices,
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
            values: "area|angle|max|flat",
            default: "area",
            about: "area-, angle- or Max-weighted face normals, or flat (splits vertices)",
        },
        ArgInfo {
            name: "via",
            values: "indices|fv|vf",
            default: "indices",
            about: "smooth normals over the index buffer, or through the patches' FV or VF query",
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
            via: NormalsVia::Indices,
        }
    }

    /// The same normals computed through `via`.
    pub fn via(self, via: NormalsVia) -> Normals {
        Normals { via, ..self }
    }

    pub(crate) fn from_args(a: &Args) -> Result<Normals, PassError> {
        let n = Normals {
            mode: a.choice(
                "mode",
                &[
                    ("area", NormalsMode::Area),
                    ("angle", NormalsMode::Angle),
                    ("max", NormalsMode::Max),
                    ("flat", NormalsMode::Flat),
                ],
                NormalsMode::Area,
            )?,
            overwrite: a.flag("overwrite", true)?,
            via: a.choice(
                "via",
                &[
                    ("indices", NormalsVia::Indices),
                    ("fv", NormalsVia::Fv),
                    ("vf", NormalsVia::Vf),
                ],
                NormalsVia::Indices,
            )?,
        };
        if n.mode == NormalsMode::Flat && n.via != NormalsVia::Indices {
            return Err(PassError::Argument {
                stage: "normals".into(),
                arg: format!("via={}", n.via.name()),
                message: "flat normals split the index buffer's triangles; the queries compute smooth ones (mode=area, angle or max)".into(),
            });
        }
        Ok(n)
    }

    /// Runs the stage on a host mesh with the CPU implementation (patching the mesh first when
    /// it goes through the patches' queries).
    pub fn apply(&self, mesh: &mut Mesh) -> Result<(), crate::patch::PatchError> {
        if mesh.normals.is_some() && !self.overwrite {
            return Ok(());
        }
        match (self.mode, self.via) {
            (NormalsMode::Flat, _) => cpu::flat(mesh),
            (m, NormalsVia::Indices) => cpu::smooth(
                mesh,
                m,
                &rxpipe_core::mesh::VertexFaces::build(&mesh.indices, mesh.vertex_count()),
            ),
            (m, via) => {
                let p = crate::patch::cpu::patch(mesh, &Default::default())?;
                let data = crate::patch::PatchData::build(mesh, &p)?;
                match via {
                    NormalsVia::Fv => cpu::patch_fv(mesh, m, &data),
                    _ => cpu::patch_vf(mesh, m, &data),
                }
            }
        }
        Ok(())
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
        let via = if self.mode == NormalsMode::Flat {
            NormalsVia::Indices
        } else {
            self.via
        };
        // the patches, when the normals go through their queries
        let data = match via {
            NormalsVia::Indices => None,
            _ => {
                let object = ctx.object;
                let (host, patching) = mesh
                    .host_with_patching()
                    .map_err(PassError::gpu("normals"))?;
                Some(ctx.patches(host, patching).map_err(|e| PassError::Failed {
                    stage: "normals".into(),
                    object,
                    mesh: host.name.clone(),
                    message: e.to_string(),
                })?)
            }
        };
        match (ctx.backend, ctx.gpu) {
            #[cfg(feature = "cuda")]
            (BackendKind::Cuda, Some(gpu)) => match &data {
                Some(d) => cuda::run_patches(gpu, mesh, self.mode, via, d),
                None => cuda::run(gpu, mesh, self.mode),
            }
            .map_err(PassError::gpu("normals"))?,
            _ => {
                let host = mesh.host_mut().map_err(PassError::gpu("normals"))?;
                match (self.mode, &data) {
                    (NormalsMode::Flat, _) => cpu::flat(host),
                    (m, None) => cpu::smooth(host, m, &ctx.adjacency(host)),
                    (m, Some(d)) if via == NormalsVia::Fv => cpu::patch_fv(host, m, d),
                    (m, Some(d)) => cpu::patch_vf(host, m, d),
                }
            }
        }
        Ok(match (self.mode, via) {
            (NormalsMode::Flat, _) => format!(
                "flat normals: {v} vertices -> {} (one per triangle corner)",
                3 * t
            ),
            (m, NormalsVia::Indices) => format!("{}-weighted normals for {v} vertices", m.name()),
            (m, via) => format!(
                "{}-weighted normals for {v} vertices through the {} query ({} patches)",
                m.name(),
                via.name().to_uppercase(),
                data.as_ref().map_or(0, |d| d.patches.len())
            ),
        })
    }
}
