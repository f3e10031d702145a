//! The smoothing stage: Laplacian smoothing on the RXMesh patches, for scanned data before
//! rendering. Each iteration moves every vertex by `lambda` times the weighted mean of the offsets
//! to its one-ring neighbours: uniform weights (the VV query) or cotangent weights (through the
//! faces: half the cotangent of the corner opposite each edge, from both sides). Boundary and
//! non-manifold vertices stay fixed (a scan's open border would otherwise shrink). The CPU
//! ([`cpu`]) and the GPU ([`cuda`], kernels/smooth.cu) compute each step in the same way, patch
//! by patch with double-precision sums, and agree within float rounding.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use crate::patch::PatchData;
use rxpipe_core::execution::BackendKind;

/// The weights of the one-ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SmoothMethod {
    /// every neighbour counts the same (the umbrella operator)
    #[default]
    Uniform,
    /// cotangent weights: the discrete Laplace-Beltrami operator, which moves vertices along
    /// the normal rather than sliding them over the surface
    Cotangent,
}

impl SmoothMethod {
    /// The method's name as the stage's argument takes it.
    pub fn name(self) -> &'static str {
        match self {
            SmoothMethod::Uniform => "uniform",
            SmoothMethod::Cotangent => "cotangent",
        }
    }
}

/// The smoothing stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Smooth {
    pub method: SmoothMethod,
    /// Jacobi iterations
    pub iterations: u32,
    /// step: the fraction of the mean offset a vertex moves per iteration (0 to 1)
    pub lambda: f32,
}

impl Default for Smooth {
    fn default() -> Self {
        Smooth {
            method: SmoothMethod::Uniform,
            iterations: 10,
            lambda: 0.5,
        }
    }
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "smooth",
    kind: StageKind::Mesh,
    about: "Laplacian smoothing on the patches (boundaries stay fixed)",
    args: &[
        ArgInfo {
            name: "method",
            values: "uniform|cotangent",
            default: "uniform",
            about: "one-ring weights: uniform (VV query) or cotangent (through the faces)",
        },
        ArgInfo {
            name: "iterations",
            values: "0..=10000",
            default: "10",
            about: "Jacobi steps",
        },
        ArgInfo {
            name: "lambda",
            values: "0..=1",
            default: "0.5",
            about: "the fraction of the weighted mean offset a vertex moves per step",
        },
    ],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "only when listed",
};

impl Smooth {
    pub(crate) fn from_args(a: &Args) -> Result<Smooth, PassError> {
        let d = Smooth::default();
        let bad = |arg: String, message: &str| PassError::Argument {
            stage: "smooth".into(),
            arg,
            message: message.into(),
        };
        let iterations = match a.get("iterations") {
            None => d.iterations,
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|&n| n <= 10_000)
                .ok_or_else(|| bad(format!("iterations={v}"), "expected 0 to 10000"))?,
        };
        let lambda = match a.get("lambda") {
            None => d.lambda,
            Some(v) => v
                .parse::<f32>()
                .ok()
                .filter(|l| (0.0..=1.0).contains(l))
                .ok_or_else(|| bad(format!("lambda={v}"), "expected a number from 0 to 1"))?,
        };
        Ok(Smooth {
            method: a.choice(
                "method",
                &[
                    ("uniform", SmoothMethod::Uniform),
                    ("cotangent", SmoothMethod::Cotangent),
                ],
                d.method,
            )?,
            iterations,
            lambda,
        })
    }
}

/// One flag per vertex: fixed (on a boundary edge or a non-manifold edge: an edge with other
/// than two faces), from the patches' owned faces (each face is owned once).
pub fn fixed_vertices(data: &PatchData) -> Vec<u8> {
    let mut faces_of_edge = vec![0u32; data.edges.len()];
    for p in &data.patches {
        for f in 0..p.owned_faces as usize {
            let mut seen = [u16::MAX; 3];
            for k in 0..3 {
                let e = p.fe[3 * f + k] >> 1;
                // a degenerate face names an edge twice: it is one face of that edge
                if !seen.contains(&e) {
                    faces_of_edge[p.edges[e as usize] as usize] += 1;
                }
                seen[k] = e;
            }
        }
    }
    let mut fixed = vec![0u8; data.vertex_owner.len()];
    for (e, &n) in faces_of_edge.iter().enumerate() {
        if n != 2 {
            let [a, b] = data.edges[e];
            fixed[a as usize] = 1;
            fixed[b as usize] = 1;
        }
    }
    fixed
}

impl MeshPass for Smooth {
    fn name(&self) -> &str {
        "smooth"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn invalidates(&self) -> Derived {
        Derived::NORMALS | Derived::BOUNDS
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        let object = ctx.object;
        let data = {
            let (host, patching) = mesh
                .host_with_patching()
                .map_err(PassError::gpu("smooth"))?;
            ctx.patches(host, patching).map_err(|e| PassError::Failed {
                stage: "smooth".into(),
                object,
                mesh: host.name.clone(),
                message: e.to_string(),
            })?
        };
        let fixed = fixed_vertices(&data);
        match (ctx.backend, ctx.gpu) {
            #[cfg(feature = "cuda")]
            (BackendKind::Cuda, Some(gpu)) => {
                cuda::run(gpu, mesh, self, &data, &fixed).map_err(PassError::gpu("smooth"))?
            }
            _ => {
                let host = mesh.host_mut().map_err(PassError::gpu("smooth"))?;
                cpu::run(host, self, &data, &fixed);
            }
        }
        // the normals the mesh had no longer fit its positions
        mesh.clear_normals();
        Ok(format!(
            "{} {} smoothing steps (lambda {}) on {} patches, {} vertices fixed",
            self.iterations,
            self.method.name(),
            self.lambda,
            data.patches.len(),
            fixed.iter().filter(|&&f| f != 0).count()
        ))
    }
}
