//! The frustum test on the GPU (kernels/frustum.cu): the objects' matrices and bounds go up from
//! page-locked memory, one thread tests each, and the verdicts come back into page-locked memory
//! for the host to skip the culled objects' launches. The round trip (two copies, a launch and a
//! wait) costs tens of microseconds whatever the count, so [`super::Placement::Auto`] runs the
//! test here only for many objects (`rxpipe bench frustum` measures where the GPU wins).

use super::{FrustumObject, MARGIN};
use crate::gpu::kernels::Source;
use crate::gpu::{launch_1d, Context, Gpu, GpuError};
use cudarc::driver::{CudaSlice, PinnedHostSlice, PushKernelArg};

/// The stage's kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("frustum.cu");

/// Device and page-locked host buffers kept from frame to frame (grown as needed).
pub struct Buffers {
    host_objects: PinnedHostSlice<f32>,
    host_visible: PinnedHostSlice<u32>,
    objects: CudaSlice<f32>,
    visible: CudaSlice<u32>,
}

const FLOATS: usize = std::mem::size_of::<FrustumObject>() / 4;

impl Buffers {
    fn new(gpu: &Gpu, n: usize) -> Result<Buffers, GpuError> {
        let n = n.next_power_of_two();
        // SAFETY: plain page-locked allocations; written before they are read. The objects are
        // only written by the host (write-combined is right for that); the verdicts are read by
        // it, so they are ordinary cached page-locked memory.
        let (host_objects, host_visible) = unsafe {
            (
                gpu.ctx.alloc_pinned::<f32>(FLOATS * n),
                gpu.ctx.alloc_pinned_with_flags::<u32>(n, 0),
            )
        };
        Ok(Buffers {
            host_objects: host_objects.ctx("allocating page-locked frustum objects")?,
            host_visible: host_visible.ctx("allocating page-locked frustum verdicts")?,
            objects: gpu.zeros(FLOATS * n, "frustum objects")?,
            visible: gpu.zeros(n, "frustum verdicts")?,
        })
    }
}

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
        *buffers = None;
        *buffers = Some(Buffers::new(gpu, n)?);
    }
    let b = buffers.as_mut().expect("made above");
    let flat: &[f32] = bytemuck::cast_slice(objects);
    b.host_objects
        .as_mut_slice()
        .ctx("writing the frustum objects")?[..flat.len()]
        .copy_from_slice(flat);
    gpu.stream
        .memcpy_htod(&b.host_objects, &mut b.objects)
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
    gpu.stream
        .memcpy_dtoh(&b.visible, &mut b.host_visible)
        .ctx("downloading the frustum verdicts")?;
    gpu.sync()?;
    let v = b
        .host_visible
        .as_slice()
        .ctx("reading the frustum verdicts")?;
    Ok(v[..n].iter().map(|&x| x != 0).collect())
}
