//! A mesh's attributes on the device: what the stages that keep a mesh there hand each other.

use crate::context::Gpu;
use crate::error::GpuError;
use cudarc::driver::CudaSlice;
use rxpipe_core::mesh::Mesh;

/// A mesh's attributes on the device, as flat arrays: three floats per position and normal, two
/// per uv, three indices per triangle.
pub struct DeviceAttributes {
    /// three floats per vertex
    pub positions: CudaSlice<f32>,
    /// three floats per vertex, when the mesh has normals
    pub normals: Option<CudaSlice<f32>>,
    /// two floats per vertex, when the mesh has texture coordinates
    pub uvs: Option<CudaSlice<f32>>,
    /// three per triangle
    pub indices: CudaSlice<u32>,
    /// vertices
    pub vertex_count: usize,
    /// indices (three per triangle)
    pub index_count: usize,
}

impl DeviceAttributes {
    /// Uploads a host mesh's attributes.
    pub fn upload(gpu: &Gpu, m: &Mesh) -> Result<DeviceAttributes, GpuError> {
        let floats = |v: &[f32], what| gpu.upload(v, what);
        Ok(DeviceAttributes {
            positions: floats(bytemuck::cast_slice(&m.positions), "positions")?,
            normals: match &m.normals {
                Some(n) => Some(floats(bytemuck::cast_slice(n), "normals")?),
                None => None,
            },
            uvs: match &m.uvs {
                Some(u) => Some(floats(bytemuck::cast_slice(u), "texture coordinates")?),
                None => None,
            },
            indices: gpu.upload(&m.indices, "indices")?,
            vertex_count: m.vertex_count(),
            index_count: m.indices.len(),
        })
    }
}
