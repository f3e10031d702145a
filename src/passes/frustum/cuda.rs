//! The frustum test on the GPU (kernels/frustum.cu): the objects' matrices and bounds are
//! uploaded, one thread tests each, and the verdicts come back for the host to skip the culled
//! objects' launches.

use super::{FrustumObject, MARGIN};
use crate::gpu::kernels::Source;
use crate::gpu::{launch_1d, Context, Gpu, GpuError};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The stage's kernels.
pub const KERNELS: Source<'static> = crate::kernel_source!("frustum.cu");

/// Device buffers kept from frame to frame (grown as needed).
pub struct Buffers {
    objects: CudaSlice<f32>,
    visible: CudaSlice<u32>,
}

const FLOATS: usize = std::mem::size_of::<FrustumObject>() / 4;

/// Tests `objects` on the GPU; true where an object may be visible.
pub fn cull(
    gpu: &Gpu,
    objects: &[FrustumObject],
    buffers: &mut Option<Buffers>,
) -> Result<Vec<bool>, GpuError> {
    let n = objects.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    if buffers.as_ref().is_none_or(|b| b.visible.len() < n) {
        *buffers = Some(Buffers {
            objects: gpu.zeros(FLOATS * n, "frustum objects")?,
            visible: gpu.zeros(n, "frustum verdicts")?,
        });
    }
    let b = buffers.as_mut().expect("made above");
    let flat: &[f32] = bytemuck::cast_slice(objects);
    gpu.stream
        .memcpy_htod(flat, &mut b.objects.slice_mut(0..flat.len()))
        .ctx("uploading the frustum objects")?;
    let module = gpu.module("frustum", &[KERNELS], &[])?;
    let f = gpu.function(&module, "rxf_cull")?;
    let count = n as u32;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(&b.objects)
        .arg(&count)
        .arg(&MARGIN)
        .arg(&mut b.visible);
    // SAFETY: one thread per object; both buffers hold at least n objects.
    unsafe { launch_1d(l, count, "rxf_cull") }?;
    Ok(gpu
        .download(&b.visible, n)?
        .into_iter()
        .map(|v| v != 0)
        .collect())
}
