//! The raster stage on the GPU (kernels/raster*.cu), side by side with the CPU rasteriser in this
//! module: setup, binning to 32x32 tiles, per-tile rasterisation with a depth test and shading of
//! the visible fragment, into an RGBA8 colour buffer and a depth buffer on the device that are
//! downloaded once per frame.
//!
//! Every buffer whose size depends on what the frame produces (setup records, tile bins) is
//! checked after the frame: when a count exceeded its buffer, the buffer grows to fit and the
//! frame is rasterised again, and [`CudaRaster::grown`] says so. Nothing overflows silently.

mod check;
mod enqueue;
mod material;

use super::tile::TILE;
use super::{CullMode, RasterError, RasterOutput, RasterSettings, RasterStats, ShadingMode};
use crate::geometry::cuda::{
    DeviceMesh, DeviceQueue, Fused, FusedDraw, FusedTarget, GpuVertexOut, TriangleRuns,
};
use crate::gpu::kernels::{self, Source};
use rxpipe_core::color::srgb_lut;

/// The raster stage's kernels, in the order they are compiled: the definitions they share, the
/// triangle setup they share with the fused geometry stage, setup, binning, tile rasterisation
/// and shading.
pub const KERNELS: [Source<'static>; 5] = [
    rxpipe_gpu::kernel_source!("raster.cuh"),
    rxpipe_gpu::kernel_source!("setup.cuh"),
    rxpipe_gpu::kernel_source!("raster_setup.cu"),
    rxpipe_gpu::kernel_source!("raster_bin.cu"),
    rxpipe_gpu::kernel_source!("raster_tile.cu"),
];
/// The material path the shading reads (surfaces, textures, the BRDF; needs [`kernels::BLOCKS`]).
pub const MATERIAL: [Source<'static>; 3] = [
    rxpipe_gpu::kernel_source!("material.cuh"),
    rxpipe_gpu::kernel_source!("material_texture.cuh"),
    rxpipe_gpu::kernel_source!("material_shade.cuh"),
];
use crate::gpu::gate::StreamGate;
use crate::gpu::{Context, Gpu, GpuError};
use check::check_draws;
use cudarc::driver::{CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr};
use cudarc::driver::{DevicePtr, ValidAsZeroBits};
use glam::Vec3;
use material::{alpha_class, DeviceMaterials, DrawDesc};
use std::collections::HashMap;
use std::sync::Arc;

/// Threads per block of every raster kernel (RXP_RBLOCK).
const BLOCK: u32 = 256;
/// The most blocks of the kernels whose grids stride over a count only the device knows (the
/// surviving triangles, the records): 16 for each of 132 SMs, enough to fill any GPU.
const SETUP_BLOCKS: u32 = 2112;
/// Blocks of rxp_bin_big, whose warps stride over the frame's big boxes (setup's list of boxes
/// over 8 tiles), 8 warp slices a box
const BIG_BLOCKS: u32 = 264;
/// The same for the clipper, whose lists are short (two blocks for each of 132 SMs).
const CLIP_BLOCKS: u32 = 264;
/// A setup record (`SetupTri` in kernels/raster.cuh) is 168 bytes: 21 eight-byte words.
const RECORD_WORDS: usize = 21;
/// The flag of a draw's `cull` that flips which winding is its front (RXP_CULL_MIRRORED in
/// kernels/raster.cuh).
const CULL_MIRRORED: u32 = 4;
/// Counters the kernels keep (RXP_C_* in kernels/raster.cuh).
const C_CULLED: usize = 0;
const C_REJECTED: usize = 1;
const C_CLIPPED: usize = 2;
const C_RECORDS: usize = 3;
const C_BINNED: usize = 4;
const C_FRAGMENTS: usize = 5;
const C_RASTERIZED: usize = 6;
/// (the eighth, RXP_C_BIG, the count of big boxes rxp_bin_fill lists, is the kernels' own)
const C_FUSED: usize = 8;
const C_BATCHES_CULLED: usize = 9;
const C_BATCH_TRIANGLES: usize = 10;
const C_BATCH_VERTICES: usize = 11;
/// (the thirteenth and fourteenth, RXP_C_BATCH_LIST and RXP_C_BATCH_LIST2, the batches listed
/// for the two fused launches, are the geometry stage's: `geometry::cuda::draws`)
const C_BATCHES_OCCLUDED: usize = 14;
/// the survivor vertices a fused frame's geometry stage wrote into each of the
/// `VERTEX_SLABS` equal parts of `survivor_vertices` (or would have: more than a part holds,
/// and the frame runs again with more), each on a 128-byte line of its own, `VERTEX_STRIDE`
/// words apart (the counters' buffer is 128-byte aligned)
const C_VERTICES: usize = 16;
const VERTEX_SLABS: usize = 32;
const VERTEX_STRIDE: usize = 16;
const COUNTERS: usize = C_VERTICES + VERTEX_SLABS * VERTEX_STRIDE;
/// The counters' buffer holds one more word: the two 32-bit counts of the setup lists
/// (rxp_setup_classify's `lists`), so that one clear resets both.
const COUNTER_WORDS: usize = COUNTERS + 1;

/// Whether the frame's tiles without blended triangles leave their pixels to rxp_resolve: lit
/// frames with materials (a frame without materials resolves in the tile kernel: the extra pass
/// over the frame's keys costs more than it gains there).
fn resolves_apart(draws: &[GpuDraw], s: &RasterSettings) -> bool {
    s.shading == ShadingMode::Lit && draws.iter().any(|d| d.material.is_some())
}

/// The most blocks the tile kernel takes beyond one a tile, for dense tiles split over several
/// (RXP_MAX_EXTRA in kernels/raster.cuh).
const MAX_EXTRA: usize = 1024;

/// A draw's cull mode as the kernels take it (RxpDraw::cull): a double-sided material's
/// triangles are never culled; a mirrored draw's flag flips which winding is its front
/// (RXP_CULL_MIRRORED).
fn draw_cull(d: &GpuDraw, s: &RasterSettings) -> u32 {
    let cull = match s.cull {
        _ if d.material.is_some_and(|m| m.double_sided) => 0,
        CullMode::None => 0,
        CullMode::Back => 1,
        CullMode::Front => 2,
    };
    cull | if d.mirrored { CULL_MIRRORED } else { 0 }
}

/// The caller's work a frame's raster stage runs first (its geometry stage): given the stream
/// for work nothing of the frame waits for, and in a fused frame the raster stage's side
/// ([`CudaRaster::render_after`]).
pub type Before<'a> = dyn FnMut(&Arc<CudaStream>, Option<&Fused>) -> Result<(), RasterError> + 'a;

/// Where a triangle's flags hold its draw and its alpha class (RXP_F_DRAW_SHIFT,
/// RXP_F_ALPHA_SHIFT in kernels/raster.cuh).
const DRAW_SHIFT: u32 = 8;
const ALPHA_SHIFT: u32 = 5;

/// The frame's constants, as `RasterParams` in kernels/raster.cuh.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct Params {
    width: i32,
    height: i32,
    tiles_x: i32,
    tiles_y: i32,
    shading: i32,
    to_light: [f32; 3],
    ambient: f32,
    light_color: [f32; 3],
    eye: [f32; 3],
    near_z: f32,
    far_z: f32,
    background: u32,
    record_capacity: u32,
    bin_capacity: u32,
    /// whether rxp_bin_scan may split dense tiles over several blocks (RXP_SPLIT_RECORDS)
    split: u32,
    /// whether the geometry stage ran fused (kernels/geometry_fused.cu)
    fused: u32,
    /// whether the frame is drawn over the colour and depth buffers as they are
    /// ([`RasterSettings::over_target`])
    over_target: u32,
}

// SAFETY: plain integers and floats with the layout of the CUDA struct.
unsafe impl DeviceRepr for Params {}

/// One draw for the GPU rasteriser: a triangle queue on the device (as the GPU geometry stage
/// writes it: shaded vertices and, unless flat, each triangle's corners among them) and its base
/// colour.
pub struct GpuDraw<'a> {
    pub queue: &'a DeviceQueue,
    /// where each triangle's corners are among the queue's vertices (`None`: flat, three
    /// vertices per triangle; [`DeviceQueue::corners_for`])
    pub corners: Option<&'a CudaSlice<u32>>,
    pub triangles: usize,
    /// linear RGBA
    pub color: [f32; 4],
    /// for the shading-rate mode: the mesh the queue was shaded from (its indices give each
    /// queue entry's source vertex) and the per-vertex invocation counts
    pub rate: Option<(&'a DeviceMesh, &'a CudaSlice<u32>)>,
    /// a value per triangle that its fragments see unchanged, as f32 bits (the patch mode's
    /// [`rxpipe_core::color::patch_value`]); `None`: 0
    pub faces: Option<&'a CudaSlice<u32>>,
    /// for a view of a mesh's triangles: the triangles it keeps (the corners, values and rate
    /// indices above are then the whole mesh's, read through the runs)
    pub runs: Option<&'a TriangleRuns>,
    /// the material (`None`: the lit mode with `color`), shaded as the CPU's
    /// [`super::MaterialShader`] does; its double-sidedness and alpha mode apply in every mode
    pub material: Option<&'a rxpipe_core::material::Material>,
    /// vertex colours for the material: the mesh's indices (each corner's source vertex; a
    /// view's are the whole mesh's) and a linear RGBA colour (four floats) per vertex
    pub colors: Option<(&'a CudaSlice<u32>, &'a CudaSlice<f32>)>,
    /// tangents for the material's normal map: the mesh's indices (as for the colours), four
    /// floats per vertex (xyz and the bitangent's sign) and the object's model matrix
    pub tangents: Option<(&'a CudaSlice<u32>, &'a CudaSlice<f32>, glam::Mat4)>,
    /// the second uv set for the textures that read it: the mesh's indices (as for the
    /// colours), two floats per vertex
    pub uvs1: Option<(&'a CudaSlice<u32>, &'a CudaSlice<f32>)>,
    /// the model matrix mirrors: culling and two-sided shading take clockwise as the front (as
    /// the CPU's [`super::Draw::mirrored`])
    pub mirrored: bool,
}

/// Device times of the last frame's stages, in milliseconds (CUDA events).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct StageTimes {
    /// from `CudaRaster::mark_start` to the start of setup (the caller's geometry stage)
    pub before_ms: f64,
    pub setup_ms: f64,
    pub bin_ms: f64,
    pub raster_ms: f64,
}

/// The raster stage's kernels, fetched once (a kernel's first fetch may load it: not for the
/// time the stream is held).
struct Kernels {
    classify: CudaFunction,
    setup: CudaFunction,
    clip: CudaFunction,
    bin_big: CudaFunction,
    scan: CudaFunction,
    fill: CudaFunction,
    raster: CudaFunction,
    resolve: CudaFunction,
}

/// What a frame's material path needs beyond the plain raster module's: mesh tangents (a draw
/// with them has a normal map; kernels/material.cuh, RXM_TANGENTS), and a dielectric
/// reflectance or specular weight of a material's own (KHR_materials_ior and _specular,
/// RXM_SPECULAR), a clear coat (KHR_materials_clearcoat, RXM_CLEARCOAT), and a texture that
/// reads a mesh's second uv set (RXM_UV1). The raster module is built for each combination a
/// frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Variant {
    tangents: bool,
    specular: bool,
    clearcoat: bool,
    uv1: bool,
}

impl Variant {
    fn of(draws: &[GpuDraw]) -> Variant {
        Variant {
            tangents: draws.iter().any(|d| {
                d.tangents.is_some() && d.material.is_some_and(|m| m.normal_texture.is_some())
            }),
            specular: draws.iter().any(|d| {
                d.material.is_some_and(|m| {
                    m.specular_f0 != glam::Vec3::splat(0.04) || m.specular_weight != 1.0
                })
            }),
            clearcoat: draws
                .iter()
                .any(|d| d.material.is_some_and(|m| m.clearcoat > 0.0)),
            uv1: draws.iter().any(|d| {
                d.uvs1.is_some()
                    && d.material
                        .is_some_and(|m| m.textures().any(|t| t.uv_set == 1))
            }),
        }
    }
}

/// The raster module of a [`Variant`].
fn raster_module(gpu: &Gpu, v: Variant) -> Result<Arc<cudarc::driver::CudaModule>, GpuError> {
    let mut defines = Vec::new();
    if v.tangents {
        defines.push(("RXM_TANGENTS", "1".to_string()));
    }
    if v.specular {
        defines.push(("RXM_SPECULAR", "1".to_string()));
    }
    if v.clearcoat {
        defines.push(("RXM_CLEARCOAT", "1".to_string()));
    }
    if v.uv1 {
        defines.push(("RXM_UV1", "1".to_string()));
    }
    gpu.module(
        "raster",
        &[
            kernels::COMMON,
            kernels::BLOCKS,
            MATERIAL[0],
            MATERIAL[1],
            MATERIAL[2],
            KERNELS[0],
            KERNELS[1],
            KERNELS[2],
            KERNELS[3],
            KERNELS[4],
        ],
        &defines,
    )
}

/// The GPU rasteriser and its buffers, kept from frame to frame.
pub struct CudaRaster {
    pub gpu: Arc<Gpu>,
    /// when the last frame's kernels were all enqueued (its host times split there)
    enqueued_at: Option<std::time::Instant>,
    k: Kernels,
    /// the tile and resolve kernels of the raster module's variants a frame has needed
    /// ([`Variant`]; the plain one's are `k`'s, which the others' code would slow)
    variants: HashMap<Variant, (CudaFunction, CudaFunction)>,
    /// the variant the frame being rendered needs
    variant: Variant,
    lut: CudaSlice<u8>,
    records: CudaSlice<u64>,
    record_capacity: usize,
    first: CudaSlice<u32>,
    /// per triangle of the frame with records: its (first) record's flags where it is kept
    /// whole, 0 where it is clipped (the resolve reads a whole triangle's draw and side here)
    tflags: CudaSlice<u32>,
    /// the triangles of a draw that survive their clip positions (rxp_setup_classify): those
    /// kept whole from the front, those to clip from the back; and the two counts per draw
    list: CudaSlice<u32>,
    tile_counts: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
    cursors: CudaSlice<u32>,
    /// the tiles busiest first, in which the tile kernel takes them
    order: CudaSlice<u32>,
    /// per tile: whether the tile kernel left its pixels to rxp_resolve
    deferred: CudaSlice<u32>,
    /// per pixel: the depth keys of deferred tiles
    keys: CudaSlice<u64>,
    bins: CudaSlice<u32>,
    bin_capacity: usize,
    /// a fused frame's shaded vertices of the triangles that survive setup (the draws' queues
    /// hold none for it: kernels/geometry_fused.cu); sized like the records, and grown when a
    /// frame needs more
    survivor_vertices: CudaSlice<GpuVertexOut>,
    /// the records whose boxes span many tiles, binned by rxp_bin_big (record capacity)
    big: CudaSlice<u32>,
    /// the tiles rxp_bin_scan split over several blocks: their number, then the tiles
    splits: CudaSlice<u32>,
    colors: CudaSlice<f32>,
    /// the frame's draws, materials, lights and textures as the material path reads them
    materials: DeviceMaterials,
    counters: CudaSlice<u64>,
    /// whether the counters are zero: after their allocation and after each frame's download,
    /// which zeroes them for the next frame off its critical path (a frame that finds them not
    /// zeroed, after an error, zeroes them itself)
    counters_zeroed: bool,
    /// RGBA8 and depth of the frame
    color: CudaSlice<u8>,
    depth: CudaSlice<f32>,
    /// the colour and depth a frame is drawn over ([`RasterSettings::over_target`])
    target: (CudaSlice<u8>, CudaSlice<f32>),
    events: [CudaEvent; 5],
    /// holds the frame's kernels until all are enqueued (None: the device cannot wait on memory)
    gate: Option<StreamGate>,
    /// a second stream (higher priority) for setup's clipping beside the rest of setup, forked
    /// from the device's stream and joined back by the two events
    side: Arc<CudaStream>,
    fork: CudaEvent,
    join: CudaEvent,
    /// what grew during the last frame, for the user (empty when nothing had to)
    pub grown: Vec<String>,
    /// the last frame's stage times
    pub times: StageTimes,
    /// page-locked staging for the colour and depth downloads, kept from frame to frame
    staging: (
        Option<cudarc::driver::PinnedHostSlice<u8>>,
        Option<cudarc::driver::PinnedHostSlice<f32>>,
    ),
}

/// A stream of the device's highest priority, so that its few blocks are scheduled before those
/// of a kernel launched beside it.
fn side_stream(gpu: &Gpu) -> Result<Arc<CudaStream>, GpuError> {
    let (mut least, mut greatest) = (0i32, 0i32);
    gpu.ctx.bind_to_thread().ctx("binding the context")?;
    // SAFETY: a plain query of the bound context with valid out-pointers.
    let r = unsafe { cudarc::driver::sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
    let priority = match r {
        cudarc::driver::sys::CUresult::CUDA_SUCCESS => greatest,
        _ => 0,
    };
    gpu.ctx
        .new_stream_with_priority(priority)
        .ctx("creating a stream")
}

fn grow<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    buf: &mut CudaSlice<T>,
    n: usize,
    what: &str,
) -> Result<(), GpuError> {
    if buf.len() < n.max(1) {
        // free the old buffer first: the two need not fit together
        *buf = gpu.zeros(1, what)?;
        *buf = gpu.zeros(n, what)?;
    }
    Ok(())
}

impl CudaRaster {
    /// Compiles (or fetches from the caches) the raster kernels.
    pub fn new(gpu: Arc<Gpu>) -> Result<CudaRaster, GpuError> {
        CudaRaster::with_capacity(gpu, 0, 0)
    }

    /// [`CudaRaster::new`] with initial room for `records` setup records and `bins` tile-bin
    /// entries (both grow as frames need; tests start them tiny to exercise the growing).
    pub fn with_capacity(
        gpu: Arc<Gpu>,
        records: usize,
        bins: usize,
    ) -> Result<CudaRaster, GpuError> {
        let module = raster_module(&gpu, Variant::default())?;
        let lut = gpu.upload(&srgb_lut()[..], "the sRGB table")?;
        let f = |name: &str| gpu.function(&module, name);
        let k = Kernels {
            classify: f("rxp_setup_classify")?,
            setup: f("rxp_setup")?,
            clip: f("rxp_setup_clip")?,
            bin_big: f("rxp_bin_big")?,
            scan: f("rxp_bin_scan")?,
            fill: f("rxp_bin_fill")?,
            raster: f("rxp_raster")?,
            resolve: f("rxp_resolve")?,
        };
        let event = || {
            gpu.ctx
                .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .ctx("creating an event")
        };
        // (events that only order the streams: no timing)
        let sync_event = || {
            gpu.ctx
                .new_event(Some(
                    cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
                ))
                .ctx("creating an event")
        };
        Ok(CudaRaster {
            variants: HashMap::new(),
            variant: Variant::default(),
            records: gpu.zeros(records * RECORD_WORDS, "setup records")?,
            record_capacity: records,
            first: gpu.zeros(1, "first records")?,
            tflags: gpu.zeros(1, "triangle flags")?,
            list: gpu.zeros(1, "setup lists")?,
            tile_counts: gpu.zeros(1, "tile counts")?,
            offsets: gpu.zeros(1, "tile offsets")?,
            cursors: gpu.zeros(1, "tile cursors")?,
            order: gpu.zeros(1, "tile order")?,
            deferred: gpu.zeros(1, "deferred tiles")?,
            keys: gpu.zeros(1, "depth keys")?,
            big: gpu.zeros(1, "big-box records")?,
            splits: gpu.zeros(MAX_EXTRA + 1, "split tiles")?,
            bins: gpu.zeros(bins, "tile bins")?,
            bin_capacity: bins,
            survivor_vertices: gpu.zeros(1, "survivor vertices")?,
            colors: gpu.zeros(4, "draw colours")?,
            materials: DeviceMaterials::new(&gpu)?,
            counters: gpu.zeros(COUNTER_WORDS, "raster counters")?,
            counters_zeroed: true,
            color: gpu.zeros(4, "the colour buffer")?,
            depth: gpu.zeros(1, "the depth buffer")?,
            target: (
                gpu.zeros(4, "the colour to draw over")?,
                gpu.zeros(1, "the depth to draw over")?,
            ),
            events: [event()?, event()?, event()?, event()?, event()?],
            gate: StreamGate::new(&gpu)?,
            side: side_stream(&gpu)?,
            fork: sync_event()?,
            join: sync_event()?,
            grown: Vec::new(),
            staging: (None, None),
            times: StageTimes::default(),
            enqueued_at: None,
            k,
            lut,
            gpu,
        })
    }

    /// Marks the start of the frame on the stream (before the caller's geometry stage is
    /// enqueued), so that [`StageTimes::before_ms`] measures it. The stream is held from here
    /// until the frame is enqueued ([`CudaRaster::enqueue`] releases it), so that its kernels
    /// run back to back instead of each waiting for the host to issue it.
    fn mark_start(&mut self) -> Result<(), GpuError> {
        if let Some(g) = &mut self.gate {
            g.hold(&self.gpu)?;
        }
        self.events[0]
            .record(&self.gpu.stream)
            .ctx("recording an event")?;
        Ok(())
    }

    fn params(&self, s: &RasterSettings) -> Params {
        let lut = srgb_lut();
        Params {
            width: s.width as i32,
            height: s.height as i32,
            tiles_x: s.width.div_ceil(TILE) as i32,
            tiles_y: s.height.div_ceil(TILE) as i32,
            shading: match s.shading {
                ShadingMode::Lit => 0,
                ShadingMode::Normals => 1,
                ShadingMode::Depth => 2,
                ShadingMode::ShadingRate => 3,
                ShadingMode::Patches => 4,
            },
            to_light: (-s.light.direction).normalize_or_zero().to_array(),
            ambient: s.light.ambient,
            light_color: s.light.color.to_array(),
            eye: s.eye.to_array(),
            near_z: s.depth_range.0,
            far_z: s.depth_range.1,
            background: rxpipe_core::color::pack_with(lut, Vec3::from_array(s.background)),
            record_capacity: self.record_capacity as u32,
            bin_capacity: self.bin_capacity as u32,
            split: 0,
            fused: 0,
            over_target: s.over_target as u32,
        }
    }

    /// Rasterises the draws (earlier draws win depth ties, as on the CPU) and downloads colour
    /// and depth into `out`. Buffers that turn out too small grow, and the frame is rasterised
    /// again (listed in [`CudaRaster::grown`]).
    pub fn render(
        &mut self,
        draws: &[GpuDraw],
        s: &RasterSettings,
        out: &mut RasterOutput,
    ) -> Result<(), RasterError> {
        self.render_after(draws, s, out, false, &mut |_, _| Ok(()))
    }

    /// [`CudaRaster::render`] after `before`, which enqueues the caller's work that the draws
    /// wait for (the frame's geometry stage): it runs after the raster stage's host work (its
    /// tables uploaded), so that the device runs the two stages back to back, and its time is
    /// [`StageTimes::before_ms`]. `before` may also enqueue work that nothing of the raster stage
    /// waits for on the stream it is given (the raster stage's side stream, joined back before
    /// binning ends, so within the frame's time).
    ///
    /// With `fuse`, `before` is given the raster stage's side of a fused geometry stage
    /// ([`Fused`]: kernels/geometry_fused.cu), which it must run: the geometry stage then
    /// classifies the frame's triangles, lists the survivors for setup and rasterises the small
    /// ones itself. `before` runs again when the frame is rasterised again.
    pub fn render_after(
        &mut self,
        draws: &[GpuDraw],
        s: &RasterSettings,
        out: &mut RasterOutput,
        fuse: bool,
        before: &mut Before<'_>,
    ) -> Result<(), RasterError> {
        if s.width == 0 || s.height == 0 || s.width > 16384 || s.height > 16384 {
            return Err(RasterError::Size(s.width, s.height));
        }
        let triangles: usize = draws.iter().map(|d| d.triangles).sum();
        if triangles >= u32::MAX as usize || draws.len() >= 1 << 24 {
            return Err(GpuError::Limit(format!(
                "{triangles} triangles in {} draws are more than the GPU rasteriser takes in one frame (2^32 - 1 triangles, 2^24 draws)",
                draws.len()
            ))
            .into());
        }
        crate::raster::check_target(s, out)?;
        self.grown.clear();
        let pixels = (s.width * s.height) as usize;
        let ntiles = (s.width.div_ceil(TILE) * s.height.div_ceil(TILE)) as usize;
        let gpu = self.gpu.clone();
        grow(&gpu, &mut self.first, triangles, "first records")?;
        grow(&gpu, &mut self.tflags, triangles, "triangle flags")?;
        check_draws(draws)?;
        grow(&gpu, &mut self.list, triangles, "setup lists")?;
        grow(&gpu, &mut self.tile_counts, ntiles, "tile counts")?;
        grow(&gpu, &mut self.offsets, ntiles + 1, "tile offsets")?;
        grow(&gpu, &mut self.cursors, ntiles, "tile cursors")?;
        grow(&gpu, &mut self.order, ntiles + MAX_EXTRA, "tile order")?;
        grow(&gpu, &mut self.deferred, ntiles, "deferred tiles")?;
        // (a frame drawn over its target starts its keys from the target's depths in the tile
        // kernel, which a fused frame's keys would replace)
        let fuse = fuse && triangles > 0 && !s.over_target;
        if resolves_apart(draws, s) || fuse {
            grow(&gpu, &mut self.keys, pixels, "depth keys")?;
        }
        grow(&gpu, &mut self.colors, 4 * draws.len(), "draw colours")?;
        grow(&gpu, &mut self.color, 4 * pixels, "the colour buffer")?;
        grow(&gpu, &mut self.depth, pixels, "the depth buffer")?;
        // Records and bin entries are for the triangles that survive setup, which a big mesh's
        // small, hidden or back-facing triangles mostly do not: the first frame sizes them for
        // every triangle up to a few per pixel, and a frame that needs more grows them.
        let survivors = triangles.min(crate::raster::SURVIVORS_PER_PIXEL * pixels);
        if self.record_capacity == 0 {
            // most triangles make at most one record; clipping may ask for more, then we grow
            self.grow_records(survivors + 1024)?;
            self.grown.clear();
        }
        if self.bin_capacity == 0 {
            self.grow_bins(2 * survivors + 4 * ntiles)?;
            self.grown.clear();
        }
        if fuse && self.survivor_vertices.len() <= 1 {
            // (as many as records: about one new vertex a surviving triangle of a mesh, three of
            // a soup)
            let n = (3 * triangles).min(survivors) + 1024;
            grow(&gpu, &mut self.survivor_vertices, n, "survivor vertices")?;
        }
        let colors: Vec<f32> = draws.iter().flat_map(|d| d.color).collect();
        if !colors.is_empty() {
            gpu.stream
                .memcpy_htod(&colors, &mut self.colors)
                .ctx("uploading draw colours")?;
        }
        let variant = Variant::of(draws);
        self.variant = variant;
        if variant != Variant::default() && !self.variants.contains_key(&variant) {
            let module = raster_module(&gpu, variant)?;
            self.variants.insert(
                variant,
                (
                    gpu.function(&module, "rxp_raster")?,
                    gpu.function(&module, "rxp_resolve")?,
                ),
            );
        }
        let t_tables = std::time::Instant::now();
        let mut tables = self.material_tables(draws, s, fuse)?;
        let tables_ms = t_tables.elapsed().as_secs_f64() * 1e3;
        let t_run = std::time::Instant::now();
        // (the target uploaded now, before the stream is held: a copy from pageable memory waits
        // for the stream, which would wait for the host; each attempt then copies it on the
        // device)
        if s.over_target {
            grow(
                &gpu,
                &mut self.target.0,
                4 * pixels,
                "the colour to draw over",
            )?;
            grow(&gpu, &mut self.target.1, pixels, "the depth to draw over")?;
            gpu.stream
                .memcpy_htod(&out.color, &mut self.target.0)
                .ctx("uploading the colour to draw over")?;
            gpu.stream
                .memcpy_htod(&out.depth, &mut self.target.1)
                .ctx("uploading the depth to draw over")?;
        }
        let counters = self.run(draws, s, ntiles, &mut tables, fuse, before);
        // (an error between the hold and the release left the stream held)
        if let Some(g) = &mut self.gate {
            g.release();
        }
        let counters = counters?;
        let enqueued = self.enqueued_at.take().unwrap_or(t_run);
        out.width = s.width;
        out.height = s.height;
        out.coverage = None;
        if s.on_device {
            // (kept in `color` and `depth` for the caller: `frame_buffers`)
            out.color.clear();
            out.depth.clear();
            gpu.sync()?;
        } else {
            out.color.resize(4 * pixels, 0);
            self.download(s, pixels, out)?;
        }
        let ms = |a: usize, b: usize| -> Result<f64, GpuError> {
            Ok(self.events[a]
                .elapsed_ms(&self.events[b])
                .ctx("reading an event")? as f64)
        };
        self.times = StageTimes {
            before_ms: ms(0, 1)?,
            setup_ms: ms(1, 2)?,
            bin_ms: ms(2, 3)?,
            raster_ms: ms(3, 4)?,
        };
        out.stats = RasterStats {
            triangles_in: triangles as u64,
            culled: counters[C_CULLED],
            rejected: counters[C_REJECTED],
            clipped: counters[C_CLIPPED],
            rasterized: counters[C_RASTERIZED],
            fused: counters[C_FUSED],
            batches_culled: counters[C_BATCHES_CULLED],
            batch_culled_triangles: counters[C_BATCH_TRIANGLES],
            batch_unshaded_vertices: counters[C_BATCH_VERTICES],
            batches_occluded: counters[C_BATCHES_OCCLUDED],
            fragments: counters[C_FRAGMENTS],
            setup_ms: self.times.setup_ms,
            bin_ms: self.times.bin_ms,
            raster_ms: self.times.raster_ms,
            host_tables_ms: tables_ms,
            host_launch_ms: enqueued.saturating_duration_since(t_run).as_secs_f64() * 1e3,
            host_wait_ms: enqueued.elapsed().as_secs_f64() * 1e3,
        };
        Ok(())
    }

    /// Downloads the frame's colour (and depth, unless `s` wants colour only) into `out`:
    /// enqueued back to back, each copied out as its chunks arrive.
    fn download(
        &mut self,
        s: &RasterSettings,
        pixels: usize,
        out: &mut RasterOutput,
    ) -> Result<(), GpuError> {
        let gpu = &self.gpu;
        let (color_staging, depth_staging) = (&mut self.staging.0, &mut self.staging.1);
        let color =
            gpu.start_download(&self.color, 4 * pixels, color_staging, "the colour buffer")?;
        let depth = match s.color_only {
            true => None,
            false => {
                Some(gpu.start_download(&self.depth, pixels, depth_staging, "the depth buffer")?)
            }
        };
        color.finish(&mut out.color)?;
        match depth {
            None => out.depth.clear(),
            Some(d) => {
                out.depth.resize(pixels, 1.0);
                d.finish(&mut out.depth)?;
            }
        }
        Ok(())
    }

    /// The last frame's colour (RGBA8) and depth on the device, of its width times height
    /// pixels (the buffers may be longer): what a frame drawn with
    /// [`RasterSettings::on_device`] left there.
    pub fn frame_buffers(&self) -> (&CudaSlice<u8>, &CudaSlice<f32>) {
        (&self.color, &self.depth)
    }

    /// The frame's device work: the caller's `before`, then setup, binning and rasterisation,
    /// enqueued again (after growing) while the raster buffers overflow; returns the counters.
    /// A `fuse`d frame's `before` runs again with them: its geometry stage made setup's lists,
    /// wrote the small triangles' keys and the survivors' vertices (whose buffer the tables
    /// name: made again when it grows). A frame drawn over its target starts every attempt from
    /// it (copied on the device from [`CudaRaster::render_after`]'s upload).
    fn run(
        &mut self,
        draws: &[GpuDraw],
        s: &RasterSettings,
        ntiles: usize,
        tables: &mut material::Tables,
        fuse: bool,
        before: &mut Before<'_>,
    ) -> Result<[u64; COUNTERS], RasterError> {
        self.mark_start()?;
        let mut counters = [0u64; COUNTERS];
        // (at most one growth of each kind: the survivors' vertices, which setup needs to count
        // every record, then the records, which binning needs to count every bin entry, then
        // the bins)
        for attempt in 0..4 {
            let fused = fuse.then(|| self.fused(draws, s));
            let fused = fused.as_ref();
            // (the counters and the setup lists' counts after them)
            if !self.counters_zeroed {
                self.gpu
                    .stream
                    .memset_zeros(&mut self.counters)
                    .ctx("clearing the raster counters")?;
            }
            self.counters_zeroed = false;
            if attempt == 0 || fused.is_some() {
                let pixels = s.width as usize * s.height as usize;
                self.run_before(fused, pixels, before)?;
            }
            if s.over_target {
                let pixels = s.width as usize * s.height as usize;
                let stream = &self.gpu.stream;
                stream
                    .memcpy_dtod(
                        &self.target.0.slice(0..4 * pixels),
                        &mut self.color.slice_mut(0..4 * pixels),
                    )
                    .ctx("copying the colour to draw over")?;
                stream
                    .memcpy_dtod(
                        &self.target.1.slice(0..pixels),
                        &mut self.depth.slice_mut(0..pixels),
                    )
                    .ctx("copying the depth to draw over")?;
            }
            counters = self.enqueue(draws, s, ntiles, tables, fused.is_some())?;
            let records = counters[C_RECORDS] as usize;
            let binned = counters[C_BINNED] as usize;
            // the kernels address records and bin entries with 32-bit indices
            if records >= u32::MAX as usize || binned >= u32::MAX as usize {
                return Err(GpuError::Limit(format!(
                    "this frame needs {records} setup records and {binned} tile-bin entries; the GPU rasteriser holds at most 2^32 - 2 of each (draw fewer triangles, or in several frames)"
                ))
                .into());
            }
            let mut again = false;
            let parts = counters[C_VERTICES..].iter().step_by(VERTEX_STRIDE);
            // (the fullest part decides: each holds an equal share)
            let vertices = VERTEX_SLABS * *parts.max().expect("parts") as usize;
            if fuse && vertices > self.survivor_vertices.len() / VERTEX_SLABS * VERTEX_SLABS {
                if vertices >= u32::MAX as usize {
                    return Err(GpuError::Limit(format!(
                        "this frame's surviving triangles need {vertices} shaded vertices; the GPU rasteriser holds at most 2^32 - 1 (draw fewer triangles, or in several frames)"
                    ))
                    .into());
                }
                let n = (vertices + vertices / 4).min(u32::MAX as usize - 1);
                self.grown.push(format!(
                    "survivor vertices grew from {} to {n}",
                    self.survivor_vertices.len()
                ));
                grow(
                    &self.gpu,
                    &mut self.survivor_vertices,
                    n,
                    "survivor vertices",
                )?;
                *tables = self.material_tables(draws, s, fuse)?;
                again = true;
            }
            if records > self.record_capacity {
                self.grow_records(records + records / 4)?;
                again = true;
            } else if binned > self.bin_capacity && !again {
                // (counted over all records: with too few records, or survivors without their
                // vertices, it depends on which fitted)
                self.grow_bins(binned + binned / 4)?;
                again = true;
            }
            if !again {
                break;
            }
            if attempt == 3 {
                return Err(GpuError::Limit(
                    "the raster buffers kept overflowing after growing three times".into(),
                )
                .into());
            }
            // the caller's geometry is not part of a repeated raster's time (unless fused)
            self.mark_start()?;
        }
        Ok(counters)
    }

    /// The caller's `before` on the frame's stream (a fused frame's keys of its `pixels`
    /// emptied first).
    fn run_before(
        &mut self,
        fused: Option<&Fused>,
        pixels: usize,
        before: &mut Before<'_>,
    ) -> Result<(), RasterError> {
        if fused.is_some() {
            let (at, _) = self.keys.device_ptr(&self.gpu.stream);
            // SAFETY: the keys hold at least the frame's pixels (grown in `render_after`), 8
            // bytes each; all ones is the empty key
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    at,
                    0xff,
                    pixels.min(self.keys.len()) * 8,
                    self.gpu.stream.cu_stream(),
                )
            }
            .ctx("emptying the depth keys")?;
        }
        let side = self.side.clone();
        // (a panic in the caller's work must not leave the stream held for whoever uses it
        // next: released, and the panic goes on)
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| before(&side, fused))) {
            Ok(r) => r,
            Err(panic) => {
                if let Some(g) = &mut self.gate {
                    g.release();
                }
                std::panic::resume_unwind(panic)
            }
        }
    }

    /// The raster stage's side of a fused geometry stage for `draws`: its buffers, and each
    /// draw's triangle base, cull mode and flags as the draw table has them.
    fn fused(&self, draws: &[GpuDraw], s: &RasterSettings) -> Fused {
        let stream = &self.gpu.stream;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let mut base = 0u32;
        let parts = draws
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let alpha = alpha_class(d.material, s);
                // (the fused kernel numbers a triangle by its place in the whole mesh: a view
                // of one run, a window of batches, starts the run's triangles at `base`)
                let first = match d.runs.map(|r| r.host.as_slice()) {
                    Some([start, _, 0]) => *start,
                    _ => 0,
                };
                let part = FusedDraw {
                    tri_base: base.wrapping_sub(first),
                    cull: draw_cull(d, s),
                    flags: (i as u32) << DRAW_SHIFT | alpha << ALPHA_SHIFT,
                    small: (alpha == 0) as u32,
                    cull_batches: (s.shading != ShadingMode::ShadingRate) as u32,
                };
                base += d.triangles as u32;
                (addr(d.queue.vertices.device_ptr(stream)), part)
            })
            .collect();
        Fused {
            target: FusedTarget {
                keys: addr(self.keys.device_ptr(stream)),
                first: addr(self.first.device_ptr(stream)),
                tflags: addr(self.tflags.device_ptr(stream)),
                list: addr(self.list.device_ptr(stream)),
                lists: self.lists_address(),
                counters: addr(self.counters.device_ptr(stream)),
                draws: 0,
                batches: 0,
                width: s.width as i32,
                height: s.height as i32,
                cap: self.list.len() as u32,
                listed: 0,
                vertices: addr(self.survivor_vertices.device_ptr(stream)),
                vcap: self.survivor_vertices.len() as u64,
            },
            draws: parts,
        }
    }

    /// Uploads the material path's tables for `draws` (and the textures of their materials when
    /// the device lacks one). A `fused` frame's draws read their vertices from the survivor
    /// vertices.
    fn material_tables(
        &mut self,
        draws: &[GpuDraw],
        s: &RasterSettings,
        fused: bool,
    ) -> Result<material::Tables, GpuError> {
        let stream = self.gpu.stream.clone();
        let survivors = (
            self.survivor_vertices.device_ptr(&stream).0,
            self.survivor_vertices.len() as u64,
        );
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let mut materials: Vec<&rxpipe_core::material::Material> = Vec::new();
        // each material's row in the table, by its address (a scene may have thousands)
        let mut rows: HashMap<*const rxpipe_core::material::Material, i32> = HashMap::new();
        let mut descs = Vec::with_capacity(draws.len());
        let mut base = 0u32;
        for d in draws {
            let material = match d.material {
                Some(m) => *rows.entry(m).or_insert_with(|| {
                    materials.push(m);
                    (materials.len() - 1) as i32
                }),
                None => -1,
            };
            // the mesh's indices, for the vertex colours, tangents, second uvs or shading-rate
            // counts
            let indices = d
                .colors
                .map(|(i, _)| i)
                .or(d.tangents.map(|(i, _, _)| i))
                .or(d.uvs1.map(|(i, _)| i))
                .or(d.rate.map(|(m, _)| &*m.indices));
            let frame = d
                .tangents
                .map(|(_, t, model)| (t, crate::raster::Tangents::frame(model)));
            let cull = draw_cull(d, s);
            descs.push(DrawDesc {
                queue: match fused {
                    true => survivors.0,
                    false => addr(d.queue.vertices.device_ptr(&stream)),
                },
                corners: d.corners.map_or(0, |c| addr(c.device_ptr(&stream))),
                runs: d.runs.map_or(0, |r| addr(r.runs.device_ptr(&stream))),
                indices: indices.map_or(0, |i| addr(i.device_ptr(&stream))),
                colors: d.colors.map_or(0, |(_, c)| addr(c.device_ptr(&stream))),
                counts: d.rate.map_or(0, |(_, c)| addr(c.device_ptr(&stream))),
                faces: d.faces.map_or(0, |f| addr(f.device_ptr(&stream))),
                nverts: match fused {
                    true => survivors.1,
                    false => d.queue.vertices.len() as u64,
                },
                ncolors: d.colors.map_or(0, |(_, c)| c.len() as u64 / 4),
                nruns: d.runs.map_or(0, |r| r.count()),
                tri_base: base,
                material,
                cull,
                alpha: alpha_class(d.material, s),
                pad: 0,
                tangents: frame.map_or(0, |(t, _)| addr(t.device_ptr(&stream))),
                ntangents: frame.map_or(0, |(t, _)| t.len() as u64 / 4),
                to_world: frame.map_or([0.0; 9], |(_, (m, _))| m.to_cols_array()),
                handedness: frame.map_or(1.0, |(_, (_, h))| h),
                uvs1: d.uvs1.map_or(0, |(_, u)| addr(u.device_ptr(&stream))),
                nuvs1: d.uvs1.map_or(0, |(_, u)| u.len() as u64 / 2),
            });
            base += d.triangles as u32;
        }
        let gpu = self.gpu.clone();
        self.materials.prepare(&gpu, &materials, &descs, s)
    }

    fn grow_records(&mut self, n: usize) -> Result<(), GpuError> {
        let n = n.min(u32::MAX as usize - 1);
        grow(
            &self.gpu,
            &mut self.records,
            n * RECORD_WORDS,
            "setup records",
        )?;
        grow(&self.gpu, &mut self.big, n, "big-box records")?;
        self.grown.push(format!(
            "setup records grew from {} to {n}",
            self.record_capacity
        ));
        self.record_capacity = n;
        Ok(())
    }

    fn grow_bins(&mut self, n: usize) -> Result<(), GpuError> {
        let n = n.min(u32::MAX as usize - 1);
        grow(&self.gpu, &mut self.bins, n, "tile bins")?;
        self.grown
            .push(format!("tile bins grew from {} to {n}", self.bin_capacity));
        self.bin_capacity = n;
        Ok(())
    }
}
