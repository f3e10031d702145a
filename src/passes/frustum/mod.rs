//! The frustum stage: whole objects outside the view are dropped before the geometry stage, on
//! the CPU ([`cpu`]) or the GPU ([`cuda`], kernels/frustum.cu), with the same test.
//!
//! An object is dropped when all eight corners of its bounding box lie outside one of the six
//! planes the raster stage's trivial rejection uses, by more than a small relative margin; then
//! setup would have rejected every one of its triangles, so the image is the same as without the
//! stage. The test assumes the vertex shader leaves positions inside the object's bounds (the
//! built-in shaders do); a pipeline with a custom shader runs it only when asked.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;

pub use super::Placement;
use super::{ArgInfo, Args, FrameContext, FrameStage, PassError, StageInfo, StageKind, Visibility};
use rxpipe_core::execution::BackendKind;
#[cfg(feature = "cuda")]
use std::sync::Mutex;

/// The relative margin by which every corner must be outside a plane (against rounding: the
/// shader transforms by the model then the view-projection, the test by their product).
pub const MARGIN: f32 = 1e-5;

/// From how many objects [`Placement::Auto`] runs the test on the GPU (with the CUDA backend).
/// Below it the host's test is faster than the GPU's round trip (`rxpipe bench frustum`).
pub const GPU_FROM_OBJECTS: usize = 2_000;

/// The frustum stage.
#[derive(Default)]
pub struct Frustum {
    /// where the test runs
    pub placement: Placement,
    /// the GPU's buffers, kept from frame to frame
    #[cfg(feature = "cuda")]
    device: Mutex<Option<cuda::Buffers>>,
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "frustum",
    kind: StageKind::Frame,
    about: "drops whole objects whose bounding box lies outside the view",
    args: &[ArgInfo {
        name: "on",
        values: "auto|cpu|cuda",
        default: "auto",
        about: "where the test runs: auto takes the GPU (with cuda) from 2000 objects",
    }],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "default with the built-in vertex shaders",
};

impl Frustum {
    /// The stage with the test where `placement` says.
    pub fn new(placement: Placement) -> Frustum {
        Frustum {
            placement,
            #[cfg(feature = "cuda")]
            device: Mutex::new(None),
        }
    }

    pub(crate) fn from_args(a: &Args) -> Result<Frustum, PassError> {
        Ok(Frustum::new(a.placement()?))
    }

    /// Where the test runs for `objects` objects on `backend`.
    pub fn runs_on(&self, backend: BackendKind, objects: usize) -> BackendKind {
        match (backend, self.placement) {
            (BackendKind::Cuda, Placement::Cuda) => BackendKind::Cuda,
            (BackendKind::Cuda, Placement::Auto) if objects >= GPU_FROM_OBJECTS => {
                BackendKind::Cuda
            }
            _ => BackendKind::Cpu,
        }
    }
}

/// One object's test input: its model-view-projection matrix (column-major) and object-space
/// bounds, as `FrustumObject` in kernels/frustum.cu.
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct FrustumObject {
    /// model-view-projection, column-major
    pub mvp: [f32; 16],
    /// object-space bounds: lower corner
    pub lo: [f32; 3],
    /// object-space bounds: upper corner
    pub hi: [f32; 3],
}

/// The test inputs of the objects that have triangles, and their indices.
fn inputs(ctx: &FrameContext, visible: &[Visibility]) -> (Vec<FrustumObject>, Vec<usize>) {
    let mut objects = Vec::new();
    let mut which = Vec::new();
    for (k, o) in ctx.objects.iter().enumerate() {
        if let (Some((lo, hi)), true) = (o.bounds, visible[k].visible) {
            objects.push(FrustumObject {
                mvp: (ctx.view_proj * o.model).to_cols_array(),
                lo: lo.to_array(),
                hi: hi.to_array(),
            });
            which.push(k);
        }
    }
    (objects, which)
}

impl FrameStage for Frustum {
    fn name(&self) -> &str {
        "frustum"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn runs_on(&self, backend: BackendKind, objects: usize) -> BackendKind {
        Frustum::runs_on(self, backend, objects)
    }

    fn run(&self, ctx: &FrameContext, visible: &mut [Visibility]) -> Result<(), PassError> {
        let (objects, which) = inputs(ctx, visible);
        let inside: Vec<bool> = match (self.runs_on(ctx.backend, ctx.objects.len()), ctx.gpu) {
            #[cfg(feature = "cuda")]
            (BackendKind::Cuda, Some(gpu)) => {
                let mut dev = self.device.lock().unwrap_or_else(|p| p.into_inner());
                cuda::cull(gpu, &objects, &mut dev).map_err(PassError::gpu("frustum"))?
            }
            _ => objects.iter().map(cpu::inside).collect(),
        };
        for (k, ok) in which.into_iter().zip(inside) {
            visible[k].visible &= ok;
        }
        Ok(())
    }
}
