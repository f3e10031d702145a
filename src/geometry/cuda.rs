//! The geometry stage on the GPU (kernels/geometry.cu), side by side with [`super::cpu`]. Every
//! strategy writes the triangle queue in input order: the vertices it shaded and, per triangle,
//! where its three corners are among them (see [`DeviceQueue`]).
//! With statistics requested, the kernels are compiled with invocation counting and count per
//! vertex exactly what the CPU reference counts.

use super::{Batches, GeometryError, GeometryStats, Strategy, Uniforms, VertexIn, VertexOut};
use crate::gpu::kernels::{self, Source};

/// The geometry stage's kernels; a vertex shader (`vs_main`) precedes them.
pub const KERNELS: Source<'static> = crate::kernel_source!("geometry.cu");
/// The dynamic batching preprocess (the batch starts of the CPU's front-to-back scan).
pub const BATCHING: Source<'static> = crate::kernel_source!("batching.cu");
/// The built-in vertex shaders.
pub const SHADER_TRANSFORM: Source<'static> = crate::kernel_source!("shaders/transform.cu");
pub const SHADER_FMA: Source<'static> = crate::kernel_source!("shaders/fma.cu");
use crate::gpu::{Context, Gpu, GpuError};
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use std::path::Path;
use std::sync::Arc;

/// A vertex shader for the GPU: CUDA C source that defines
/// `__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u)` (the types are in
/// kernels/common.cuh; `rxp_transform(v, u)` is the standard transform). It is compiled into every
/// geometry kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaShader {
    /// the file name NVRTC's messages use
    pub name: String,
    pub source: String,
    /// preprocessor definitions (name, value)
    pub defines: Vec<(String, String)>,
}

impl CudaShader {
    /// The standard transform (the CPU's [`super::Transform`]).
    pub fn transform() -> CudaShader {
        CudaShader::builtin(SHADER_TRANSFORM, vec![])
    }

    /// The standard transform plus `n` dependent FMAs (the CPU's [`super::FmaLoad`]).
    pub fn fma(n: u32) -> CudaShader {
        CudaShader::builtin(SHADER_FMA, vec![("FMA_N".into(), n.to_string())])
    }

    fn builtin(s: Source, defines: Vec<(String, String)>) -> CudaShader {
        CudaShader {
            name: s.name.into(),
            source: s.text.into(),
            defines,
        }
    }

    /// Whether this is one of the built-in shaders (which leave positions to the standard
    /// transform, so object bounds hold for them).
    pub fn is_builtin(&self) -> bool {
        self.source == SHADER_TRANSFORM.text || self.source == SHADER_FMA.text
    }

    /// A shader from CUDA C source text; `name` is what error messages call it.
    pub fn from_source(name: impl Into<String>, source: impl Into<String>) -> CudaShader {
        CudaShader {
            name: name.into(),
            source: source.into(),
            defines: vec![],
        }
    }

    /// A shader read from a .cu file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<CudaShader, crate::io::IoError> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path).map_err(|e| crate::io::IoError::Io {
            file: path.display().to_string(),
            source: e,
        })?;
        Ok(CudaShader::from_source(path.display().to_string(), source))
    }
}

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

/// A mesh's inputs on the device: vertices, indices and (for the dynamic strategies) the batches.
pub struct DeviceMesh {
    pub vertices: CudaSlice<VertexIn>,
    pub indices: CudaSlice<u32>,
    pub vertex_count: usize,
    /// whole triangles only
    pub index_count: usize,
    /// distinct vertices the indices reference (counted once, at upload)
    pub unique_vertices: usize,
    /// batch starts (triangle offsets, one more than batches) and the limits they were built for
    pub batches: Option<(CudaSlice<u32>, usize, u32, u32)>,
}

impl DeviceMesh {
    /// Validates and uploads a mesh's shader inputs and index buffer, and the dynamic batches when
    /// given.
    pub fn upload(
        gpu: &Gpu,
        vertices: &[VertexIn],
        indices: &[u32],
        batches: Option<&Batches>,
    ) -> Result<DeviceMesh, crate::Error> {
        let n = vertices.len();
        let indices = super::whole_triangles(indices, n)?;
        let batches = match batches {
            Some(b) => Some((
                gpu.upload(&b.starts, "batch offsets")?,
                b.len(),
                b.max_indices,
                b.max_vertices,
            )),
            None => None,
        };
        Ok(DeviceMesh {
            vertices: gpu.upload(vertices, "vertices")?,
            indices: gpu.upload(indices, "indices")?,
            vertex_count: n,
            index_count: indices.len(),
            unique_vertices: super::cpu::unique_count(indices, n),
            batches,
        })
    }
}

/// Builds the geometry stage's input on the device (kernels/vertex_input.cu).
pub const VERTEX_INPUT: Source<'static> = crate::kernel_source!("vertex_input.cu");

impl DeviceMesh {
    /// The shader inputs of a mesh the passes left on the device, packed there (no transfer);
    /// the distinct referenced vertices are counted on the device too. The indices must be in
    /// range (the mesh was validated before its passes).
    pub fn from_device(
        gpu: &Gpu,
        d: &crate::passes::DeviceAttributes,
    ) -> Result<DeviceMesh, GpuError> {
        let n = d.vertex_count as u32;
        let index_count = d.index_count / 3 * 3;
        let module = gpu.module(
            "vertex_input",
            &[kernels::COMMON, kernels::BLOCKS, VERTEX_INPUT],
            &[],
        )?;
        let mut vertices: CudaSlice<VertexIn> = gpu.zeros(d.vertex_count, "vertices")?;
        let null = 0u64;
        let f = gpu.function(&module, "rxv_pack")?;
        let mut l = gpu.stream.launch_builder(&f);
        l.arg(&d.positions);
        match &d.normals {
            Some(b) => l.arg(b),
            None => l.arg(&null),
        };
        match &d.uvs {
            Some(b) => l.arg(b),
            None => l.arg(&null),
        };
        l.arg(&n).arg(&mut vertices);
        // SAFETY: one thread per vertex; the attribute arrays hold n vertices each.
        unsafe { crate::gpu::launch_1d(l, n, "rxv_pack") }?;
        let mut used: CudaSlice<u32> = gpu.zeros(d.vertex_count, "used vertices")?;
        let m = index_count as u32;
        let f = gpu.function(&module, "rxp_mark_used")?;
        let mut l = gpu.stream.launch_builder(&f);
        l.arg(&d.indices).arg(&m).arg(&mut used);
        // SAFETY: one thread per index; every index is below n.
        unsafe { crate::gpu::launch_1d(l, m, "rxp_mark_used") }?;
        let mut total: CudaSlice<u64> = gpu.zeros(1, "used vertex count")?;
        let f = gpu.function(&module, "rxp_sum_u32")?;
        let mut l = gpu.stream.launch_builder(&f);
        l.arg(&used).arg(&n).arg(&mut total);
        // SAFETY: one thread per vertex over n flags.
        unsafe { crate::gpu::launch_1d(l, n, "rxp_sum_u32") }?;
        let unique = gpu.download(&total, 1)?[0] as usize;
        let mut indices: CudaSlice<u32> = gpu.zeros(index_count, "indices")?;
        if index_count > 0 {
            gpu.stream
                .memcpy_dtod(
                    &d.indices.slice(0..index_count),
                    &mut indices.slice_mut(0..index_count),
                )
                .ctx("copying the indices")?;
        }
        Ok(DeviceMesh {
            vertices,
            indices,
            vertex_count: d.vertex_count,
            index_count,
            unique_vertices: unique,
            batches: None,
        })
    }
}

/// Threads per block of the batching kernels (RXB_BLOCK), triangles per thread of its compaction
/// (RXB_PER), and the sort window of its look-back kernel (RXB_SORT).
const RXB_BLOCK: u32 = 256;
const RXB_PER: u32 = 4;
const RXB_SORT: u32 = 2048;

impl DeviceMesh {
    /// Builds the dynamic batches on the GPU (kernels/batching.cu): the same batches as
    /// [`Batches::build`] on the CPU, from the indices already on the device. Replaces any
    /// batches the mesh had.
    pub fn build_batches(
        &mut self,
        gpu: &Gpu,
        max_indices: u32,
        max_vertices: u32,
    ) -> Result<(), crate::Error> {
        if max_indices < 3 || max_vertices < 3 {
            return Err(GeometryError::BatchLimits {
                max_indices,
                max_vertices,
            }
            .into());
        }
        if max_indices > 1024 {
            return Err(GpuError::Limit(format!(
                "the GPU builds batches of at most 1024 indices, got {max_indices}"
            ))
            .into());
        }
        let n = (self.index_count / 3) as u32;
        let mut starts: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch offsets")?;
        if n == 0 {
            self.batches = Some((starts, 0, max_indices, max_vertices));
            return Ok(());
        }
        let module = gpu.module("batching", &[kernels::BLOCKS, BATCHING], &[])?;
        let f = |name: &str| gpu.function(&module, name);
        let s = &gpu.stream;
        let err = |what: &'static str| {
            move |e| GpuError::Driver {
                what: format!("launching {what}"),
                source: e,
            }
        };
        let cfg = |blocks: u32, threads: u32| LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let max_tris = max_indices / 3;
        let lookback = 3 * max_tris - 1;
        let span = RXB_SORT - lookback;
        let ni = 3 * n;
        let mut prev: CudaSlice<i32> = gpu.zeros(ni as usize, "batching look-back")?;
        let k = f("rxb_prev")?;
        let mut l = s.launch_builder(&k);
        l.arg(&self.indices)
            .arg(&ni)
            .arg(&lookback)
            .arg(&span)
            .arg(&mut prev);
        // SAFETY: one block per `span` positions, each writing only its own positions of `prev`.
        unsafe { l.launch(cfg(ni.div_ceil(span), RXB_SORT / 2)) }.map_err(err("rxb_prev"))?;
        let mut jump: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch ends")?;
        let k = f("rxb_batch_end")?;
        let mut l = s.launch_builder(&k);
        let warp = super::batching::WARP;
        l.arg(&prev)
            .arg(&n)
            .arg(&max_tris)
            .arg(&max_vertices)
            .arg(&warp)
            .arg(&mut jump);
        // SAFETY: one thread per triangle and one for the end; `prev` holds 3n entries.
        unsafe { l.launch(cfg((n + 1).div_ceil(RXB_BLOCK), RXB_BLOCK)) }
            .map_err(err("rxb_batch_end"))?;
        drop(prev);
        let mut next: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch ends")?;
        let mut mark: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch marks")?;
        s.memcpy_htod(&[1u32], &mut mark.slice_mut(0..1))
            .ctx("marking the first batch")?;
        let k = f("rxb_orbit")?;
        // after round r every start J^m(0) with m < 2^(r+1) is marked; there are at most n
        let mut reach = 1u64;
        while reach <= n as u64 {
            let mut l = s.launch_builder(&k);
            l.arg(&jump).arg(&mut next).arg(&mut mark).arg(&n);
            // SAFETY: one thread per entry of the n + 1 entry buffers; jumps stay within 0..=n.
            unsafe { l.launch(cfg((n + 1).div_ceil(RXB_BLOCK), RXB_BLOCK)) }
                .map_err(err("rxb_orbit"))?;
            std::mem::swap(&mut jump, &mut next);
            reach *= 2;
        }
        let per_block = RXB_BLOCK * RXB_PER;
        let blocks = n.div_ceil(per_block);
        let mut block_counts: CudaSlice<u32> = gpu.zeros(blocks as usize, "batch counts")?;
        let mut total: CudaSlice<u32> = gpu.zeros(1, "batch count")?;
        let k = f("rxb_count")?;
        let mut l = s.launch_builder(&k);
        l.arg(&mark).arg(&n).arg(&mut block_counts);
        // SAFETY: one block per `per_block` triangles, writing its own count.
        unsafe { l.launch(cfg(blocks, RXB_BLOCK)) }.map_err(err("rxb_count"))?;
        let k = f("rxb_scan")?;
        let mut l = s.launch_builder(&k);
        l.arg(&mut block_counts)
            .arg(&blocks)
            .arg(&n)
            .arg(&mut starts)
            .arg(&mut total);
        // SAFETY: one block; starts holds n + 1 entries and there are at most n batches.
        unsafe { l.launch(cfg(1, RXB_BLOCK)) }.map_err(err("rxb_scan"))?;
        let k = f("rxb_compact")?;
        let mut l = s.launch_builder(&k);
        l.arg(&mark).arg(&n).arg(&block_counts).arg(&mut starts);
        // SAFETY: as rxb_count; every marked triangle gets its own slot below the count.
        unsafe { l.launch(cfg(blocks, RXB_BLOCK)) }.map_err(err("rxb_compact"))?;
        let nb = gpu.download(&total, 1)?[0] as usize;
        self.batches = Some((starts, nb, max_indices, max_vertices));
        Ok(())
    }

    /// The mesh's batches, downloaded (for tests and tools).
    pub fn download_batches(&self, gpu: &Gpu) -> Result<Option<Batches>, GpuError> {
        let Some((starts, nb, mi, mv)) = &self.batches else {
            return Ok(None);
        };
        Ok(Some(Batches {
            starts: gpu.download(starts, nb + 1)?,
            max_indices: *mi,
            max_vertices: *mv,
        }))
    }
}

/// The triangle queue and, with statistics, the per-vertex invocation counts, on the device.
///
/// The queue is indexed, as a mesh shader's output is: every batch writes the vertices it shaded,
/// once, into its own region of `vertices`, and `corners` holds for input triangle t the positions
/// of its three corners in `vertices` (at 3t, 3t + 1, 3t + 2). So vertex reuse saves the queue's
/// writes as well as the shading. Naive shades every index and writes a flat queue (`corners` is
/// `None`: corner k of triangle t is `vertices[3t + k]`); multi shades every vertex once and its
/// corners are the index buffer, copied when the queue is made.
pub struct DeviceQueue {
    /// the strategy the queue is laid out for
    pub strategy: Strategy,
    pub vertices: CudaSlice<GpuVertexOut>,
    pub corners: Option<CudaSlice<u32>>,
    pub counts: CudaSlice<u32>,
    /// the sum of `counts`, after [`CudaGeometry::sum_counts`]
    pub total: CudaSlice<u64>,
    pub index_count: usize,
}

/// The geometry kernels compiled with one vertex shader.
pub struct CudaGeometry {
    pub gpu: Arc<Gpu>,
    pub shader: CudaShader,
    /// counts invocations (compiled in only when requested)
    pub counting: bool,
    pub blocks: BlockSizes,
    module: Arc<CudaModule>,
    /// the modules compiled for hashing batches of other vertex limits than the default (the
    /// hash tables are sized at compile time), by limit
    hash_modules: std::sync::Mutex<Vec<(u32, Arc<CudaModule>)>>,
}

/// Block sizes of the geometry kernels whose blocks are not one batch each (the dynamic
/// strategies size their blocks from the batch limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSizes {
    /// threads per block of naive and multi (a multiple of 32, at most 512: each stages its
    /// 64-byte vertices in shared memory; RXP_BLOCK in kernels/geometry.cu)
    pub elementwise: u32,
    /// warps per block of warp voting (1 to 32)
    pub vote_warps: u32,
    /// threads per block (per dynamic batch) of hashing and parallel hashing (a multiple of 32,
    /// at most 1024)
    pub hash: u32,
}

impl Default for BlockSizes {
    fn default() -> Self {
        BlockSizes {
            elementwise: 256,
            vote_warps: 4,
            hash: 128,
        }
    }
}
/// Defines as [`Gpu::module`] takes them.
fn borrowed(defines: &[(String, String)]) -> Vec<(&str, String)> {
    defines
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect()
}

/// Shared memory a block may use without opting in.
const SHARED_LIMIT: usize = 48 * 1024;

impl CudaGeometry {
    /// Compiles (or fetches from the caches) the geometry kernels with `shader`.
    pub fn new(
        gpu: Arc<Gpu>,
        shader: CudaShader,
        counting: bool,
    ) -> Result<CudaGeometry, GpuError> {
        CudaGeometry::with_blocks(gpu, shader, counting, BlockSizes::default())
    }

    /// [`CudaGeometry::new`] with other block sizes.
    pub fn with_blocks(
        gpu: Arc<Gpu>,
        shader: CudaShader,
        counting: bool,
        blocks: BlockSizes,
    ) -> Result<CudaGeometry, GpuError> {
        let e = blocks.elementwise;
        let h = blocks.hash;
        if e == 0
            || e % 32 != 0
            || e > 512
            || !(1..=32).contains(&blocks.vote_warps)
            || h == 0
            || h % 32 != 0
            || h > 1024
        {
            return Err(GpuError::Limit(format!(
                "block sizes {} threads (naive, multi; a multiple of 32 up to 512), {} warps (warp voting; 1 to 32) and {} threads (hashing; a multiple of 32 up to 1024) are not supported",
                e, blocks.vote_warps, h
            )));
        }
        let defines = Self::defines(&shader, counting, blocks, super::DEFAULT_MAX_VERTICES);
        let module = gpu.module("geometry", &Self::parts(&shader), &borrowed(&defines))?;
        Ok(CudaGeometry {
            gpu,
            shader,
            counting,
            blocks,
            module,
            hash_modules: Default::default(),
        })
    }

    fn parts(shader: &CudaShader) -> [Source<'_>; 4] {
        [
            kernels::COMMON,
            kernels::BLOCKS,
            Source {
                name: &shader.name,
                text: &shader.source,
            },
            KERNELS,
        ]
    }

    /// The defines of the module whose hashing kernels take batches of at most `max_vertices`.
    fn defines(
        shader: &CudaShader,
        counting: bool,
        blocks: BlockSizes,
        max_vertices: u32,
    ) -> Vec<(String, String)> {
        let mut d = shader.defines.clone();
        d.push(("RXP_BLOCK".into(), blocks.elementwise.to_string()));
        d.push(("RXP_HASH_BLOCK".into(), blocks.hash.to_string()));
        d.push(("RXP_HASH_VERTICES".into(), max_vertices.to_string()));
        d.push((
            "RXP_HASH_TABLE".into(),
            super::hash_table_size(max_vertices).to_string(),
        ));
        if counting {
            d.push(("RXP_COUNT".into(), "1".into()));
        }
        d
    }

    /// Where the compiled kernels came from (compiled now, disk cache or memory cache).
    pub fn origin(&self) -> Option<crate::gpu::ModuleOrigin> {
        let defines = Self::defines(
            &self.shader,
            self.counting,
            self.blocks,
            super::DEFAULT_MAX_VERTICES,
        );
        self.gpu
            .module_origin(&Self::parts(&self.shader), &borrowed(&defines))
    }

    fn function(&self, name: &str) -> Result<CudaFunction, GpuError> {
        self.gpu.function(&self.module, name)
    }

    /// Hashing kernel `name` for batches of at most `max_vertices` vertices: from the main
    /// module for the default limit, else from a module compiled (once) for that limit.
    fn hash_function(&self, name: &str, max_vertices: u32) -> Result<CudaFunction, GpuError> {
        if max_vertices == super::DEFAULT_MAX_VERTICES {
            return self.function(name);
        }
        let mut modules = self.hash_modules.lock().unwrap();
        let module = match modules.iter().find(|(v, _)| *v == max_vertices) {
            Some((_, m)) => m.clone(),
            None => {
                let defines = Self::defines(&self.shader, self.counting, self.blocks, max_vertices);
                let m =
                    self.gpu
                        .module("geometry", &Self::parts(&self.shader), &borrowed(&defines))?;
                modules.push((max_vertices, m.clone()));
                m
            }
        };
        self.gpu.function(&module, name)
    }

    /// A queue for `strategy` sized for `mesh` (and reused frame after frame).
    pub fn queue(
        &self,
        mesh: &DeviceMesh,
        strategy: Strategy,
    ) -> Result<DeviceQueue, crate::Error> {
        let capacity = queue_capacity(strategy, mesh)?;
        let corners = match strategy {
            Strategy::Naive => None,
            _ => {
                let mut c = self
                    .gpu
                    .zeros(mesh.index_count.max(1), "the queue's corners")?;
                // multi's corners are the index buffer, the same every frame: copied once here
                if strategy == Strategy::Multi && mesh.index_count > 0 {
                    self.gpu
                        .stream
                        .memcpy_dtod(&mesh.indices, &mut c)
                        .ctx("copying the indices into the queue")?;
                }
                Some(c)
            }
        };
        Ok(DeviceQueue {
            strategy,
            vertices: self.gpu.zeros(capacity.max(1), "the triangle queue")?,
            corners,
            counts: self
                .gpu
                .zeros(if self.counting { mesh.vertex_count } else { 1 }, "counts")?,
            total: self.gpu.zeros(1, "the invocation total")?,
            index_count: mesh.index_count,
        })
    }

    /// Enqueues the geometry stage: `strategy` over `mesh` into `q` (counts are added to what `q`
    /// holds; [`CudaGeometry::reset_counts`] clears them).
    pub fn enqueue(
        &self,
        strategy: Strategy,
        mesh: &DeviceMesh,
        uniforms: &Uniforms,
        q: &mut DeviceQueue,
    ) -> Result<(), crate::Error> {
        let u = GpuUniforms::from(uniforms);
        let s = &self.gpu.stream;
        let block = self.blocks.elementwise;
        let vote_warps = self.blocks.vote_warps;
        if mesh.index_count > (u32::MAX / 4) as usize {
            return Err(GpuError::Limit(format!(
                "{} indices are more than one geometry launch takes ({})",
                mesh.index_count,
                u32::MAX / 4
            ))
            .into());
        }
        let ni = mesh.index_count as u32;
        if q.strategy != strategy || q.index_count != mesh.index_count {
            return Err(GpuError::Limit(format!(
                "the queue was made for {} over {} indices, not {} over {}",
                q.strategy, q.index_count, strategy, mesh.index_count
            ))
            .into());
        }
        if ni == 0 {
            return Ok(());
        }
        let capacity = queue_capacity(strategy, mesh)?;
        if q.vertices.len() < capacity {
            return Err(GpuError::Limit(format!(
                "the queue holds {} vertices, {strategy} needs {capacity}",
                q.vertices.len()
            ))
            .into());
        }
        let grid = |n: u32, b: u32| LaunchConfig {
            grid_dim: (n.div_ceil(b), 1, 1),
            block_dim: (b, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch_err = |what: &'static str| {
            move |e| GpuError::Driver {
                what: format!("launching {what}"),
                source: e,
            }
        };
        match strategy {
            Strategy::Naive => {
                let f = self.function("naive")?;
                let mut l = s.launch_builder(&f);
                l.arg(&mesh.vertices)
                    .arg(&mesh.indices)
                    .arg(&ni)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(&mut q.counts);
                // SAFETY: arguments match the kernel's signature; sizes are the buffers' own.
                unsafe { l.launch(grid(ni, block)) }.map_err(launch_err("naive"))?;
            }
            Strategy::Multi => {
                let nv = mesh.vertex_count as u32;
                let f = self.function("multi_shade")?;
                let mut l = s.launch_builder(&f);
                l.arg(&mesh.vertices)
                    .arg(&nv)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(&mut q.counts);
                // SAFETY: as above; the queue holds the mesh's vertex count, and its corners
                // (the indices) were copied when it was made.
                unsafe { l.launch(grid(nv, block)) }.map_err(launch_err("multi_shade"))?;
            }
            Strategy::WarpVote { batch } => {
                if batch < 3 || batch % 3 != 0 {
                    return Err(GeometryError::WarpBatch(batch).into());
                }
                // held ids and lane numbers
                let per_warp = 32 * 4 + batch as usize + 32;
                let smem = vote_warps as usize * per_warp;
                if smem > SHARED_LIMIT {
                    return Err(GpuError::Limit(format!(
                        "warp voting with batches of {batch} indices needs {smem} bytes of shared memory per block (at most {SHARED_LIMIT})"
                    ))
                    .into());
                }
                let batches = ni.div_ceil(batch);
                let vcap = vcap_per_batch(batch);
                let f = self.function("warp_vote")?;
                let mut l = s.launch_builder(&f);
                l.arg(&mesh.vertices)
                    .arg(&mesh.indices)
                    .arg(&ni)
                    .arg(&batch)
                    .arg(&vcap)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(q.corners.as_mut().ok_or_else(no_corners)?)
                    .arg(&mut q.counts);
                let cfg = LaunchConfig {
                    grid_dim: (batches.div_ceil(vote_warps), 1, 1),
                    block_dim: (32 * vote_warps, 1, 1),
                    shared_mem_bytes: smem as u32,
                };
                // SAFETY: as above; shared memory sized for vote_warps warps.
                unsafe { l.launch(cfg) }.map_err(launch_err("warp_vote"))?;
            }
            Strategy::DynamicSort { .. }
            | Strategy::DynamicHash { .. }
            | Strategy::ParallelHash { .. } => {
                let (max_indices, max_vertices) = strategy
                    .dynamic_limits()
                    .expect("a dynamic strategy has batch limits");
                let (starts, nb, bi, bv) = mesh.batches.as_ref().ok_or_else(|| {
                    GpuError::Limit("the mesh was uploaded without dynamic batches".into())
                })?;
                if (*bi, *bv) != (max_indices, max_vertices) {
                    return Err(GpuError::Limit(format!(
                        "the mesh's batches were built for {bi} indices and {bv} vertices, the strategy asks for {max_indices} and {max_vertices}"
                    ))
                    .into());
                }
                if max_indices > 1024 || max_vertices > 1024 {
                    return Err(GpuError::Limit(format!(
                        "the GPU's dynamic batches hold at most 1024 indices and 1024 vertices, got {max_indices} and {max_vertices}"
                    ))
                    .into());
                }
                let out = size_of::<GpuVertexOut>();
                let nb = *nb as u32;
                if nb == 0 {
                    return Ok(());
                }
                if let Strategy::DynamicSort { .. } = strategy {
                    let p = max_indices.next_power_of_two().max(32);
                    // shaded vertices and their ids, (id, position) keys and ranks
                    let smem = max_vertices as usize * (out + 4) + p as usize * 12;
                    if smem > SHARED_LIMIT {
                        return Err(GpuError::Limit(format!("sorting batches of {max_indices} indices and {max_vertices} vertices needs {smem} bytes of shared memory (at most {SHARED_LIMIT})")).into());
                    }
                    let f = self.function("dyn_sort")?;
                    let mut l = s.launch_builder(&f);
                    l.arg(&mesh.vertices)
                        .arg(&mesh.indices)
                        .arg(starts)
                        .arg(&max_vertices)
                        .arg(&u)
                        .arg(&mut q.vertices)
                        .arg(q.corners.as_mut().ok_or_else(no_corners)?)
                        .arg(&mut q.counts);
                    let cfg = LaunchConfig {
                        grid_dim: (nb, 1, 1),
                        block_dim: (p, 1, 1),
                        shared_mem_bytes: smem as u32,
                    };
                    // SAFETY: as above.
                    unsafe { l.launch(cfg) }.map_err(launch_err("dyn_sort"))?;
                } else {
                    let table = super::hash_table_size(max_vertices);
                    let fast = match strategy {
                        Strategy::ParallelHash { fast_probes, .. } => fast_probes,
                        _ => u32::MAX,
                    };
                    // the table, each slot's vertex number, the ids by number (static arrays of
                    // the module compiled for this vertex limit)
                    let smem = 4 * (2 * table + max_vertices) as usize;
                    if smem > SHARED_LIMIT {
                        return Err(GpuError::Limit(format!("hashing batches of {max_indices} indices and {max_vertices} vertices needs {smem} bytes of shared memory (at most {SHARED_LIMIT})")).into());
                    }
                    let name = match strategy {
                        Strategy::ParallelHash { .. } => "dyn_phash",
                        _ => "dyn_hash",
                    };
                    let f = self.hash_function(name, max_vertices)?;
                    let mut l = s.launch_builder(&f);
                    l.arg(&mesh.vertices)
                        .arg(&mesh.indices)
                        .arg(starts)
                        .arg(&fast)
                        .arg(&u)
                        .arg(&mut q.vertices)
                        .arg(q.corners.as_mut().ok_or_else(no_corners)?)
                        .arg(&mut q.counts);
                    // each thread takes every blockDim-th index and shades every blockDim-th vertex
                    let cfg = LaunchConfig {
                        grid_dim: (nb, 1, 1),
                        block_dim: (self.blocks.hash, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    // SAFETY: as above.
                    unsafe { l.launch(cfg) }.map_err(launch_err(name))?;
                }
            }
        }
        Ok(())
    }

    /// Sets the queue's invocation counts to zero.
    pub fn reset_counts(&self, q: &mut DeviceQueue) -> Result<(), GpuError> {
        self.gpu
            .stream
            .memset_zeros(&mut q.counts)
            .ctx("clearing the invocation counts")
    }

    /// Enqueues the sum of the queue's per-vertex counts (of `vertex_count` vertices) into
    /// `q.total` (cleared first); read it with [`Gpu::download`] after the frame.
    pub fn sum_counts(&self, q: &mut DeviceQueue, vertex_count: usize) -> Result<(), GpuError> {
        let s = &self.gpu.stream;
        s.memset_zeros(&mut q.total)
            .ctx("clearing the invocation total")?;
        if !self.counting || vertex_count == 0 {
            return Ok(());
        }
        let n = vertex_count.min(q.counts.len()) as u32;
        let f = self.function("rxp_sum_u32")?;
        let mut l = s.launch_builder(&f);
        l.arg(&q.counts).arg(&n).arg(&mut q.total);
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `counts` holds at least n entries; one thread per entry.
        unsafe { l.launch(cfg) }.map_err(|e| GpuError::Driver {
            what: "launching rxp_sum_u32".into(),
            source: e,
        })?;
        Ok(())
    }

    /// Runs the stage once (building the dynamic batches on the GPU unless matching ones are
    /// given) and downloads everything: the triangle queue, per-vertex invocation
    /// counts and statistics (invocation counts only when counting).
    pub fn run(
        &self,
        strategy: Strategy,
        vertices: &[VertexIn],
        indices: &[u32],
        batches: Option<&Batches>,
        uniforms: &Uniforms,
    ) -> Result<GpuGeometry, crate::Error> {
        // given batches are used when they fit the strategy; otherwise the GPU builds them
        let limits = strategy.dynamic_limits();
        let given = batches.filter(|b| Some((b.max_indices, b.max_vertices)) == limits);
        let mut mesh = DeviceMesh::upload(&self.gpu, vertices, indices, given)?;
        if let (None, Some((mi, mv))) = (given, limits) {
            mesh.build_batches(&self.gpu, mi, mv)?;
        }
        let mut q = self.queue(&mesh, strategy)?;
        self.enqueue(strategy, &mesh, uniforms, &mut q)?;
        self.gpu.sync()?;
        let queue = q.download(&self.gpu)?;
        let counts = if self.counting {
            Some(self.gpu.download(&q.counts, mesh.vertex_count)?)
        } else {
            None
        };
        let triangles = (mesh.index_count / 3) as u64;
        let stats = GeometryStats {
            invocations: counts
                .as_ref()
                .map_or(0, |c| c.iter().map(|&x| x as u64).sum()),
            triangles,
            unique_vertices: mesh.unique_vertices as u64,
        };
        Ok(GpuGeometry {
            queue,
            counts,
            stats,
        })
    }
}

/// Vertices of the queue's region for each batch of warp voting with batches of `batch` indices:
/// every round but the last writes at least ten triangles, whose corners use all but at most two
/// of its 32 vertices, so a batch writes at most `batch + 2 * rounds` vertices.
fn vcap_per_batch(batch: u32) -> u32 {
    batch + 2 * (batch / 30 + 1)
}

/// Vertices the queue of `strategy` holds for `mesh` (see [`DeviceQueue`]).
fn queue_capacity(strategy: Strategy, mesh: &DeviceMesh) -> Result<usize, crate::Error> {
    let n = mesh.index_count;
    let capacity = match strategy {
        Strategy::Naive => n as u64,
        Strategy::Multi => mesh.vertex_count as u64,
        Strategy::WarpVote { batch } => {
            if batch < 3 || batch % 3 != 0 {
                return Err(GeometryError::WarpBatch(batch).into());
            }
            (n as u64).div_ceil(batch as u64) * vcap_per_batch(batch) as u64
        }
        _ => {
            let (_, max_vertices) = strategy
                .dynamic_limits()
                .expect("a dynamic strategy has batch limits");
            let batches = mesh.batches.as_ref().map_or(0, |b| b.1);
            batches as u64 * max_vertices as u64
        }
    };
    if strategy != Strategy::Naive && capacity > u32::MAX as u64 {
        return Err(GpuError::Limit(format!(
            "{strategy} over {n} indices needs a queue of {capacity} vertices, more than its 32-bit corners address"
        ))
        .into());
    }
    Ok(capacity as usize)
}

fn no_corners() -> GpuError {
    GpuError::Limit("the queue has no corners for an indexed strategy".into())
}

impl DeviceQueue {
    /// Downloads the queue as three shaded vertices per triangle, in input order.
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<VertexOut>, GpuError> {
        let vertices = gpu.download(&self.vertices, self.vertices.len())?;
        let at = |i: usize| {
            vertices
                .get(i)
                .copied()
                .map(VertexOut::from)
                .ok_or_else(|| {
                    GpuError::Limit(format!(
                        "the queue's corner {i} is outside its {} vertices",
                        vertices.len()
                    ))
                })
        };
        match &self.corners {
            None => (0..self.index_count).map(at).collect(),
            Some(c) => gpu
                .download(c, self.index_count)?
                .into_iter()
                .map(|i| at(i as usize))
                .collect(),
        }
    }
}

/// A downloaded GPU geometry result.
#[derive(Debug, Clone)]
pub struct GpuGeometry {
    /// three shaded vertices per input triangle, in input order
    pub queue: Vec<VertexOut>,
    /// invocations per input vertex (with counting)
    pub counts: Option<Vec<u32>>,
    pub stats: GeometryStats,
}
