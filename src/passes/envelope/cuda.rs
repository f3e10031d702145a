//! The envelope's program on the GPU: the input's triangles, adjacency and BVH uploaded once,
//! the program (kernels/programs/envelope.cu) run by the geometry stage's kernels in the
//! processing mode through the chosen strategy, every run's record scattered to its vertex.

use super::cpu::{Record, SafeOffset};
use super::EnvelopeError;
use crate::geometry::{GeometryStats, Strategy};
use crate::gpu::kernels::Source;
use std::sync::Arc;

/// The envelope program in CUDA C.
pub const ENVELOPE_PROGRAM: Source<'static> = rxpipe_gpu::kernel_source!("programs/envelope.cu");

/// The GPU's `RxeInput` (kernels/programs/envelope.cu), byte for byte.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct EnvelopeInput {
    positions: u64,
    indices: u64,
    vf_offsets: u64,
    vf_corners: u64,
    boxes: u64,
    order: u64,
    triangles: u32,
    depth: u32,
    side: f64,
    distance: f64,
}

/// Runs `program` for every vertex the triangles name through `strategy` on `gpu`; a vertex no
/// triangle names stays. Returns every vertex's record, the strategy's counts and its kernels'
/// milliseconds (CUDA events).
pub fn run(
    gpu: &Arc<crate::gpu::Gpu>,
    program: &SafeOffset,
    strategy: Strategy,
) -> Result<(Vec<Record>, GeometryStats, f64), EnvelopeError> {
    use crate::geometry::cuda::{BlockSizes, CudaGeometry, CudaShader};
    let v = program.positions.len();
    let bvh = program.bvh;
    let positions = gpu.upload(
        bytemuck::cast_slice::<_, f32>(program.positions),
        "positions",
    )?;
    let indices = gpu.upload(program.indices, "indices")?;
    let offsets = gpu.upload(&program.faces.offsets, "vertex-face offsets")?;
    let corners = gpu.upload(&program.faces.corners, "vertex-face corners")?;
    let boxes = gpu.upload(bytemuck::cast_slice::<_, f32>(&bvh.boxes), "BVH boxes")?;
    let order = gpu.upload(&bvh.order, "BVH order")?;
    let table = EnvelopeInput {
        positions: gpu.address(&positions),
        indices: gpu.address(&indices),
        vf_offsets: gpu.address(&offsets),
        vf_corners: gpu.address(&corners),
        boxes: gpu.address(&boxes),
        order: gpu.address(&order),
        triangles: bvh.triangles() as u32,
        depth: bvh.depth,
        side: program.side,
        distance: program.distance,
    };
    let shader = CudaShader::program_of(
        ENVELOPE_PROGRAM.name,
        &[crate::distance::cuda::TRIANGLE, ENVELOPE_PROGRAM],
    );
    // (the program's runs are long walks bound by dependent loads: hashing's batches get 256
    // threads rather than the shading default's 128, more walks in flight)
    let blocks = BlockSizes {
        hash: 256,
        ..Default::default()
    };
    let geometry = CudaGeometry::with_blocks(gpu.clone(), shader, true, blocks)
        .map_err(|e| EnvelopeError::Device(e.to_string()))?;
    let out = geometry
        .process(strategy, &table, v, program.indices)
        .map_err(|e| EnvelopeError::Device(e.to_string()))?;
    let mut records: Vec<Record> = (0..v as u32).map(|i| program.pinned(i)).collect();
    for (&id, r) in program.indices.iter().zip(&out.queue) {
        records[id as usize] = [
            r.world.x, r.world.y, r.world.z, r.uv.x, r.normal.x, r.normal.y, r.normal.z, r.extra,
        ];
    }
    // (the buffers the table points at live until here, past the launch and its download)
    drop((positions, indices, offsets, corners, boxes, order));
    Ok((records, out.stats, out.kernel_ms))
}
