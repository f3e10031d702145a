//! The normals stage on the GPU (kernels/normals.cu): the weighted face normals added per vertex
//! with double-precision atomics, then normalised; flat normals written three vertices per
//! triangle; or through the patches' FV query (the same sums, face by owned face) or VF query
//! (each owned vertex summed in shared memory and written once). The mesh stays on the device.

use super::{NormalsMode, NormalsVia};
use crate::gpu::kernels::{Source, DVEC};
use crate::gpu::{launch, launch_1d, Context, Gpu, GpuError};
use crate::passes::{DeviceAttributes, WorkingMesh};
use crate::patch::query::cuda::{DevicePatchData, PATCH};
use crate::patch::PatchData;
use cudarc::driver::{CudaModule, CudaSlice, PushKernelArg};
use std::sync::Arc;

/// The stage's kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("normals.cu");

/// The stage's kernels, compiled for one device.
pub type Module = Arc<CudaModule>;

/// Compiles (or loads from the cache) the stage's kernels.
pub fn module(gpu: &Gpu) -> Result<Module, GpuError> {
    gpu.module("normals", &[DVEC, PATCH, KERNELS], &[])
}

/// Computes the normals of `mesh` on `gpu`, leaving the result on the device.
pub fn run(gpu: &Gpu, mesh: &mut WorkingMesh, mode: NormalsMode) -> Result<(), GpuError> {
    let module = module(gpu)?;
    let follow = mesh.has_host_attributes();
    let d = mesh.device(gpu)?;
    let n = d.vertex_count;
    let t = (d.index_count / 3) as u32;
    if mode == NormalsMode::Flat {
        let out = 3 * t as usize;
        // the vertex colours and tangents (kept on the host) follow the corners: new vertex i
        // is corner i
        let corners = if follow {
            let mut c = vec![0u32; out];
            if out > 0 {
                gpu.stream
                    .memcpy_dtoh(&d.indices.slice(0..out), &mut c)
                    .ctx("downloading the indices for the vertex colours and tangents")?;
            }
            Some(c)
        } else {
            None
        };
        let mut pos: CudaSlice<f32> = gpu.zeros(3 * out, "flat positions")?;
        let mut nrm: CudaSlice<f32> = gpu.zeros(3 * out, "flat normals")?;
        let mut uv: Option<CudaSlice<f32>> = match d.uvs {
            Some(_) => Some(gpu.zeros(2 * out, "flat texture coordinates")?),
            None => None,
        };
        let mut idx: CudaSlice<u32> = gpu.zeros(out, "flat indices")?;
        let f = gpu.function(&module, "rxn_flat")?;
        let mut l = gpu.stream.launch_builder(&f);
        l.arg(&d.positions);
        let null = 0u64;
        match (&d.uvs, &mut uv) {
            (Some(src), Some(dst)) => {
                l.arg(src)
                    .arg(&d.indices)
                    .arg(&t)
                    .arg(&mut pos)
                    .arg(&mut nrm)
                    .arg(dst);
            }
            _ => {
                l.arg(&null)
                    .arg(&d.indices)
                    .arg(&t)
                    .arg(&mut pos)
                    .arg(&mut nrm)
                    .arg(&null);
            }
        }
        l.arg(&mut idx);
        // SAFETY: one thread per triangle; the outputs hold three vertices per triangle and the
        // indices were validated against the vertex count.
        unsafe { launch_1d(l, t, "rxn_flat") }?;
        mesh.set_device(DeviceAttributes {
            positions: pos,
            normals: Some(nrm),
            uvs: uv,
            indices: idx,
            vertex_count: out,
            index_count: out,
        });
        if let Some(c) = corners {
            mesh.remap_host_attributes(&c);
        }
        return Ok(());
    }
    let out = index_normals(gpu, &module, &d.positions, &d.indices, n, t, mode)?;
    mesh.device_mut(gpu)?.normals = Some(out);
    Ok(())
}

/// Smooth normals of `n` vertices at `positions` from the `t` triangles of `indices` (the
/// hardwired form: one thread per triangle, double atomics, then normalised), as a new buffer.
pub fn index_normals(
    gpu: &Gpu,
    module: &Arc<CudaModule>,
    positions: &CudaSlice<f32>,
    indices: &CudaSlice<u32>,
    n: usize,
    t: u32,
    mode: NormalsMode,
) -> Result<CudaSlice<f32>, GpuError> {
    let mut acc: CudaSlice<f64> = gpu.zeros(3 * n.max(1), "normal sums")?;
    let m = mode_arg(mode);
    let f = gpu.function(module, "rxn_accumulate")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(positions).arg(indices).arg(&t).arg(&m).arg(&mut acc);
    // SAFETY: one thread per triangle; indices are below the vertex count (validated).
    unsafe { launch_1d(l, t, "rxn_accumulate") }?;
    let mut out: CudaSlice<f32> = gpu.zeros(3 * n.max(1), "normals")?;
    normalize(gpu, module, &acc, n as u32, &mut out)?;
    Ok(out)
}

/// Computes smooth normals of `mesh` through the patches' FV or VF query (`data`, the patching
/// of its index buffer as it is), leaving the result on the device.
pub fn run_patches(
    gpu: &Gpu,
    mesh: &mut WorkingMesh,
    mode: NormalsMode,
    via: NormalsVia,
    data: &PatchData,
) -> Result<(), GpuError> {
    let patches = DevicePatchData::upload(gpu, data)?;
    let out = {
        let d = mesh.device(gpu)?;
        patch_normals(gpu, &module(gpu)?, &patches, &d.positions, mode, via)?
    };
    mesh.device_mut(gpu)?.normals = Some(out);
    Ok(())
}

/// The kernel's number for a weighting (RXN_AREA, RXN_ANGLE, RXN_MAX).
fn mode_arg(mode: NormalsMode) -> i32 {
    match mode {
        NormalsMode::Angle => 1,
        NormalsMode::Max => 2,
        _ => 0,
    }
}

/// Smooth normals of the vertices of `patches` from `positions` through the FV query (face
/// sums with double atomics, then normalised) or the VF query (one pass), as a new buffer.
pub fn patch_normals(
    gpu: &Gpu,
    module: &Arc<CudaModule>,
    patches: &DevicePatchData,
    positions: &CudaSlice<f32>,
    mode: NormalsMode,
    via: NormalsVia,
) -> Result<CudaSlice<f32>, GpuError> {
    let n = patches.vertices;
    let m = mode_arg(mode);
    let mut out: CudaSlice<f32> = gpu.zeros(3 * n.max(1), "normals")?;
    if patches.count == 0 {
        return Ok(out);
    }
    if via == NormalsVia::Vf {
        let smem = patches.matrix_bytes + 24 * patches.max_owned_vertices;
        let f = gpu.function(module, "rxn_patch_vf")?;
        let mut l = gpu.stream.launch_builder(&f);
        patches.push_args(&mut l);
        l.arg(positions).arg(&m).arg(&mut out);
        // SAFETY: one block per patch; the patch table describes the uploaded maps and
        // matrices, the shared memory holds the largest patch's matrices and three doubles per
        // owned vertex, and every global vertex id is below the vertex count of `out`.
        unsafe { launch(l, patches.count, PATCH_BLOCK, smem as u32, "rxn_patch_vf") }?;
        return Ok(out);
    }
    let mut acc: CudaSlice<f64> = gpu.zeros(3 * n.max(1), "normal sums")?;
    let f = gpu.function(module, "rxn_patch_fv")?;
    let mut l = gpu.stream.launch_builder(&f);
    patches.push_args(&mut l);
    l.arg(positions).arg(&m).arg(&mut acc);
    // SAFETY: as above (the owned faces' rows of the matrices read in global memory, within
    // the patch's ranges of them).
    unsafe { launch(l, patches.count, PATCH_BLOCK, 0, "rxn_patch_fv") }?;
    normalize(gpu, module, &acc, n as u32, &mut out)?;
    Ok(out)
}

/// Threads per patch block.
const PATCH_BLOCK: u32 = 256;

/// Normalises the sums `acc` of `n` vertices into `out`.
fn normalize(
    gpu: &Gpu,
    module: &Arc<CudaModule>,
    acc: &CudaSlice<f64>,
    n: u32,
    out: &mut CudaSlice<f32>,
) -> Result<(), GpuError> {
    let f = gpu.function(module, "rxn_normalize")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(acc).arg(&n).arg(out);
    // SAFETY: one thread per vertex over buffers of 3n entries.
    unsafe { launch_1d(l, n, "rxn_normalize") }
}
