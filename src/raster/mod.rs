//! The raster stage (CPU reference): near-plane and guard-band clipping in homogeneous space,
//! back-face culling, viewport transform to 8-bit sub-pixel fixed point, tile binning, and per-tile
//! rasterisation with exact integer edge functions (top-left fill rule: shared edges are covered
//! exactly once), a depth test, perspective-correct interpolation and deferred shading of the
//! visible fragment only (a per-tile visibility buffer; the lit mode four pixels at a time). Rows
//! of tiles run in parallel (rayon), each streamed to the frame once it is done.

#[cfg(feature = "cuda")]
pub mod cuda;
mod material;
mod setup;
mod shade;
mod tile;

pub use material::{pbr_neutral, Lights, MaterialShader, MAX_LIGHTS};

pub use setup::{snap, SetupTri, Varyings, SUBPIXEL_BITS};
pub use shade::ShadingMode;
pub use shade::{normalize_depth, Fragment};

/// The setup records the GPU rasteriser's first frame provides per pixel, at most one per
/// triangle (a frame whose surviving triangles are more grows its records and is rasterised
/// again): a big mesh's triangles mostly die in setup (hidden by the view, facing away, or
/// covering no pixel centre), so records sized by triangles would take most of the device.
pub const SURVIVORS_PER_PIXEL: usize = 4;

/// The fewest triangles of a frame the CUDA backend fuses (geometry stage, setup and the small
/// triangles' rasterisation in one kernel: kernels/geometry_fused.cu) unless `RXPIPE_FUSED`
/// says otherwise. Frames of fewer triangles draw faster through the triangle queue: a fused
/// batch sets up its triangles after shading them, a longer chain than a kernel a triangle,
/// which only many batches in flight hide (on the H200 the bunny's 69 K triangles took 0.126
/// ms fused against 0.088, and a 7.2 M grid 0.53 against 0.71).
pub const FUSE_MIN_TRIANGLES: usize = 1 << 20;

use crate::geometry::ShadedGeometry;
use glam::Vec3;
use rxpipe_core::scene::Light;
use std::time::Instant;

/// Which faces to drop before rasterisation. Front faces are counter-clockwise in NDC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CullMode {
    None,
    #[default]
    Back,
    Front,
}

impl CullMode {
    /// Parses `none`, `back` or `front`.
    pub fn parse(s: &str) -> Option<CullMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "none" => CullMode::None,
            "back" => CullMode::Back,
            "front" => CullMode::Front,
            _ => return None,
        })
    }
}

impl rxpipe_core::named::Named for CullMode {
    const NAMES: &'static [&'static [&'static str]] = &[&["none"], &["back"], &["front"]];
    fn from_name(name: &str) -> Option<CullMode> {
        CullMode::parse(name)
    }
}

/// Raster stage settings.
#[derive(Debug, Clone, Copy)]
pub struct RasterSettings {
    pub width: u32,
    pub height: u32,
    pub cull: CullMode,
    pub shading: ShadingMode,
    pub light: Light,
    pub eye: Vec3,
    /// linear RGB
    pub background: [f32; 3],
    /// camera near and far distances (the depth shading mode maps view depth between them)
    pub depth_range: (f32, f32),
    /// also count every fragment that covers each pixel, before the depth test
    pub count_coverage: bool,
    /// the lights that shade materials (the lit mode shades with `light`)
    pub lights: Lights,
    /// only the colour is wanted (a window's frame): the CUDA backend then downloads no depth
    /// and leaves the output's depth empty
    pub color_only: bool,
    /// the CPU backend's fragment stage runs its baseline x86-64 build even where the CPU has
    /// x86-64-v3 (AVX2, FMA), whose build it otherwise runs; both give the same bytes
    pub baseline_isa: bool,
    /// The frame is drawn over the target's colour and depth as they are (they must be the
    /// frame's size) instead of over the background: the target is a layer below this frame's
    /// triangles, which come after whatever drew it (at an equal depth what is there stays).
    /// Sort-last frames draw their blended objects this way over the composited opaque parts.
    pub over_target: bool,
    /// The frame stays on the device where it was drawn (the CUDA backend): nothing is
    /// downloaded, the output gets the frame's size and statistics and keeps no colour or
    /// depth, and the rasteriser's buffers hold them until its next frame
    /// (`raster::cuda::CudaRaster::frame_buffers`). A frame drawn as shares over several GPUs
    /// composites them there. The CPU backend, whose frame is on the host, ignores it.
    pub on_device: bool,
}

impl RasterSettings {
    pub fn new(width: u32, height: u32) -> Self {
        RasterSettings {
            width,
            height,
            cull: CullMode::Back,
            shading: ShadingMode::Lit,
            light: Light::default(),
            eye: Vec3::ZERO,
            background: [0.0; 3],
            depth_range: (0.1, 100.0),
            count_coverage: false,
            lights: Lights::key(&Light::default()),
            color_only: false,
            baseline_isa: false,
            over_target: false,
            on_device: false,
        }
    }
}

/// One object's shaded triangles and its base colour, or its material.
pub struct Draw<'a> {
    pub geometry: &'a ShadedGeometry,
    /// linear RGBA
    pub color: [f32; 4],
    /// a value per triangle that its fragments see unchanged (the patch mode's
    /// [`rxpipe_core::color::patch_value`]); `None`: 0
    pub faces: Option<&'a [f32]>,
    /// the material (`None`: the lit mode with `color`); in the lit mode it is shaded by
    /// [`MaterialShader`], in every mode its double-sidedness and alpha mask apply
    pub material: Option<&'a rxpipe_core::material::Material>,
    /// the mesh's vertex colours (linear RGBA, per source vertex: `geometry.sources` indexes
    /// them), multiplied into the material's base colour
    pub colors: Option<&'a [glam::Vec4]>,
    /// the mesh's tangents, for a normal map
    pub tangents: Option<Tangents<'a>>,
    /// the mesh's second uv set (per source vertex, as `colors`), for textures that read it
    /// ([`rxpipe_core::material::TextureRef::uv_set`]); without it they read the shaded vertices' uvs
    pub uvs1: Option<&'a [glam::Vec2]>,
    /// the model matrix mirrors (negative determinant): the mesh's front faces then wind
    /// clockwise on screen, so culling and two-sided shading take that winding as the front
    /// ([`mirrors`]), as an application sets a mirrored object's front face in OpenGL
    pub mirrored: bool,
}

/// Whether `model` mirrors (negative determinant): a draw with it is [`Draw::mirrored`].
pub fn mirrors(model: glam::Mat4) -> bool {
    glam::Mat3::from_mat4(model).determinant() < 0.0
}

/// A mesh's tangents as a draw reads them: per source vertex (as [`Draw::colors`]), xyz in the
/// mesh's space and w the bitangent's sign ([`rxpipe_core::mesh::Mesh::tangents`]), with the map to world
/// space.
#[derive(Debug, Clone, Copy)]
pub struct Tangents<'a> {
    pub values: &'a [glam::Vec4],
    /// the model matrix's linear part
    pub to_world: glam::Mat3,
    /// -1 where the model matrix mirrors (the bitangents flip), else 1
    pub handedness: f32,
}

impl<'a> Tangents<'a> {
    /// `values` under the model matrix `model`.
    pub fn new(values: &'a [glam::Vec4], model: glam::Mat4) -> Self {
        let (to_world, handedness) = Self::frame(model);
        Tangents {
            values,
            to_world,
            handedness,
        }
    }

    /// The map of tangents to world space under `model`, and the handedness it gives them.
    pub fn frame(model: glam::Mat4) -> (glam::Mat3, f32) {
        let to_world = glam::Mat3::from_mat4(model);
        let handedness = if mirrors(model) { -1.0 } else { 1.0 };
        (to_world, handedness)
    }
}

impl<'a> Draw<'a> {
    /// A draw of `geometry` in `color`, without material, vertex colours or face values.
    pub fn new(geometry: &'a ShadedGeometry, color: [f32; 4]) -> Draw<'a> {
        Draw {
            geometry,
            color,
            faces: None,
            material: None,
            colors: None,
            tangents: None,
            uvs1: None,
            mirrored: false,
        }
    }
}

/// Counts and times of the raster stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct RasterStats {
    pub triangles_in: u64,
    /// dropped by back- (or front-) face culling or for zero area (triangles tested one by one)
    pub culled: u64,
    /// outside the view frustum or covering no pixel centre
    pub rejected: u64,
    /// that needed near-plane or guard-band clipping
    pub clipped: u64,
    /// triangles binned after setup (clipped polygons count once per piece), or rasterised by
    /// the fused geometry stage
    pub rasterized: u64,
    /// of those, the small ones the GPU's fused geometry stage rasterised itself (0 on the CPU)
    pub fused: u64,
    /// whole batches the GPU's fused geometry stage culled by their bounds before shading them
    /// (outside the view, or every face facing away: kernels/batch_cull.cu), with meshes made
    /// resident with batch tables (0 on the CPU)
    pub batches_culled: u64,
    /// of those, the batches culled as hidden behind what the frame drew before them (two
    /// passes: docs/gpu.md, "Batches culled whole")
    pub batches_occluded: u64,
    /// the triangles of the batches culled whole (not in `culled` or `rejected`: never tested
    /// one by one)
    pub batch_culled_triangles: u64,
    /// the vertex shadings those batches would have made (not in the geometry stage's
    /// invocations)
    pub batch_unshaded_vertices: u64,
    /// covered pixel samples that passed the depth test when drawn (the small triangles of the
    /// GPU's fused geometry stage count every sample they cover)
    pub fragments: u64,
    pub setup_ms: f64,
    pub bin_ms: f64,
    pub raster_ms: f64,
    /// the GPU rasteriser's host work before its launches: the draw, material and light tables
    /// built and uploaded, host wall time (0 on the CPU)
    pub host_tables_ms: f64,
    /// the GPU rasteriser's launches (with the geometry stage's before them), host wall time (0
    /// on the CPU)
    pub host_launch_ms: f64,
    /// from the GPU rasteriser's last launch until the frame is on the host: the wait for the
    /// device and the downloads, host wall time (0 on the CPU)
    pub host_wait_ms: f64,
}

impl RasterStats {
    /// Adds `o`'s counts and times (of another part of the same frame).
    pub fn add(&mut self, o: &RasterStats) {
        let RasterStats {
            triangles_in,
            culled,
            rejected,
            clipped,
            rasterized,
            fused,
            batches_culled,
            batches_occluded,
            batch_culled_triangles,
            batch_unshaded_vertices,
            fragments,
            setup_ms,
            bin_ms,
            raster_ms,
            host_tables_ms,
            host_launch_ms,
            host_wait_ms,
        } = *o;
        self.triangles_in += triangles_in;
        self.culled += culled;
        self.rejected += rejected;
        self.clipped += clipped;
        self.rasterized += rasterized;
        self.fused += fused;
        self.batches_culled += batches_culled;
        self.batches_occluded += batches_occluded;
        self.batch_culled_triangles += batch_culled_triangles;
        self.batch_unshaded_vertices += batch_unshaded_vertices;
        self.fragments += fragments;
        self.setup_ms += setup_ms;
        self.bin_ms += bin_ms;
        self.raster_ms += raster_ms;
        self.host_tables_ms += host_tables_ms;
        self.host_launch_ms += host_launch_ms;
        self.host_wait_ms += host_wait_ms;
    }
}

/// Errors of the raster stage.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error("frame size {0}x{1} is not supported (1 to 16384 pixels a side)")]
    Size(u32, u32),
    /// A frame drawn over its target whose colour or depth is not the frame's size.
    #[error(
        "the target to draw over holds {0} colour bytes and {1} depths, not the {2}x{3} frame's"
    )]
    TargetSize(usize, usize, u32, u32),
    #[error(transparent)]
    OutOfMemory(#[from] rxpipe_core::limits::OutOfMemory),
    /// A GPU error met by the stage.
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    /// An error of the work the caller enqueued before the stage on its stream (the geometry
    /// stage, with the CUDA backend).
    #[error(transparent)]
    Before(Box<dyn std::error::Error + Send + Sync>),
}

/// Working memory of the raster stage (setup triangles and tile bins), kept with a target so that
/// rendering frame after frame into it allocates nothing.
#[derive(Default, Clone)]
pub struct Scratch {
    setup: setup::Setup,
    bins: tile::Bins,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("Scratch { .. }")
    }
}

/// The colour (RGBA8, sRGB), depth (NDC, 1 = far) and optional coverage count of a frame.
#[derive(Debug, Clone)]
pub struct RasterOutput {
    pub width: u32,
    pub height: u32,
    pub color: Vec<u8>,
    pub depth: Vec<f32>,
    pub coverage: Option<Vec<u32>>,
    pub stats: RasterStats,
    /// buffers reused from frame to frame
    pub scratch: Scratch,
}

impl RasterOutput {
    /// An empty target; [`rasterize_into`] sizes it.
    pub fn empty() -> Self {
        RasterOutput {
            width: 0,
            height: 0,
            color: Vec::new(),
            depth: Vec::new(),
            coverage: None,
            stats: RasterStats::default(),
            scratch: Scratch::default(),
        }
    }
}

/// The build of the CPU backend's fragment stage this CPU runs: "x86-64-v3" (AVX2, FMA; chosen at
/// run time where the CPU has it) or "x86-64" (the baseline build; also under
/// [`RasterSettings::baseline_isa`]). Both give the same bytes.
pub fn fragment_isa() -> &'static str {
    if tile::wide_isa() {
        "x86-64-v3"
    } else {
        "x86-64"
    }
}

/// Rasterises the draws in order (earlier draws win depth ties) into a new image.
pub fn rasterize(draws: &[Draw], s: &RasterSettings) -> Result<RasterOutput, RasterError> {
    let mut out = RasterOutput::empty();
    rasterize_into(draws, s, &mut out)?;
    Ok(out)
}

/// Rasterises into an existing target, reusing its buffers (the viewer and benchmarks render
/// every frame into the same memory).
pub fn rasterize_into(
    draws: &[Draw],
    s: &RasterSettings,
    out: &mut RasterOutput,
) -> Result<(), RasterError> {
    if s.width == 0 || s.height == 0 || s.width > 16384 || s.height > 16384 {
        return Err(RasterError::Size(s.width, s.height));
    }
    check_frame_memory(s, out)?;
    check_target(s, out)?;
    let mut stats = RasterStats::default();
    let t0 = Instant::now();
    let mut scratch = std::mem::take(&mut out.scratch);
    setup::setup_all(draws, s, &mut stats, &mut scratch.setup);
    let t1 = Instant::now();
    tile::bin(&scratch.setup, s, &mut scratch.bins);
    let t2 = Instant::now();
    tile::raster_tiles(&scratch.setup, &scratch.bins, draws, s, &mut stats, out);
    out.scratch = scratch;
    let t3 = Instant::now();
    stats.setup_ms = (t1 - t0).as_secs_f64() * 1e3;
    stats.bin_ms = (t2 - t1).as_secs_f64() * 1e3;
    stats.raster_ms = (t3 - t2).as_secs_f64() * 1e3;
    out.stats = stats;
    Ok(())
}

/// Refuses a frame whose colour, depth and coverage buffers would not fit the host's memory,
/// before growing them (a 16384x16384 frame takes 2 GB; the allocator would abort the process).
/// Buffers a target already holds from an earlier frame need nothing new, and then the host is not
/// asked.
/// With [`RasterSettings::over_target`], that the target's colour and depth are the frame's size.
pub fn check_target(s: &RasterSettings, out: &RasterOutput) -> Result<(), RasterError> {
    let pixels = s.width as usize * s.height as usize;
    if s.over_target && (out.color.len() != 4 * pixels || out.depth.len() != pixels) {
        return Err(RasterError::TargetSize(
            out.color.len(),
            out.depth.len(),
            s.width,
            s.height,
        ));
    }
    Ok(())
}

fn check_frame_memory(s: &RasterSettings, out: &RasterOutput) -> Result<(), RasterError> {
    let pixels = s.width as u64 * s.height as u64;
    let coverage = if s.count_coverage { 4 } else { 0 };
    // each buffer takes 4 bytes a pixel; what it holds already is not asked for again
    let grow = |held_bytes: usize| (pixels * 4).saturating_sub(held_bytes as u64);
    let mut needed = grow(out.color.capacity()) + grow(4 * out.depth.capacity());
    if s.count_coverage {
        needed += grow(4 * out.coverage.as_ref().map_or(0, |c| c.capacity()));
    }
    if needed == 0 {
        return Ok(());
    }
    rxpipe_core::limits::check_host(needed, || {
        format!(
            "a {}x{} frame ({} bytes a pixel for colour, depth{})",
            s.width,
            s.height,
            8 + coverage,
            if s.count_coverage {
                " and coverage"
            } else {
                ""
            }
        )
    })?;
    Ok(())
}

/// A small deterministic generator of floats in [0, 1] (xorshift32) for the raster's unit tests.
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32
    }
}
