//! The Rust mirrors of the C structs in kernels/common.cuh that cross the host/device boundary
//! (VertexIn, VertexOut, Uniforms): the same bytes on both sides.

use crate::geometry::{Uniforms, VertexIn, VertexOut};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// The GPU's `VertexOut`: 64 bytes, as in kernels/common.cuh (clip 0..4, world 4..7, normal
/// 7..10, uv 10..12, extra 12, three floats of padding).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(16))]
pub struct GpuVertexOut(pub [f32; 16]);

// SAFETY: plain floats with the layout of the CUDA struct; all-zero bits are a valid value.
unsafe impl DeviceRepr for GpuVertexOut {}
unsafe impl ValidAsZeroBits for GpuVertexOut {}
// SAFETY: `VertexIn` is `repr(C)`: three, three and two floats, as CUDA's `VertexIn`.
unsafe impl DeviceRepr for VertexIn {}
// SAFETY: plain floats; all-zero bits are a valid value.
unsafe impl ValidAsZeroBits for VertexIn {}

impl From<GpuVertexOut> for VertexOut {
    fn from(g: GpuVertexOut) -> VertexOut {
        let f = g.0;
        VertexOut {
            clip: glam::Vec4::new(f[0], f[1], f[2], f[3]),
            world: glam::Vec3::new(f[4], f[5], f[6]),
            normal: glam::Vec3::new(f[7], f[8], f[9]),
            uv: glam::Vec2::new(f[10], f[11]),
            extra: f[12],
        }
    }
}

/// The GPU's `Uniforms`: 180 bytes, passed to every kernel by value.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct GpuUniforms {
    pub model: [f32; 16],
    pub view_proj: [f32; 16],
    pub normal_matrix: [f32; 9],
    pub eye: [f32; 3],
    pub time: f32,
}

// SAFETY: plain floats with the layout of the CUDA struct.
unsafe impl DeviceRepr for GpuUniforms {}

impl From<&Uniforms> for GpuUniforms {
    fn from(u: &Uniforms) -> GpuUniforms {
        GpuUniforms {
            model: u.model.to_cols_array(),
            view_proj: u.view_proj.to_cols_array(),
            normal_matrix: u.normal_matrix.to_cols_array(),
            eye: u.eye.to_array(),
            time: u.time,
        }
    }
}
