//! The normals stage on the GPU (kernels/normals.cu): the weighted face normals added per vertex
//! with double-precision atomics, then normalised; flat normals written three vertices per
//! triangle. The mesh stays on the device.

use super::NormalsMode;
use crate::gpu::kernels::Source;
use crate::gpu::{launch_1d, Gpu, GpuError};
use crate::passes::{DeviceAttributes, WorkingMesh};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The stage's kernels.
pub const KERNELS: Source<'static> = crate::kernel_source!("normals.cu");

/// Computes the normals of `mesh` on `gpu`, leaving the result on the device.
pub fn run(gpu: &Gpu, mesh: &mut WorkingMesh, mode: NormalsMode) -> Result<(), GpuError> {
    let module = gpu.module("normals", &[KERNELS], &[])?;
    let d = mesh.device(gpu)?;
    let n = d.vertex_count;
    let t = (d.index_count / 3) as u32;
    if mode == NormalsMode::Flat {
        let out = 3 * t as usize;
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
        return Ok(());
    }
    let mut acc: CudaSlice<f64> = gpu.zeros(3 * n, "normal sums")?;
    let m = if mode == NormalsMode::Angle {
        1i32
    } else {
        0i32
    };
    let f = gpu.function(&module, "rxn_accumulate")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(&d.positions)
        .arg(&d.indices)
        .arg(&t)
        .arg(&m)
        .arg(&mut acc);
    // SAFETY: one thread per triangle; indices are below the vertex count (validated).
    unsafe { launch_1d(l, t, "rxn_accumulate") }?;
    let mut out: CudaSlice<f32> = gpu.zeros(3 * n, "normals")?;
    let nv = n as u32;
    let f = gpu.function(&module, "rxn_normalize")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(&acc).arg(&nv).arg(&mut out);
    // SAFETY: one thread per vertex over buffers of 3n entries.
    unsafe { launch_1d(l, nv, "rxn_normalize") }?;
    mesh.device_mut(gpu)?.normals = Some(out);
    Ok(())
}
