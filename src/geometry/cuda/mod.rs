//! The geometry stage on the GPU (kernels/geometry.cu), side by side with [`super::cpu`]. Every
//! strategy writes the triangle queue in input order: the vertices it shaded and, per triangle,
//! where its three corners are among them (see [`DeviceQueue`]).
//! With statistics requested, the kernels are compiled with invocation counting and count per
//! vertex exactly what the CPU reference counts.
//!
//! One file per job: `shader` (the user's CUDA vertex shader), `abi` (the structs shared with
//! kernels/common.cuh), `mesh` (inputs on the device, GPU batching), `queue` (the triangle
//! queue), and here the compiled kernels and every strategy's launch.

mod abi;
mod draws;
mod mesh;
mod queue;
mod shader;

pub use abi::{FusedDraw, FusedTarget, GpuBound, GpuCullView, GpuUniforms, GpuVertexOut};
pub use draws::{DrawLaunch, Fused, ShadeDraw};
pub use mesh::{BatchTables, DeviceMesh, DevicePatches, TriangleRuns, BATCHING, VERTEX_INPUT};
use queue::{no_corners, queue_capacity, vcap_per_batch};
pub use queue::{DeviceQueue, DeviceRecords, GpuGeometry};
pub use shader::{CudaShader, SHADER_FMA, SHADER_TRANSFORM};

/// Threads per block of `batch_bounds` (RXP_BOUNDS_BLOCK in kernels/batch_cull.cu).
const BOUNDS_BLOCK: u32 = 128;

/// The geometry stage's kernels (whole-batch culling, the strategies), then its processing
/// mode's stream-out; a vertex shader (`vs_main`) or a processing program precedes them.
pub const KERNELS: [Source<'static>; 3] = [
    rxpipe_gpu::kernel_source!("batch_cull.cu"),
    rxpipe_gpu::kernel_source!("geometry.cu"),
    rxpipe_gpu::kernel_source!("geometry_stream.cu"),
];

/// The fused geometry stage: the raster stage's definitions and triangle setup it shares, then
/// its kernels (after [`KERNELS`]).
pub const FUSED: [Source<'static>; 3] = [
    rxpipe_gpu::kernel_source!("raster.cuh"),
    rxpipe_gpu::kernel_source!("setup.cuh"),
    rxpipe_gpu::kernel_source!("geometry_fused.cu"),
];

use crate::geometry::{
    Batches, GeometryError, GeometryStats, PatchBatches, Strategy, Uniforms, VertexIn,
};
use crate::gpu::kernels::{self, Source};
use crate::gpu::{launch, Context, Gpu, GpuError};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, PushKernelArg};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The geometry kernels compiled with one vertex shader.
pub struct CudaGeometry {
    pub gpu: Arc<Gpu>,
    pub shader: CudaShader,
    /// counts invocations (compiled in only when requested)
    pub counting: bool,
    pub blocks: BlockSizes,
    /// whether fused frames cull whole batches hidden behind what they drew first (two passes:
    /// kernels/geometry_fused.cu); off unless `RXPIPE_OCCLUSION=1` (the frames measured so far
    /// hide too few batches to pay for the second pass)
    pub occlusion: bool,
    module: Arc<CudaModule>,
    /// the modules compiled for hashing batches of other vertex limits than the default (the
    /// hash tables are sized at compile time), by limit
    hash_modules: std::sync::Mutex<Vec<(u32, Arc<CudaModule>)>>,
    /// the table of [`CudaGeometry::enqueue_draws`], kept from frame to frame, and the sum of
    /// the invocation counts of its last launch
    draw_table: std::sync::Mutex<draws::DrawTable>,
}

/// Block sizes of the geometry kernels whose blocks are not one batch each (the dynamic
/// strategies size their blocks from the batch limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSizes {
    /// threads per block of naive, multi and patch (a multiple of 32, at most 512: naive and
    /// multi stage their 64-byte vertices in shared memory; RXP_BLOCK in kernels/geometry.cu)
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

/// Threads per block (per batch) of sorting (RXP_SORT_BLOCK in kernels/geometry.cu), and the
/// most keys a block sorts (RXP_SORT_KEYS: the dynamic batches' index limit).
const SORT_BLOCK: u32 = 256;
const SORT_KEYS: u32 = 1024;

/// A strategy's launch over one mesh: the elements it covers (indices, vertices or list entries)
/// and its grid.
#[derive(Debug, Clone, Copy)]
struct Plan {
    n: u32,
    blocks: u32,
    threads: u32,
    smem: u32,
}

/// The constants a strategy's kernel takes besides its mesh and queue: warp voting's batch and
/// region size per batch (0 otherwise), and the dynamic strategies' constant after the batch
/// starts (sorting's vertex limit, hashing's probe budget, unlimited for linear probing).
fn constants(strategy: Strategy) -> (u32, u32, u32) {
    let (batch, vcap) = match strategy {
        Strategy::WarpVote { batch } => (batch, vcap_per_batch(batch)),
        _ => (0, 0),
    };
    let extra = match strategy {
        Strategy::DynamicSort { max_vertices, .. } => max_vertices,
        Strategy::ParallelHash { fast_probes, .. } => fast_probes,
        _ => u32::MAX,
    };
    (batch, vcap, extra)
}

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
                "block sizes {} threads (naive, multi, patch; a multiple of 32 up to 512), {} warps (warp voting; 1 to 32) and {} threads (hashing; a multiple of 32 up to 1024) are not supported",
                e, blocks.vote_warps, h
            )));
        }
        let defines = Self::defines(
            &shader,
            counting,
            blocks,
            crate::geometry::DEFAULT_MAX_VERTICES,
        );
        let module = gpu.module("geometry", &Self::parts(&shader), &borrowed(&defines))?;
        let draw_table = draws::DrawTable {
            draws: gpu.zeros(1, "geometry draw table")?,
            total: gpu.zeros(1, "the frame's invocation total")?,
            fused: gpu.zeros(1, "fused draw table")?,
            batches: gpu.zeros(1, "the batches to draw")?,
            batches2: gpu.zeros(1, "the batches to draw")?,
            state: gpu.zeros(1, "the batches' states")?,
            seen: gpu.zeros(1, "the batches seen")?,
            hiz: gpu.zeros(1, "the depth tiles")?,
        };
        Ok(CudaGeometry {
            gpu,
            shader,
            counting,
            blocks,
            occlusion: false,
            module,
            hash_modules: Default::default(),
            draw_table: std::sync::Mutex::new(draw_table),
        })
    }

    /// A kernel of the compiled module by name: a processing program's own kernels (those its
    /// source defines beside `rxp_program`).
    pub fn function(&self, name: &str) -> Result<CudaFunction, GpuError> {
        self.gpu.function(&self.module, name)
    }

    fn parts(shader: &CudaShader) -> [Source<'_>; 9] {
        [
            kernels::COMMON,
            kernels::BLOCKS,
            Source {
                name: &shader.name,
                text: &shader.source,
            },
            KERNELS[0],
            KERNELS[1],
            KERNELS[2],
            FUSED[0],
            FUSED[1],
            FUSED[2],
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
        d.push(("RXP_SORT_BLOCK".into(), SORT_BLOCK.to_string()));
        d.push(("RXP_HASH_VERTICES".into(), max_vertices.to_string()));
        d.push((
            "RXP_HASH_TABLE".into(),
            crate::geometry::hash_table_size(max_vertices).to_string(),
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
            crate::geometry::DEFAULT_MAX_VERTICES,
        );
        self.gpu
            .module_origin(&Self::parts(&self.shader), &borrowed(&defines))
    }

    /// Hashing kernel `name` for batches of at most `max_vertices` vertices: from the main
    /// module for the default limit, else from a module compiled (once) for that limit.
    fn hash_function(&self, name: &str, max_vertices: u32) -> Result<CudaFunction, GpuError> {
        if max_vertices == crate::geometry::DEFAULT_MAX_VERTICES {
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

    /// A queue for `strategy` sized for `mesh` (and reused frame after frame); `fused_only`:
    /// for fused frames, without vertices ([`DeviceQueue::fused_only`]; a hashing strategy
    /// with a fused kernel: [`CudaGeometry::fuses`]).
    pub fn queue(
        &self,
        mesh: &DeviceMesh,
        strategy: Strategy,
        fused_only: bool,
    ) -> Result<DeviceQueue, GeometryError> {
        if mesh.view.is_some() && strategy != Strategy::Patch {
            return Err(GpuError::Limit(format!(
                "{strategy} reads an index buffer; a view of a mesh's triangles is for the patch strategy"
            ))
            .into());
        }
        let capacity = match fused_only {
            true => {
                if !self.fuses(strategy) {
                    return Err(GpuError::Limit(format!(
                        "the {} strategy has no fused geometry stage",
                        strategy.name()
                    ))
                    .into());
                }
                1
            }
            false => queue_capacity(strategy, mesh)?,
        };
        let corners = match strategy {
            // (the patch strategy's corners live with the mesh's patches)
            Strategy::Naive | Strategy::Patch => None,
            _ => {
                let mut c = self
                    .gpu
                    .zeros(mesh.index_count.max(1), "the queue's corners")?;
                // multi's corners are the index buffer, the same every frame: copied once here
                if strategy == Strategy::Multi && mesh.index_count > 0 {
                    self.gpu
                        .stream
                        .memcpy_dtod(&*mesh.indices, &mut c)
                        .ctx("copying the indices into the queue")?;
                }
                Some(c)
            }
        };
        Ok(DeviceQueue {
            strategy,
            source: mesh.id,
            vertices: self.gpu.zeros(capacity.max(1), "the triangle queue")?,
            corners,
            counts: self
                .gpu
                .zeros(if self.counting { mesh.vertex_count } else { 1 }, "counts")?,
            total: self.gpu.zeros(1, "the invocation total")?,
            counts_zero: Arc::new(AtomicBool::new(true)),
            index_count: mesh.index_count,
            fused_only,
        })
    }

    /// Whether `strategy` has a fused geometry stage (kernels/geometry_fused.cu: the hashing
    /// strategies whose batches' vertices fit in shared memory beside the hash table).
    pub fn fuses(&self, strategy: Strategy) -> bool {
        matches!(
            strategy,
            Strategy::DynamicHash { .. } | Strategy::ParallelHash { .. }
        ) && self.kernel(strategy, "_fused_draws").is_ok()
    }

    /// Checks that `q` can take `strategy` over `mesh` and returns the launch that shades it
    /// (`None`: nothing to shade): its grid, the same for a launch of its own and for its share of
    /// a launch over many meshes ([`CudaGeometry::enqueue_draws`]).
    fn plan(
        &self,
        strategy: Strategy,
        mesh: &DeviceMesh,
        q: &DeviceQueue,
    ) -> Result<Option<Plan>, GeometryError> {
        let block = self.blocks.elementwise;
        let vote_warps = self.blocks.vote_warps;
        // (the elementwise strategies' threads are counted in 32 bits too; the queue's own bound
        // is queue_capacity's)
        mesh::indices_fit(mesh.index_count, "one geometry launch")?;
        if mesh.view.is_some() && strategy != Strategy::Patch {
            return Err(GpuError::Limit(format!(
                "{strategy} reads an index buffer; a view of a mesh's triangles is for the patch strategy"
            ))
            .into());
        }
        let ni = mesh.index_count as u32;
        if q.strategy != strategy
            || q.index_count != mesh.index_count
            || (strategy == Strategy::Multi && q.source != mesh.id)
        {
            return Err(GpuError::Limit(format!(
                "the queue was made for {} over {} indices, not {} over {}",
                q.strategy, q.index_count, strategy, mesh.index_count
            ))
            .into());
        }
        if ni == 0 {
            return Ok(None);
        }
        // (a queue for fused frames holds no vertices: only a fused launch, which writes none
        // there, may take it; `launch_draws` checks)
        let capacity = queue_capacity(strategy, mesh)?;
        if q.vertices.len() < capacity && !q.fused_only {
            return Err(GpuError::Limit(format!(
                "the queue holds {} vertices, {strategy} needs {capacity}",
                q.vertices.len()
            ))
            .into());
        }
        let elementwise = |n: u32| Plan {
            n,
            blocks: n.div_ceil(block),
            threads: block,
            smem: 0,
        };
        Ok(Some(match strategy {
            Strategy::Naive => elementwise(ni),
            Strategy::Multi => elementwise(mesh.vertex_count as u32),
            Strategy::Patch => {
                let p = mesh.patches.as_ref().ok_or(GeometryError::NoPatches)?;
                if p.shaded == 0 {
                    return Ok(None);
                }
                elementwise(p.shaded as u32)
            }
            Strategy::WarpVote { batch } => {
                if batch < 3 || batch % 3 != 0 {
                    return Err(GeometryError::WarpBatch(batch));
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
                Plan {
                    n: ni,
                    blocks: ni.div_ceil(batch).div_ceil(vote_warps),
                    threads: 32 * vote_warps,
                    smem: smem as u32,
                }
            }
            Strategy::DynamicSort { .. }
            | Strategy::DynamicHash { .. }
            | Strategy::ParallelHash { .. } => {
                let (max_indices, max_vertices) = strategy
                    .dynamic_limits()
                    .expect("a dynamic strategy has batch limits");
                let (_, nb, bi, bv) = mesh.batches.as_ref().ok_or_else(|| {
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
                let nb = *nb as u32;
                if nb == 0 {
                    return Ok(None);
                }
                if let Strategy::DynamicSort { .. } = strategy {
                    // (id, position) keys and ranks for the most indices a batch holds
                    // (RXP_SORT_KEYS), and the unique ids
                    let smem = SORT_KEYS as usize * 12 + max_vertices as usize * 4;
                    if smem > SHARED_LIMIT {
                        return Err(GpuError::Limit(format!("sorting batches of {max_indices} indices and {max_vertices} vertices needs {smem} bytes of shared memory (at most {SHARED_LIMIT})")).into());
                    }
                    Plan {
                        n: ni,
                        blocks: nb,
                        threads: SORT_BLOCK,
                        smem: smem as u32,
                    }
                } else {
                    let table = crate::geometry::hash_table_size(max_vertices);
                    // the table, each slot's vertex number, the ids by number (static arrays of
                    // the module compiled for this vertex limit)
                    let smem = 4 * (2 * table + max_vertices) as usize;
                    if smem > SHARED_LIMIT {
                        return Err(GpuError::Limit(format!("hashing batches of {max_indices} indices and {max_vertices} vertices needs {smem} bytes of shared memory (at most {SHARED_LIMIT})")).into());
                    }
                    // each thread takes every blockDim-th index and shades every blockDim-th
                    // vertex
                    Plan {
                        n: ni,
                        blocks: nb,
                        threads: self.blocks.hash,
                        smem: 0,
                    }
                }
            }
        }))
    }

    /// The kernel of `strategy` (with `suffix`: "" for one mesh, "_draws" for a draw table).
    fn kernel(&self, strategy: Strategy, suffix: &str) -> Result<CudaFunction, GpuError> {
        let name = match strategy {
            Strategy::Naive => "naive",
            Strategy::Multi => "multi_shade",
            Strategy::Patch => "patch_shade",
            Strategy::WarpVote { .. } => "warp_vote",
            Strategy::DynamicSort { .. } => "dyn_sort",
            Strategy::DynamicHash { .. } => "dyn_hash",
            Strategy::ParallelHash { .. } => "dyn_phash",
        };
        let name = format!("{name}{suffix}");
        match strategy {
            Strategy::DynamicHash { max_vertices, .. }
            | Strategy::ParallelHash { max_vertices, .. } => {
                self.hash_function(&name, max_vertices)
            }
            _ => self.function(&name),
        }
    }

    /// Numbers `mesh`'s dynamic batches once ([`BatchTables`]): the hashing strategies' frames
    /// then read each batch's numbers instead of hashing it. Returns whether it did: a mesh
    /// without batches, a view, and batches of more than 1024 indices (the hashing kernels') or
    /// 256 vertices (numbers are bytes) take none.
    pub fn build_tables(&self, mesh: &mut DeviceMesh) -> Result<bool, GeometryError> {
        let Some((starts, nb, mi, max_vertices)) = &mesh.batches else {
            return Ok(false);
        };
        if *mi > 1024 || *max_vertices > 256 || mesh.view.is_some() {
            return Ok(false);
        }
        let (nb, max_vertices, limits) = (*nb, *max_vertices, (*mi, *max_vertices));
        mesh::indices_fit(mesh.index_count, "batch tables")?;
        let numbers = self.gpu.zeros(mesh.index_count.max(1), "batch numbers")?;
        let vertices = self
            .gpu
            .zeros((nb * max_vertices as usize).max(1), "batch vertices")?;
        let counts = self.gpu.zeros(nb.max(1), "batch vertex counts")?;
        let bounds = self.gpu.zeros(nb.max(1), "batch bounds")?;
        let mut t = BatchTables {
            numbers,
            vertices,
            counts,
            bounds,
            limits,
        };
        let k = self.hash_function("dyn_hash_tables", max_vertices)?;
        let mut l = self.gpu.stream.launch_builder(&k);
        l.arg(&*mesh.indices)
            .arg(starts)
            .arg(&mut t.numbers)
            .arg(&mut t.vertices)
            .arg(&mut t.counts);
        // SAFETY: one block per batch, as the hashing kernels; the batches' starts cover the
        // index buffer, whose every index gets a number, and each batch writes its own
        // `max_vertices` slots and count.
        unsafe { launch(l, nb as u32, self.blocks.hash, 0, "dyn_hash_tables") }?;
        let k = self.function("batch_bounds")?;
        let mut l = self.gpu.stream.launch_builder(&k);
        l.arg(&*mesh.vertices)
            .arg(&*mesh.indices)
            .arg(starts)
            .arg(&mut t.bounds);
        // SAFETY: one block per batch (RXP_BOUNDS_BLOCK threads), each reading its batch's
        // indices (within the index buffer, whose ids are below the vertex count) and writing
        // its own bounds.
        unsafe { launch(l, nb as u32, BOUNDS_BLOCK, 0, "batch_bounds") }?;
        mesh.tables = Some(t);
        Ok(true)
    }

    /// Enqueues the geometry stage: `strategy` over `mesh` into `q` (counts are added to what `q`
    /// holds) by a launch of its own.
    pub fn enqueue(
        &self,
        strategy: Strategy,
        mesh: &DeviceMesh,
        uniforms: &Uniforms,
        q: &mut DeviceQueue,
    ) -> Result<(), GeometryError> {
        if q.fused_only {
            return Err(GpuError::Limit(
                "the queue was made for fused frames (without vertices): it cannot be shaded unfused"
                    .into(),
            )
            .into());
        }
        let Some(plan) = self.plan(strategy, mesh, q)? else {
            return Ok(());
        };
        let u = GpuUniforms::from(uniforms);
        let f = self.kernel(strategy, "")?;
        // (this launch adds to the counts)
        q.counts_zero.store(false, Ordering::Relaxed);
        let mut l = self.gpu.stream.launch_builder(&f);
        let n = plan.n;
        let name = strategy.name();
        let (batch, vcap, extra) = constants(strategy);
        match strategy {
            Strategy::Naive => {
                l.arg(&*mesh.vertices)
                    .arg(&*mesh.indices)
                    .arg(&n)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(&mut q.counts);
            }
            Strategy::Multi => {
                // (the queue's corners, the indices, were copied when it was made)
                l.arg(&*mesh.vertices)
                    .arg(&n)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(&mut q.counts);
            }
            Strategy::Patch => {
                let p = mesh.patches.as_ref().ok_or(GeometryError::NoPatches)?;
                l.arg(&*mesh.vertices)
                    .arg(&*p.vertices)
                    .arg(&p.runs)
                    .arg(&p.nruns)
                    .arg(&n)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(&mut q.counts);
            }
            Strategy::WarpVote { .. } => {
                l.arg(&*mesh.vertices)
                    .arg(&*mesh.indices)
                    .arg(&n)
                    .arg(&batch)
                    .arg(&vcap)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(q.corners.as_mut().ok_or_else(no_corners)?)
                    .arg(&mut q.counts);
            }
            _ => {
                let (starts, ..) = mesh.batches.as_ref().ok_or_else(|| {
                    GpuError::Limit("the mesh was uploaded without dynamic batches".into())
                })?;
                l.arg(&*mesh.vertices)
                    .arg(&*mesh.indices)
                    .arg(starts)
                    .arg(&extra)
                    .arg(&u)
                    .arg(&mut q.vertices)
                    .arg(q.corners.as_mut().ok_or_else(no_corners)?)
                    .arg(&mut q.counts);
            }
        }
        // SAFETY: the arguments match the kernel's signature; `plan` checked the queue's size
        // and the strategy's limits, and the grid is the strategy's (one thread per element, a
        // warp per batch of indices, or a block per dynamic batch); the patch runs lie within the
        // lists, whose entries index the mesh's vertices (built from its validated indices).
        unsafe { launch(l, plan.blocks, plan.threads, plan.smem, name) }?;
        Ok(())
    }

    /// Runs the stage once (building the dynamic batches on the GPU unless matching ones are
    /// given; the patch strategy patches the indices on the CPU, as [`super::cpu::run`] does) and
    /// downloads everything: the triangle queue,
    /// per-vertex invocation counts and statistics (invocation counts only when counting).
    pub fn run(
        &self,
        strategy: Strategy,
        vertices: &[VertexIn],
        indices: &[u32],
        batches: Option<&Batches>,
        uniforms: &Uniforms,
    ) -> Result<GpuGeometry, GeometryError> {
        // given batches are used when they fit the strategy; otherwise the GPU builds them
        let limits = strategy.dynamic_limits();
        let given = batches.filter(|b| Some((b.max_indices, b.max_vertices)) == limits);
        let mesh = DeviceMesh::upload(&self.gpu, vertices, indices, given)?;
        self.run_mesh(strategy, mesh, indices, given.is_some(), uniforms)
    }

    /// Runs a processing program (the kernels compiled with [`CudaShader::program`]) over the
    /// triangles of `indices` (ids below `n`) with `strategy`, as [`CudaGeometry::run`] runs a
    /// vertex shader: `table` is the program's input (a `repr(C)` struct the program reads as
    /// its own, device pointers and constants), uploaded in the vertex buffer's place, its bytes
    /// as they are. The queue holds each run's record, per triangle corner.
    pub fn process<T: bytemuck::Pod>(
        &self,
        strategy: Strategy,
        table: &T,
        n: usize,
        indices: &[u32],
    ) -> Result<GpuGeometry, GeometryError> {
        let table = self.upload_table(table)?;
        let mesh = DeviceMesh::for_program(&self.gpu, table, indices, n)?;
        self.run_mesh(strategy, mesh, indices, false, &Uniforms::default())
    }

    /// A program's input table on the device: its bytes as 32-byte vertex entries (bits kept:
    /// no arithmetic touches them), in the vertex buffer's place.
    fn upload_table<T: bytemuck::Pod>(&self, table: &T) -> Result<CudaSlice<VertexIn>, GpuError> {
        let bytes = bytemuck::bytes_of(table);
        let mut words = vec![0u32; bytes.len().div_ceil(32) * 8];
        bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        let entries: Vec<VertexIn> = words
            .chunks_exact(8)
            .map(|c| {
                let f = |k: usize| f32::from_bits(c[k]);
                VertexIn {
                    position: glam::Vec3::new(f(0), f(1), f(2)),
                    normal: glam::Vec3::new(f(3), f(4), f(5)),
                    uv: glam::Vec2::new(f(6), f(7)),
                }
            })
            .collect();
        self.gpu.upload(&entries, "the program's input")
    }

    /// [`CudaGeometry::process`] with everything on the device: the triangles of the first
    /// `index_count` entries of `indices` (ids below `n`), and every vertex's record left there
    /// (stream-out to device memory). A vertex the indices name gets its runs' record (they are
    /// all the same); one they do not name runs once afterwards, outside the strategy and its
    /// counts. The program's table must stay valid until this returns.
    pub fn process_on_device<T: bytemuck::Pod>(
        &self,
        strategy: Strategy,
        table: &T,
        n: usize,
        indices: &Arc<CudaSlice<u32>>,
        index_count: usize,
    ) -> Result<DeviceRecords, GeometryError> {
        let n32 = u32::try_from(n)
            .map_err(|_| GpuError::Limit(format!("{n} vertices are more than a program takes")))?;
        let index_count = index_count / 3 * 3;
        let table = self.upload_table(table)?;
        let mut mesh = DeviceMesh::for_device_program(table, indices.clone(), index_count, n);
        // (the patch strategy patches the triangles on the host)
        let host = match strategy {
            Strategy::Patch => self.gpu.download(&**indices, index_count)?,
            _ => Vec::new(),
        };
        let (queue, kernel_ms) =
            self.shade_mesh(strategy, &mut mesh, &host, false, &Uniforms::default())?;
        let mut records: CudaSlice<GpuVertexOut> = self.gpu.zeros(n.max(1), "the records")?;
        let mut named: CudaSlice<u32> = self.gpu.zeros(n.max(1), "the vertices named")?;
        let mut totals: CudaSlice<u64> = self.gpu.zeros(2, "the run totals")?;
        let s = &self.gpu.stream;
        let ni = index_count as u32;
        let null = 0u64;
        let scatter = self.gpu.function(&self.module, "rxp_scatter")?;
        let mut l = s.launch_builder(&scatter);
        l.arg(&**indices).arg(&ni);
        match queue.corners_for(&mesh) {
            Some(c) => l.arg(c),
            None => l.arg(&null),
        };
        l.arg(&queue.vertices).arg(&mut records).arg(&mut named);
        // SAFETY: a thread per index; every index is below n (the caller's triangles name
        // vertices below n), every corner within the queue the strategy wrote.
        unsafe { crate::gpu::launch_1d(l, ni, "rxp_scatter") }?;
        let finish = self.gpu.function(&self.module, "rxp_finish")?;
        let mut l = s.launch_builder(&finish);
        l.arg(&*mesh.vertices)
            .arg(&named)
            .arg(&n32)
            .arg(&queue.counts)
            .arg(&mut records)
            .arg(&mut totals);
        // SAFETY: a thread per vertex below n, the length of named and records (and of counts
        // when counting, the only time they are read).
        unsafe { crate::gpu::launch_1d(l, n32, "rxp_finish") }?;
        let totals = self.gpu.download(&totals, 2)?;
        Ok(DeviceRecords {
            records,
            stats: GeometryStats {
                invocations: if self.counting { totals[1] } else { 0 },
                triangles: (index_count / 3) as u64,
                unique_vertices: totals[0],
            },
            kernel_ms,
        })
    }

    /// Builds what `strategy` needs over `mesh` (of `indices`: the patch strategy patches them
    /// on the host; `batched`: its dynamic batches are there already) and runs its kernels into
    /// a new queue; returns the queue and the kernels' milliseconds (CUDA events).
    fn shade_mesh(
        &self,
        strategy: Strategy,
        mesh: &mut DeviceMesh,
        indices: &[u32],
        batched: bool,
        uniforms: &Uniforms,
    ) -> Result<(DeviceQueue, f64), GeometryError> {
        if let (false, Some((mi, mv))) = (batched, strategy.dynamic_limits()) {
            mesh.build_batches(&self.gpu, mi, mv)?;
        }
        if strategy == Strategy::Patch {
            mesh.patches = Some(DevicePatches::upload(
                &self.gpu,
                PatchBatches::of_indices(indices, mesh.vertex_count)?,
            )?);
        }
        let mut q = self.queue(mesh, strategy, false)?;
        let kernel_ms = self
            .gpu
            .time(0, 1, || self.enqueue(strategy, mesh, uniforms, &mut q))?[0];
        Ok((q, kernel_ms))
    }

    /// [`CudaGeometry::run`] from the uploaded `mesh` (of `indices`) on; `batched`: its dynamic
    /// batches are there already.
    fn run_mesh(
        &self,
        strategy: Strategy,
        mut mesh: DeviceMesh,
        indices: &[u32],
        batched: bool,
        uniforms: &Uniforms,
    ) -> Result<GpuGeometry, GeometryError> {
        let (q, kernel_ms) = self.shade_mesh(strategy, &mut mesh, indices, batched, uniforms)?;
        let queue = q.download(&self.gpu, &mesh)?;
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
            kernel_ms,
        })
    }
}
