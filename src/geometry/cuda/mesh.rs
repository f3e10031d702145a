//! A mesh's inputs on the device: upload, packing from a mesh the passes left there, and the
//! dynamic batches built on the GPU (kernels/batching.cu).

use crate::geometry::{Batches, GeometryError, PatchBatches, VertexIn};
use crate::gpu::kernels::{self, Source};
use crate::gpu::{launch, Context, Gpu, GpuError};
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::sync::Arc;

/// A number for every mesh made, so that a queue knows which mesh its copied corners came from.
static NEXT_MESH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_MESH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A mesh's inputs on the device: vertices, indices and (for the dynamic strategies) the batches.
pub struct DeviceMesh {
    /// unique among the meshes of this process
    pub id: u64,
    /// shared with the subsets frame stages make of the mesh
    pub vertices: Arc<CudaSlice<VertexIn>>,
    /// shared with the views frame stages make of the mesh
    pub indices: Arc<CudaSlice<u32>>,
    pub vertex_count: usize,
    /// whole triangles only
    pub index_count: usize,
    /// distinct vertices the indices reference (counted once, at upload; see
    /// [`DeviceMesh::unique_vertices`])
    pub unique_vertices: usize,
    /// the count, still on the device (a frame's subsets count there and are read with the
    /// frame's statistics, not in the middle of the frame)
    pub unique_pending: Option<CudaSlice<u64>>,
    /// batch starts (triangle offsets, one more than batches) and the limits they were built for
    pub batches: Option<(CudaSlice<u32>, usize, u32, u32)>,
    /// the batches hashed once, for the hashing strategies ([`BatchTables`])
    pub tables: Option<BatchTables>,
    /// the patches' vertex lists, for the patch strategy
    pub patches: Option<DevicePatches>,
    /// a value per triangle for the raster stage (the patch shading mode's), as f32 bits
    pub faces: Option<Arc<CudaSlice<u32>>>,
    /// vertex colours (linear RGBA, four floats per vertex) for materials, shared with subsets
    /// and views
    pub colors: Option<Arc<CudaSlice<f32>>>,
    /// tangents (four floats per vertex: xyz and the bitangent's sign) for normal maps, shared
    /// as the colours
    pub tangents: Option<Arc<CudaSlice<f32>>>,
    /// the second uv set (two floats per vertex) for textures that read it, shared as the
    /// colours
    pub uvs1: Option<Arc<CudaSlice<f32>>>,
    /// set on a view ([`DeviceMesh::view`]): which of the whole mesh's triangles it holds. Its
    /// indices, patch corners and triangle values are then the whole mesh's, read through these
    /// runs; `index_count` counts the kept triangles' indices.
    pub view: Option<TriangleRuns>,
    /// set on a window ([`DeviceMesh::window`]): the whole mesh whose batches it draws, and
    /// which of them; `view` then holds the one run of their triangles
    pub window: Option<BatchWindow>,
    /// the batch starts on the host, fetched once when a frame in parts first cuts the mesh
    /// ([`DeviceMesh::batch_starts_host`])
    starts_host: std::sync::OnceLock<Vec<u32>>,
    /// the distinct vertices of the windows made of this mesh, by their batches, once counted
    /// (a window made again at the same batches, frame after frame, is not counted again)
    window_counts: std::sync::Mutex<std::collections::HashMap<(u32, u32), usize>>,
}

/// A run of a mesh's dynamic batches drawn as a mesh of its own, read from the whole mesh's
/// indices, batches and tables (nothing copied): what a part of a frame drawn in parts draws of
/// an object cut at batch starts ([`DeviceMesh::window`]).
pub struct BatchWindow {
    pub whole: Arc<DeviceMesh>,
    pub batches: std::ops::Range<u32>,
}

/// A mesh's dynamic batches numbered once by hashing (`dyn_hash_tables` in kernels/geometry.cu),
/// so that the hashing strategies' frames read each index's number in its batch instead of
/// hashing the batch again: a byte an index, and a list of ids a batch; and each batch's bounds.
pub struct BatchTables {
    /// each index's vertex number within its batch
    pub numbers: CudaSlice<u8>,
    /// each batch's vertex ids by number, `max_vertices` slots a batch
    pub vertices: CudaSlice<u32>,
    /// each batch's vertex count
    pub counts: CudaSlice<u32>,
    /// each batch's bounds, by which the fused geometry stage culls batches whole
    /// (kernels/batch_cull.cu)
    pub bounds: CudaSlice<super::GpuBound>,
    /// the batch limits (indices, vertices) of the batches they number
    pub limits: (u32, u32),
}

/// The triangles a view keeps, as runs of three numbers: first triangle of the whole mesh,
/// length, and how many triangles earlier runs hold (kernels find a triangle's run by binary
/// search: rxp_run_of in kernels/blocks.cuh).
pub struct TriangleRuns {
    pub runs: CudaSlice<u32>,
    /// the same runs on the host
    pub host: Vec<u32>,
}

impl TriangleRuns {
    /// How many runs there are.
    pub fn count(&self) -> u32 {
        (self.host.len() / 3) as u32
    }

    /// One past the last triangle of the whole mesh that the runs reach.
    pub fn end(&self) -> usize {
        self.host
            .chunks_exact(3)
            .map(|r| r[0] as usize + r[1] as usize)
            .max()
            .unwrap_or(0)
    }

    /// The whole mesh's triangles the view holds, in its order.
    pub fn sources(&self) -> impl Iterator<Item = usize> + '_ {
        self.host
            .chunks_exact(3)
            .flat_map(|r| r[0] as usize..r[0] as usize + r[1] as usize)
    }
}

/// The patch strategy's input on the device (see [`PatchBatches`]): every patch's vertex list
/// and, per triangle, its three corners as positions among the shaded lists, computed once.
pub struct DevicePatches {
    /// the lists, end to end, shared with subsets
    pub vertices: Arc<CudaSlice<u32>>,
    /// the lists' total length: the queue's vertices
    pub vertex_total: usize,
    /// three queue positions per triangle of this mesh (what the raster stage reads; a view's
    /// are the whole mesh's)
    pub corners: Arc<CudaSlice<u32>>,
    /// the lists to shade as runs of entries, three numbers each: first entry, length, and
    /// how many entries earlier runs hold (one run of every entry, unless a frame stage kept
    /// only some patches)
    pub runs: CudaSlice<u32>,
    pub nruns: u32,
    /// the entries shaded: the shader invocations
    pub shaded: usize,
    /// the host's copy, to find the patches of a subset
    pub host: Arc<PatchBatches>,
    /// the kernels that count a view's vertices (vertex_input.cu with blocks.cuh), looked up
    /// once (finding a module hashes its sources, which would cost every frame)
    pub counting: Arc<cudarc::driver::CudaModule>,
}

impl DevicePatches {
    /// Uploads the lists and the corners of `p`.
    pub fn upload(gpu: &Gpu, p: PatchBatches) -> Result<DevicePatches, GpuError> {
        use rayon::prelude::*;
        let corners: Vec<u32> = (0..3 * p.patch_of_face.len())
            .into_par_iter()
            .map(|c| p.corner(c / 3, c % 3))
            .collect();
        let total = p.vertices.len();
        Ok(DevicePatches {
            vertices: Arc::new(gpu.upload(&p.vertices, "patch vertex lists")?),
            vertex_total: total,
            corners: Arc::new(gpu.upload(&corners, "patch corners")?),
            runs: gpu.upload(&[0, total as u32, 0], "patch runs")?,
            nruns: (total > 0) as u32,
            shaded: total,
            host: Arc::new(p),
            counting: gpu.module(
                "vertex_input",
                &[kernels::COMMON, kernels::BLOCKS, VERTEX_INPUT],
                &[],
            )?,
        })
    }
}

impl DeviceMesh {
    /// A mesh of `vertex_count` vertices and the first `index_count` entries of `indices`
    /// (whole triangles), `unique_vertices` of them referenced, with nothing else attached
    /// (no batches, patches, per-face values or view): what every constructor starts from.
    fn bare(
        vertices: Arc<CudaSlice<VertexIn>>,
        indices: Arc<CudaSlice<u32>>,
        vertex_count: usize,
        index_count: usize,
        unique_vertices: usize,
    ) -> DeviceMesh {
        DeviceMesh {
            id: next_id(),
            vertices,
            indices,
            vertex_count,
            index_count: index_count / 3 * 3,
            unique_vertices,
            unique_pending: None,
            batches: None,
            tables: None,
            patches: None,
            faces: None,
            colors: None,
            tangents: None,
            uvs1: None,
            view: None,
            window: None,
            starts_host: std::sync::OnceLock::new(),
            window_counts: Default::default(),
        }
    }

    /// The mesh the geometry stage reads: the whole mesh of a window (with the window's batches),
    /// else this one.
    pub fn drawn(&self) -> (&DeviceMesh, Option<std::ops::Range<u32>>) {
        match &self.window {
            Some(w) => (&w.whole, Some(w.batches.clone())),
            None => (self, None),
        }
    }

    /// The dynamic batches' starts (in triangles, one more than batches) on the host: downloaded
    /// once (`None` without batches).
    pub fn batch_starts_host(&self, gpu: &Gpu) -> Result<Option<&[u32]>, GpuError> {
        let Some((starts, n, ..)) = &self.batches else {
            return Ok(None);
        };
        if let Some(h) = self.starts_host.get() {
            return Ok(Some(h));
        }
        let h = gpu.download(starts, n + 1)?;
        Ok(Some(self.starts_host.get_or_init(|| h)))
    }

    /// Batches `batches` of `whole` (a mesh with dynamic batches, not itself a view or window)
    /// as a mesh of their own: their triangles, drawn from the whole mesh's indices, batches and
    /// batch tables by the dynamic strategies, nothing copied (the raster stage reads them
    /// through one triangle run). Its distinct vertices are counted on the device.
    pub fn window(
        whole: &Arc<DeviceMesh>,
        gpu: &Gpu,
        batches: std::ops::Range<u32>,
    ) -> Result<DeviceMesh, GpuError> {
        if whole.view.is_some() || whole.window.is_some() {
            return Err(GpuError::Limit("a view is not windowed again".into()));
        }
        let starts = whole.batch_starts_host(gpu)?.ok_or_else(|| {
            GpuError::Limit("only a mesh with dynamic batches has windows".into())
        })?;
        if batches.start > batches.end || batches.end as usize >= starts.len() {
            return Err(GpuError::Limit(format!(
                "batches {batches:?} are not among the mesh's {}",
                starts.len() - 1
            )));
        }
        let (lo, hi) = (starts[batches.start as usize], starts[batches.end as usize]);
        let host = vec![lo, hi - lo, 0];
        let range = 3 * lo as usize..3 * hi as usize;
        let counted = whole
            .window_counts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(batches.start, batches.end))
            .copied();
        let unique = match counted {
            Some(_) => None,
            None => Some(used_vertices(
                gpu,
                &gpu.module(
                    "vertex_input",
                    &[kernels::COMMON, kernels::BLOCKS, VERTEX_INPUT],
                    &[],
                )?,
                &whole.indices.slice(range.clone()),
                range.len(),
                whole.vertex_count,
            )?),
        };
        Ok(DeviceMesh {
            unique_pending: unique,
            faces: whole.faces.clone(),
            colors: whole.colors.clone(),
            tangents: whole.tangents.clone(),
            uvs1: whole.uvs1.clone(),
            view: Some(TriangleRuns {
                runs: gpu.upload(&host, "the window's triangles")?,
                host,
            }),
            window: Some(BatchWindow {
                whole: whole.clone(),
                batches,
            }),
            ..DeviceMesh::bare(
                whole.vertices.clone(),
                whole.indices.clone(),
                whole.vertex_count,
                range.len(),
                counted.unwrap_or(0),
            )
        })
    }

    /// Validates and uploads a mesh's shader inputs and index buffer, and the dynamic batches when
    /// given.
    pub fn upload(
        gpu: &Gpu,
        vertices: &[VertexIn],
        indices: &[u32],
        batches: Option<&Batches>,
    ) -> Result<DeviceMesh, GeometryError> {
        let n = vertices.len();
        let indices = crate::geometry::whole_triangles(indices, n)?;
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
            batches,
            ..DeviceMesh::bare(
                Arc::new(gpu.upload(vertices, "vertices")?),
                Arc::new(gpu.upload(indices, "indices")?),
                n,
                indices.len(),
                crate::geometry::cpu::unique_count(indices, n),
            )
        })
    }
}

impl DeviceMesh {
    /// The input of a processing program ([`super::CudaGeometry::process`]): its table in the
    /// vertex buffer's place, `indices` over `n` vertex ids.
    pub fn for_program(
        gpu: &Gpu,
        table: CudaSlice<VertexIn>,
        indices: &[u32],
        n: usize,
    ) -> Result<DeviceMesh, GpuError> {
        Ok(DeviceMesh::bare(
            Arc::new(table),
            Arc::new(gpu.upload(indices, "indices")?),
            n,
            indices.len(),
            crate::geometry::cpu::unique_count(indices, n),
        ))
    }
}

impl DeviceMesh {
    /// The input of a processing program whose triangles are on the device already: the first
    /// `index_count` entries of `indices`, over `n` vertex ids (the distinct ones are counted
    /// by the program's stream-out, not here).
    pub fn for_device_program(
        table: CudaSlice<VertexIn>,
        indices: Arc<CudaSlice<u32>>,
        index_count: usize,
        n: usize,
    ) -> DeviceMesh {
        DeviceMesh::bare(Arc::new(table), indices, n, index_count, 0)
    }
}

/// The dynamic batching preprocess (the batch starts of the CPU's front-to-back scan).
pub const BATCHING: Source<'static> = rxpipe_gpu::kernel_source!("batching.cu");

/// Builds the geometry stage's input on the device (kernels/vertex_input.cu).
pub const VERTEX_INPUT: Source<'static> = rxpipe_gpu::kernel_source!("vertex_input.cu");

impl DeviceMesh {
    /// The shader inputs of a mesh the passes left on the device, packed there (no transfer,
    /// and the index buffer is taken over, not copied);
    /// the distinct referenced vertices are counted on the device too. The indices must be in
    /// range (the mesh was validated before its passes).
    pub fn from_device(gpu: &Gpu, d: crate::gpu::DeviceAttributes) -> Result<DeviceMesh, GpuError> {
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
        let unique = used_vertices(
            gpu,
            &module,
            &d.indices.slice(..),
            index_count,
            d.vertex_count,
        )?;
        let unique = gpu.download(&unique, 1)?[0] as usize;
        // the passes' index buffer becomes the mesh's (only whole triangles are ever read)
        Ok(DeviceMesh::bare(
            Arc::new(vertices),
            Arc::new(d.indices),
            d.vertex_count,
            index_count,
            unique,
        ))
    }

    /// The distinct vertices the mesh's indices reference (read from the device when still
    /// there).
    pub fn unique_vertices(&self, gpu: &Gpu) -> Result<usize, GpuError> {
        let Some(c) = &self.unique_pending else {
            return Ok(self.unique_vertices);
        };
        let n = gpu.download(c, 1)?[0] as usize;
        if let Some(w) = &self.window {
            // (kept for the windows made at the same batches later; a few, as the cuts of a
            // balanced frame repeat)
            let mut counts = w
                .whole
                .window_counts
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if counts.len() >= 64 {
                counts.clear();
            }
            counts.insert((w.batches.start, w.batches.end), n);
        }
        Ok(n)
    }
}

/// Distinct vertices among the first `index_count` of `indices` over `vertex_count` vertices,
/// counted on the device (`module` holds the building blocks of kernels/blocks.cuh), into a
/// one-element device buffer.
fn used_vertices(
    gpu: &Gpu,
    module: &Arc<cudarc::driver::CudaModule>,
    indices: &cudarc::driver::CudaView<u32>,
    index_count: usize,
    vertex_count: usize,
) -> Result<CudaSlice<u64>, GpuError> {
    let n = vertex_count as u32;
    let mut used: CudaSlice<u32> = gpu.zeros(vertex_count, "used vertices")?;
    let m = index_count as u32;
    let f = gpu.function(module, "rxp_mark_used")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(indices).arg(&m).arg(&mut used);
    // SAFETY: one thread per index; every index is below n.
    unsafe { crate::gpu::launch_1d(l, m, "rxp_mark_used") }?;
    count_flags(gpu, module, &used, n)
}

/// The number of set flags among the first `n` of `used`, summed on the device.
fn count_flags(
    gpu: &Gpu,
    module: &Arc<cudarc::driver::CudaModule>,
    used: &CudaSlice<u32>,
    n: u32,
) -> Result<CudaSlice<u64>, GpuError> {
    let mut total: CudaSlice<u64> = gpu.zeros(1, "used vertex count")?;
    let f = gpu.function(module, "rxp_sum_u32")?;
    let mut l = gpu.stream.launch_builder(&f);
    l.arg(used).arg(&n).arg(&mut total);
    // SAFETY: the grid strides over the n flags, which `used` holds.
    unsafe { crate::gpu::launch(l, sum_blocks(n), 256, 0, "rxp_sum_u32") }?;
    Ok(total)
}

/// Blocks of 256 threads for rxp_sum_u32 over `n` counts: a block's worth each, at most 1024.
pub(crate) fn sum_blocks(n: u32) -> u32 {
    n.div_ceil(256).clamp(1, 1024)
}

/// The distinct vertices of the patch lists a mesh shades (the vertices its kept triangles
/// reference: each list holds its patch's distinct vertices), counted on the device.
fn listed_vertices(
    gpu: &Gpu,
    module: &Arc<cudarc::driver::CudaModule>,
    p: &DevicePatches,
    vertex_count: usize,
) -> Result<CudaSlice<u64>, GpuError> {
    let mut used: CudaSlice<u32> = gpu.zeros(vertex_count, "used vertices")?;
    let total = p.shaded as u32;
    if total > 0 {
        let f = gpu.function(module, "rxp_mark_listed")?;
        let mut l = gpu.stream.launch_builder(&f);
        l.arg(&*p.vertices)
            .arg(&p.runs)
            .arg(&p.nruns)
            .arg(&total)
            .arg(&mut used);
        // SAFETY: one thread per shaded entry; the runs lie within the lists, whose entries are
        // vertex ids below vertex_count.
        unsafe { crate::gpu::launch_1d(l, total, "rxp_mark_listed") }?;
    }
    count_flags(gpu, module, &used, vertex_count as u32)
}

impl DeviceMesh {
    /// The index ranges `ranges` (whole triangles, in order, within the mesh) as a mesh of their
    /// own sharing this one's vertices, without batches; with patches, the patches of the kept
    /// triangles (their lists shared, their corners gathered with the indices). The ranges are
    /// gathered in one launch however many there are.
    pub fn subset(
        &self,
        gpu: &Gpu,
        ranges: &[std::ops::Range<usize>],
    ) -> Result<DeviceMesh, GpuError> {
        let mut runs: Vec<u32> = Vec::with_capacity(3 * ranges.len());
        // the same runs in triangles, for what is stored per triangle
        let mut tri_runs: Vec<u32> = Vec::with_capacity(3 * ranges.len());
        let mut index_count = 0usize;
        for r in ranges {
            if r.start > r.end || r.end > self.index_count || r.start % 3 != 0 || r.end % 3 != 0 {
                return Err(GpuError::Limit(format!(
                    "indices {r:?} are not whole triangles of the mesh's {}",
                    self.index_count
                )));
            }
            if !r.is_empty() {
                runs.extend([r.start as u32, r.len() as u32, index_count as u32]);
                tri_runs.extend([
                    r.start as u32 / 3,
                    r.len() as u32 / 3,
                    index_count as u32 / 3,
                ]);
                index_count += r.len();
            }
        }
        let module = gpu.module(
            "vertex_input",
            &[kernels::COMMON, kernels::BLOCKS, VERTEX_INPUT],
            &[],
        )?;
        let nruns = (runs.len() / 3) as u32;
        let runs_d = gpu.upload(&runs, "subset ranges")?;
        let gather_runs = |src: &CudaSlice<u32>,
                           runs_d: &CudaSlice<u32>,
                           count: usize,
                           what: &str|
         -> Result<CudaSlice<u32>, GpuError> {
            // SAFETY: the runs are laid end to end over all `count` entries, so the gather
            // writes every one (one placeholder entry when there are none, never read).
            let mut dst: CudaSlice<u32> = unsafe { gpu.alloc_uninit(count.max(1), what) }?;
            if nruns > 0 {
                let f = gpu.function(&module, "rxp_gather_runs")?;
                let mut l = gpu.stream.launch_builder(&f);
                l.arg(src).arg(runs_d).arg(&nruns).arg(&mut dst);
                // SAFETY: one block per run; runs lie within `src` (checked above) and are laid
                // end to end within `dst`'s `count` entries.
                unsafe { launch(l, nruns, 256, 0, "rxp_gather_runs") }?;
            }
            Ok(dst)
        };
        let gather =
            |src: &CudaSlice<u32>, what: &str| gather_runs(src, &runs_d, index_count, what);
        let indices = gather(&self.indices, "subset indices")?;
        let faces = match &self.faces {
            Some(f) => {
                let tri_runs_d = gpu.upload(&tri_runs, "subset triangle ranges")?;
                Some(Arc::new(gather_runs(
                    f,
                    &tri_runs_d,
                    index_count / 3,
                    "subset triangle values",
                )?))
            }
            None => None,
        };
        let patches = match &self.patches {
            Some(p) => {
                let keep: Vec<std::ops::Range<u32>> = ranges
                    .iter()
                    .map(|r| (r.start / 3) as u32..(r.end / 3) as u32)
                    .collect();
                let (runs, shaded) = p.host.shading_runs(&keep);
                Some(DevicePatches {
                    vertices: p.vertices.clone(),
                    vertex_total: p.vertex_total,
                    corners: Arc::new(gather(&p.corners, "subset patch corners")?),
                    nruns: (runs.len() / 3) as u32,
                    runs: gpu.upload(&runs, "the patches to shade")?,
                    shaded,
                    host: p.host.clone(),
                    counting: p.counting.clone(),
                })
            }
            None => None,
        };
        let unique = used_vertices(
            gpu,
            &module,
            &indices.slice(..),
            index_count,
            self.vertex_count,
        )?;
        Ok(DeviceMesh {
            unique_pending: Some(unique),
            patches,
            faces,
            colors: self.colors.clone(),
            tangents: self.tangents.clone(),
            uvs1: self.uvs1.clone(),
            ..DeviceMesh::bare(
                self.vertices.clone(),
                Arc::new(indices),
                self.vertex_count,
                index_count,
                0,
            )
        })
    }

    /// The triangle ranges `keep` (sorted, disjoint, within the mesh) of a patched mesh as a
    /// view: nothing is copied but the runs (the subset's indices, corners and triangle values
    /// stay the whole mesh's, read through the runs by the raster stage), and the patches to
    /// shade are those owning a kept triangle. What a frame stage makes for the patch strategy
    /// each frame, at the cost of uploading a few numbers per kept range.
    pub fn view(&self, gpu: &Gpu, keep: &[std::ops::Range<u32>]) -> Result<DeviceMesh, GpuError> {
        let p = self.patches.as_ref().ok_or_else(|| {
            GpuError::Limit("only a patched mesh can be viewed through triangle runs".into())
        })?;
        if self.view.is_some() {
            return Err(GpuError::Limit("a view is not viewed again".into()));
        }
        let triangles = (self.index_count / 3) as u32;
        let mut host: Vec<u32> = Vec::with_capacity(3 * keep.len());
        let mut count = 0u32;
        let mut end = 0u32;
        for r in keep.iter().filter(|r| !r.is_empty()) {
            if r.start < end || r.end > triangles {
                return Err(GpuError::Limit(format!(
                    "triangles {r:?} are not in order within the mesh's {triangles}"
                )));
            }
            host.extend([r.start, r.end - r.start, count]);
            count += r.end - r.start;
            end = r.end;
        }
        let (runs, shaded) = p.host.shading_runs(keep);
        let patches = DevicePatches {
            vertices: p.vertices.clone(),
            vertex_total: p.vertex_total,
            corners: p.corners.clone(),
            nruns: (runs.len() / 3) as u32,
            runs: gpu.upload(&runs, "the patches to shade")?,
            shaded,
            host: p.host.clone(),
            counting: p.counting.clone(),
        };
        let unique = listed_vertices(gpu, &patches.counting, &patches, self.vertex_count)?;
        Ok(DeviceMesh {
            unique_pending: Some(unique),
            patches: Some(patches),
            faces: self.faces.clone(),
            colors: self.colors.clone(),
            tangents: self.tangents.clone(),
            uvs1: self.uvs1.clone(),
            view: Some(TriangleRuns {
                runs: gpu.upload(&host, "the kept triangles")?,
                host,
            }),
            ..DeviceMesh::bare(
                self.vertices.clone(),
                self.indices.clone(),
                self.vertex_count,
                3 * count as usize,
                0,
            )
        })
    }
}

/// Threads per block of the batching kernels (RXB_BLOCK), triangles per thread of its compaction
/// (RXB_PER), and the sort window of its look-back kernel (RXB_SORT).
const RXB_BLOCK: u32 = 256;
const RXB_PER: u32 = 4;
const RXB_SORT: u32 = 2048;

/// Refuses `index_count` indices where `work`'s kernels, which count index positions in 32 bits,
/// cannot take them.
pub(super) fn indices_fit(index_count: usize, work: &str) -> Result<(), GpuError> {
    if index_count > u32::MAX as usize {
        return Err(GpuError::Limit(format!(
            "{index_count} indices are more than {work} takes ({})",
            u32::MAX
        )));
    }
    Ok(())
}

impl DeviceMesh {
    /// Builds the dynamic batches on the GPU (kernels/batching.cu): the same batches as
    /// [`Batches::build`] on the CPU, from the indices already on the device. Replaces any
    /// batches the mesh had.
    pub fn build_batches(
        &mut self,
        gpu: &Gpu,
        max_indices: u32,
        max_vertices: u32,
    ) -> Result<(), GeometryError> {
        if max_indices < 3 || max_vertices < 3 {
            return Err(GeometryError::BatchLimits {
                max_indices,
                max_vertices,
            });
        }
        if max_indices > 1024 {
            return Err(GpuError::Limit(format!(
                "the GPU builds batches of at most 1024 indices, got {max_indices}"
            ))
            .into());
        }
        indices_fit(self.index_count, "the GPU's batching")?;
        // (tables number the batches they were built from)
        self.tables = None;
        let n = (self.index_count / 3) as u32;
        let mut starts: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch offsets")?;
        if n == 0 {
            self.batches = Some((starts, 0, max_indices, max_vertices));
            return Ok(());
        }
        let module = gpu.module("batching", &[kernels::BLOCKS, BATCHING], &[])?;
        let f = |name: &str| gpu.function(&module, name);
        let s = &gpu.stream;
        let max_tris = max_indices / 3;
        let lookback = 3 * max_tris - 1;
        let span = RXB_SORT - lookback;
        let ni = 3 * n;
        let mut prev: CudaSlice<i32> = gpu.zeros(ni as usize, "batching look-back distances")?;
        let k = f("rxb_prev")?;
        let mut l = s.launch_builder(&k);
        l.arg(&*self.indices)
            .arg(&ni)
            .arg(&lookback)
            .arg(&span)
            .arg(&mut prev);
        // SAFETY: one block per `span` positions, each writing only its own positions of `prev`.
        unsafe { launch(l, ni.div_ceil(span).max(1), RXB_SORT / 2, 0, "rxb_prev") }?;
        let mut jump: CudaSlice<u32> = gpu.zeros(n as usize + 1, "batch ends")?;
        let k = f("rxb_batch_end")?;
        let mut l = s.launch_builder(&k);
        let warp = crate::geometry::batching::WARP;
        l.arg(&prev)
            .arg(&n)
            .arg(&max_tris)
            .arg(&max_vertices)
            .arg(&warp)
            .arg(&mut jump);
        // SAFETY: one thread per triangle and one for the end; `prev` holds 3n entries.
        unsafe {
            launch(
                l,
                ((n + 1).div_ceil(RXB_BLOCK)).max(1),
                RXB_BLOCK,
                0,
                "rxb_batch_end",
            )
        }?;
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
            unsafe {
                launch(
                    l,
                    ((n + 1).div_ceil(RXB_BLOCK)).max(1),
                    RXB_BLOCK,
                    0,
                    "rxb_orbit",
                )
            }?;
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
        unsafe { launch(l, blocks.max(1), RXB_BLOCK, 0, "rxb_count") }?;
        let k = f("rxb_scan")?;
        let mut l = s.launch_builder(&k);
        l.arg(&mut block_counts)
            .arg(&blocks)
            .arg(&n)
            .arg(&mut starts)
            .arg(&mut total);
        // SAFETY: one block; starts holds n + 1 entries and there are at most n batches.
        unsafe { launch(l, 1, RXB_BLOCK, 0, "rxb_scan") }?;
        let k = f("rxb_compact")?;
        let mut l = s.launch_builder(&k);
        l.arg(&mark).arg(&n).arg(&block_counts).arg(&mut starts);
        // SAFETY: as rxb_count; every marked triangle gets its own slot below the count.
        unsafe { launch(l, blocks.max(1), RXB_BLOCK, 0, "rxb_compact") }?;
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
