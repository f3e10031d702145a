//! The smoothing stage on the GPU (kernels/smooth.cu): one block per patch per step, ping-pong
//! position buffers on the device; the mesh stays there.

use super::{Smooth, SmoothMethod};
use crate::gpu::kernels::{Source, DVEC};
use crate::gpu::{launch, Context, Gpu, GpuError};
use crate::passes::WorkingMesh;
use crate::patch::query::cuda::{DevicePatchData, PATCH};
use crate::patch::PatchData;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The stage's kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("smooth.cu");

/// Threads per patch block.
const BLOCK: u32 = 256;

/// Runs `s` on `mesh` (patch data `data` of its index buffer, `fixed` one flag per vertex),
/// leaving the positions on the device.
pub fn run(
    gpu: &Gpu,
    mesh: &mut WorkingMesh,
    s: &Smooth,
    data: &PatchData,
    fixed: &[u8],
) -> Result<(), GpuError> {
    let module = gpu.module("smooth", &[DVEC, PATCH, KERNELS], &[])?;
    let patches = DevicePatchData::upload(gpu, data)?;
    let fixed = gpu.upload(fixed, "fixed vertices")?;
    let method = match s.method {
        SmoothMethod::Uniform => 0i32,
        SmoothMethod::Cotangent => 1i32,
    };
    let d = mesh.device_mut(gpu)?;
    if s.iterations == 0 || patches.count == 0 {
        return Ok(());
    }
    let n = 3 * d.vertex_count;
    // the other buffer starts as a copy: vertices no patch owns are never written
    let mut other: CudaSlice<f32> = gpu.zeros(n.max(1), "smoothed positions")?;
    gpu.stream
        .memcpy_dtod(&d.positions, &mut other)
        .ctx("copying the positions")?;
    let smem = (patches.matrix_bytes + 32 * patches.max_owned_vertices) as u32;
    let f = gpu.function(&module, "rxsm_smooth")?;
    for _ in 0..s.iterations {
        let mut l = gpu.stream.launch_builder(&f);
        patches.push_args(&mut l);
        l.arg(&d.positions)
            .arg(&fixed)
            .arg(&method)
            .arg(&s.lambda)
            .arg(&mut other);
        // SAFETY: one block per patch; the patch table describes the uploaded maps and
        // matrices, the shared memory holds the largest patch's matrices and four doubles per
        // owned vertex, and every global vertex id is below the vertex count of both buffers
        // and of `fixed`.
        unsafe { launch(l, patches.count, BLOCK, smem, "rxsm_smooth") }?;
        std::mem::swap(&mut d.positions, &mut other);
    }
    Ok(())
}
