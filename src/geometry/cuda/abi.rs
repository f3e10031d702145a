//! The Rust mirrors of the C structs in kernels/common.cuh that cross the host/device boundary
//! (VertexIn, VertexOut, Uniforms): the same bytes on both sides.

use crate::geometry::{Uniforms, VertexIn, VertexOut};
use crate::patch::bounds::{CullView, PatchBound};
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

/// The GPU's `RxgDraw` (kernels/geometry.cu): one mesh of a launch over many, 432 bytes.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct GeoDraw {
    pub u: GpuUniforms,
    /// the draw's first block of the launch
    pub block_base: u32,
    pub vin: u64,
    pub idx: u64,
    /// batch starts (dynamic batches) or patch vertex lists (patch)
    pub aux: u64,
    /// patch runs
    pub runs: u64,
    pub out: u64,
    pub corners: u64,
    pub counts: u64,
    pub total: u64,
    /// indices (naive, warp voting), vertices (multi) or list entries (patch)
    pub n: u32,
    pub nruns: u32,
    /// the counts to clear and sum, and their first chunk of the count launches
    pub ncounts: u32,
    pub count_base: u32,
    /// the mesh's batch tables (hashing; 0: hash each batch): numbers, vertices, counts
    pub tab_numbers: u64,
    pub tab_vertices: u64,
    pub tab_counts: u64,
    /// the batches' bounds (0: no batch is culled whole) and the draw's view of its object
    pub bounds: u64,
    pub view: GpuCullView,
}

const _: () = assert!(size_of::<GpuUniforms>() == 180 && size_of::<GeoDraw>() == 432);

/// The GPU's `RxpCullView` (kernels/batch_cull.cu): a [`CullView`]'s planes, their normals'
/// lengths and the eye, 136 bytes (the facing is the fused draw's cull mode).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub struct GpuCullView {
    pub planes: [f32; 24],
    pub norms: [f32; 6],
    pub eye: [f32; 3],
    pub pad: f32,
}

impl From<&CullView> for GpuCullView {
    fn from(v: &CullView) -> GpuCullView {
        let mut planes = [0.0; 24];
        for (k, p) in v.planes.iter().enumerate() {
            planes[4 * k..4 * k + 4].copy_from_slice(&p.to_array());
        }
        GpuCullView {
            planes,
            norms: v.norms,
            eye: v.eye.to_array(),
            pad: 0.0,
        }
    }
}

/// A batch's bounds on the GPU (`RxpBound`, kernels/batch_cull.cu): a [`PatchBound`]'s centre,
/// radius, axis and cutoff, 32 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub struct GpuBound(pub [f32; 8]);

impl From<GpuBound> for PatchBound {
    fn from(b: GpuBound) -> PatchBound {
        let f = b.0;
        PatchBound {
            center: glam::Vec3::new(f[0], f[1], f[2]),
            radius: f[3],
            axis: glam::Vec3::new(f[4], f[5], f[6]),
            cutoff: f[7],
        }
    }
}

// SAFETY: plain floats with the layout of the CUDA structs; all-zero bits are valid values.
unsafe impl DeviceRepr for GpuBound {}
unsafe impl ValidAsZeroBits for GpuBound {}

// SAFETY: plain numbers with the layout of the CUDA struct; all-zero bits are a valid value.
unsafe impl DeviceRepr for GeoDraw {}
unsafe impl ValidAsZeroBits for GeoDraw {}

/// The raster stage's side of a fused geometry launch (`RxpFused` in kernels/geometry_fused.cu):
/// device addresses of the frame's depth keys (emptied before), each frame triangle's first
/// record and flags, setup's lists and their two counts, the raster counters, and the launch's
/// per-draw table (filled in by [`super::CudaGeometry::launch_draws`]); the frame's size and the
/// lists' capacity; and the frame's survivor vertices (`vcap` shaded vertices), where the
/// triangles that survive setup get theirs.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct FusedTarget {
    pub keys: u64,
    pub first: u64,
    pub tflags: u64,
    pub list: u64,
    pub lists: u64,
    pub counters: u64,
    pub draws: u64,
    /// the batches to draw, when whole batches are culled (0: every block draws its own), and
    /// the counter that counts them
    pub batches: u64,
    pub width: i32,
    pub height: i32,
    pub cap: u32,
    pub listed: u32,
    pub vertices: u64,
    pub vcap: u64,
}

/// One draw of a fused launch (`RxpFusedDraw`): where its triangles start in the frame, its cull
/// mode (as the raster stage's draw table has it), its triangles' flags, whether its small
/// triangles are rasterised in the geometry stage (1: neither alpha-tested nor blended), and
/// whether its batches may be culled whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FusedDraw {
    pub tri_base: u32,
    pub cull: u32,
    pub flags: u32,
    pub small: u32,
    /// 1: whole batches may be culled by their bounds (0 in the shading-rate mode, whose frame
    /// shows how often each vertex was shaded)
    pub cull_batches: u32,
}

// SAFETY: plain integers with the layout of the CUDA structs; all-zero bits are valid values.
unsafe impl DeviceRepr for FusedTarget {}
unsafe impl DeviceRepr for FusedDraw {}
unsafe impl ValidAsZeroBits for FusedDraw {}
