//! The vertex-order stage: the triangle and vertex order the geometry stage sees (input,
//! Forsyth's cache optimisation with the vertex buffer in first-use order, random, or patch by
//! patch). The reordering runs on the host (meshopt, a gather); with the CUDA backend the patch
//! order's patching runs on the GPU ([`crate::patch::cuda`], the same patching), and the mesh
//! moves to the host for the rest, which the report says.

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use crate::geometry::VertexOrder;
use rxpipe_core::execution::BackendKind;

/// The vertex-order stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Order(pub VertexOrder);

pub(crate) const INFO: StageInfo = StageInfo {
    name: "order",
    kind: StageKind::Mesh,
    about: "triangle and vertex order for the geometry stage (the pipeline's --order)",
    args: &[ArgInfo {
        name: "order",
        values: "input|forsyth|random|patch",
        default: "input",
        about: "keep the input order, Forsyth's vertex-cache order, a random order, or patch by patch (RXMesh patches of 512 faces)",
    }],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "default: always runs last, with the pipeline's order",
};

impl Order {
    pub(crate) fn from_args(a: &Args) -> Result<Order, PassError> {
        Ok(Order(a.choice(
            "order",
            &[
                ("input", VertexOrder::Input),
                ("forsyth", VertexOrder::Forsyth),
                (
                    "random",
                    VertexOrder::parse("random").expect("a known order"),
                ),
                (
                    "patch",
                    VertexOrder::Patch(crate::geometry::order::PATCH_FACES),
                ),
            ],
            VertexOrder::Input,
        )?))
    }
}

impl MeshPass for Order {
    fn name(&self) -> &str {
        "order"
    }

    /// The patch order patches on either backend; the others reorder on the host only.
    fn backends(&self) -> &'static [BackendKind] {
        match self.0 {
            VertexOrder::Patch(_) => INFO.backends,
            _ => &[BackendKind::Cpu],
        }
    }

    fn invalidates(&self) -> Derived {
        match self.0 {
            VertexOrder::Input => Derived::NONE,
            _ => Derived::ADJACENCY,
        }
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        if self.0 == VertexOrder::Input {
            return Ok("input order kept".into());
        }
        let gpu = ctx.gpu.filter(|_| ctx.backend == BackendKind::Cuda);
        let m = mesh.host_mut().map_err(PassError::gpu("order"))?;
        let patching = match (self.0, gpu) {
            #[cfg(feature = "cuda")]
            (VertexOrder::Patch(max_faces), Some(gpu)) if m.validate().is_ok() => {
                let opts = crate::geometry::order::patch_options(max_faces);
                let p =
                    crate::patch::cuda::patch_indices(gpu, &m.indices, &opts).map_err(
                        |e| match e {
                            crate::patch::PatchError::Gpu(g) => PassError::gpu("order")(g),
                            other => PassError::gpu("order")(crate::gpu::GpuError::Limit(
                                other.to_string(),
                            )),
                        },
                    )?;
                Some(crate::geometry::order::arrange_patches(m, p))
            }
            _ => self.0.arrange(m),
        };
        let said = match &patching {
            Some(p) => format!(
                "patch order: {} patches of {} to {} faces (mean {:.1}){}",
                p.report.patches,
                p.report.min_faces,
                p.report.max_faces,
                p.report.mean_faces,
                if gpu.is_some() {
                    ", patched on the GPU"
                } else {
                    ""
                }
            ),
            None => format!("{} order", self.0),
        };
        mesh.set_patching(patching);
        Ok(said)
    }
}
