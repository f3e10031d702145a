//! The CUDA implementations (kernels/reindex.cu, with kernels/sort.cu's scan and radix sort):
//! the paper's method, and a hash-table variant with no sort.
//!
//! Inputs stay on the device ([`DeviceInput`]); a [`Workspace`] holds every buffer a method
//! needs, sized before anything runs, so one can be timed over and over without allocating.

use super::{report, Method, ReindexError, ReindexReport, Reindexed};
use crate::gpu::{kernels, launch, Gpu, GpuError};
use crate::gpu::{Context, DeviceAttributes};
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use glam::Vec3;
use rayon::prelude::*;
use rxpipe_core::mesh::weld::{mesh_from_words, vertex_floats, vertex_words, Keys, MAX_WORDS};
use rxpipe_core::mesh::Mesh;
use std::sync::Arc;

/// The re-indexing stage's kernels (need the shared scan and sort before them).
pub const SOURCE: kernels::Source<'static> = rxpipe_gpu::kernel_source!("reindex.cu");

/// The two GPU methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMethod {
    /// The paper's: radix sort of the vertex keys.
    Sort,
    /// A hash table of vertex classes; no sort.
    Hash,
}

impl GpuMethod {
    /// The GPU method of `method`, if it is one.
    pub fn of(method: Method) -> Option<GpuMethod> {
        match method {
            Method::CudaSort => Some(GpuMethod::Sort),
            Method::CudaHash => Some(GpuMethod::Hash),
            _ => None,
        }
    }

    pub fn method(self) -> Method {
        match self {
            GpuMethod::Sort => Method::CudaSort,
            GpuMethod::Hash => Method::CudaHash,
        }
    }
}

// must match kernels/sort.cu
const RXS_TILE: usize = crate::gpu::scan::TILE;
const BLOCK: u32 = 256;

/// A validated mesh on the device: vertices as `floats` consecutive floats (position, then normal
/// and uv where present), and the indices.
pub struct DeviceInput {
    pub vert: CudaSlice<f32>,
    pub idx: CudaSlice<u32>,
    pub vertices: usize,
    pub indices: usize,
    pub floats: usize,
    /// weld cell size, 0 for exact equality
    pub cell: f32,
    first: u32,
}

impl DeviceInput {
    /// Checks the mesh (as every method does) and uploads it.
    pub fn upload(gpu: &Gpu, mesh: &Mesh, weld: Option<f32>) -> Result<DeviceInput, ReindexError> {
        Self::upload_checked(gpu, mesh, &Keys::new(mesh, weld)?, weld)
    }

    /// Uploads a mesh `keys` has already checked.
    fn upload_checked(
        gpu: &Gpu,
        mesh: &Mesh,
        keys: &Keys,
        weld: Option<f32>,
    ) -> Result<DeviceInput, ReindexError> {
        let floats = keys.words;
        // interleaved as the keys: position, then normal, uv, colour and tangent where present
        // (positions alone are that already: uploaded as they are)
        let packed: Vec<f32>;
        let vert: &[f32] = if floats == 3 {
            bytemuck::cast_slice(&mesh.positions)
        } else {
            let mut v = vec![0f32; mesh.vertex_count() * floats];
            v.par_chunks_mut(floats)
                .with_min_len(rxpipe_core::execution::GRAIN)
                .enumerate()
                .for_each(|(i, out)| out.copy_from_slice(&vertex_words(mesh, i)[..floats]));
            packed = v;
            &packed
        };
        Ok(DeviceInput {
            vert: gpu.upload(vert, "re-indexing vertices")?,
            idx: gpu.upload(&mesh.indices, "re-indexing indices")?,
            vertices: mesh.vertex_count(),
            indices: mesh.indices.len(),
            floats,
            cell: weld.unwrap_or(0.0),
            first: mesh.indices[0],
        })
    }
}

/// The device memory a method needs for `n` vertices of `floats` floats and `m` indices, input
/// and output included (the paper: two copies of the vertex and index arrays plus sort scratch).
pub fn required_bytes(method: GpuMethod, n: usize, m: usize, floats: usize) -> usize {
    let tiles = n.div_ceil(RXS_TILE).max(1);
    let io = 2 * (n * floats + m) * 4;
    let scan = (256 * tiles).div_ceil(RXS_TILE) * 4 + 64;
    io + scan
        + match method {
            // used, keys and ids twice, nodup, newIdx, perm, digit counts
            GpuMethod::Sort => (n * (1 + 2 * (floats + 1) + 3) + 256 * tiles) * 4,
            // used, slot/rep, is_rep, newIdx, the table (2n rounded up to a power of two)
            GpuMethod::Hash => n * 4 * 4 + table_slots(n) * 4,
        }
}

/// Hash table slots for `used` vertices: a power of two, at least twice as many, at most 2^32
/// (then still more slots than vertices, which are fewer than 2^32).
fn table_slots(used: usize) -> usize {
    (2 * used).next_power_of_two().clamp(1024, 1 << 32)
}

/// Every buffer one method needs for one input size, and the result after [`Reindexer::run`].
pub struct Workspace {
    method: GpuMethod,
    used: CudaSlice<u32>,
    a: CudaSlice<u32>,
    b: CudaSlice<u32>,
    keys: [CudaSlice<u32>; 2],
    ids: [CudaSlice<u32>; 2],
    counts: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
    sums: CudaSlice<u32>,
    small: CudaSlice<u32>,
    /// the new vertices (`vertices_out` of them) and indices
    pub out_vert: CudaSlice<f32>,
    pub out_idx: CudaSlice<u32>,
    pub vertices_out: usize,
    pub used_count: usize,
    /// radix passes run and skipped (digits equal in every key) by the last sort
    pub passes: (u32, u32),
}

/// Where a run's map (each vertex's class representative) is: an id buffer, or `a`.
enum Map {
    Ids(usize),
    A,
}

/// The compiled re-indexing kernels of one device.
pub struct Reindexer {
    gpu: Arc<Gpu>,
    f: std::collections::HashMap<&'static str, CudaFunction>,
    scan: crate::gpu::scan::Scan,
}

const KERNELS: [&str; 12] = [
    "rxs_or_diff",
    "rxs_upsweep",
    "rxs_downsweep",
    "rxp_mark_used",
    "rxr_keys",
    "rxr_heads",
    "rxr_scatter",
    "rxr_remap",
    "rxr_hash_insert",
    "rxr_hash_rep",
    "rxr_hash_scatter",
    "rxr_split",
];

impl Reindexer {
    /// Compiles (or fetches from the cache) the kernels.
    pub fn new(gpu: &Arc<Gpu>) -> Result<Reindexer, GpuError> {
        let module = gpu.module("reindex", &[kernels::BLOCKS, kernels::SORT, SOURCE], &[])?;
        let mut f = std::collections::HashMap::new();
        for k in KERNELS {
            f.insert(k, gpu.function(&module, k)?);
        }
        Ok(Reindexer {
            gpu: gpu.clone(),
            f,
            scan: crate::gpu::scan::Scan::new(gpu, &module)?,
        })
    }

    /// Allocates a workspace for `input`, after checking that the device has the memory.
    pub fn workspace(&self, input: &DeviceInput, method: GpuMethod) -> Result<Workspace, GpuError> {
        let (n, m, fl) = (input.vertices, input.indices, input.floats);
        let need = required_bytes(method, n, m, fl) - 4 * (n * fl + m);
        let (free, _) = self
            .gpu
            .ctx
            .mem_get_info()
            .ctx("querying free GPU memory")?;
        if need > free {
            return Err(GpuError::OutOfMemory {
                what: format!(
                    "re-indexing {n} vertices ({}): {need} bytes needed, {free} free",
                    method.method().name()
                ),
                bytes: need,
                total: self.gpu.memory_bytes,
            });
        }
        let g = &self.gpu;
        let tiles = n.div_ceil(RXS_TILE).max(1);
        let z = |len: usize, what: &str| g.zeros::<u32>(len, what);
        let sort = method == GpuMethod::Sort;
        Ok(Workspace {
            method,
            used: z(n, "used flags")?,
            a: z(n, "re-indexing scratch")?,
            b: z(n, "new indices")?,
            keys: [
                z(if sort { n * fl } else { 1 }, "sort keys")?,
                z(if sort { n * fl } else { 1 }, "sort keys")?,
            ],
            // sort: ids (twice); hash: representative flags
            ids: [z(n, "sort ids")?, z(if sort { n } else { 1 }, "sort ids")?],
            // sort: digit counts; hash: the table
            counts: z(
                if sort { 256 * tiles } else { table_slots(n) },
                "digit counts",
            )?,
            offsets: z(if sort { 256 * tiles } else { 1 }, "digit offsets")?,
            sums: z(n.max(256 * tiles).div_ceil(RXS_TILE) + 1, "scan sums")?,
            // the scans' totals, and each key word's varying bits at 1..1 + floats
            small: z(2 + MAX_WORDS, "scan totals")?,
            out_vert: g.zeros::<f32>(n * fl, "re-indexed vertices")?,
            out_idx: z(m, "re-indexed indices")?,
            vertices_out: 0,
            used_count: 0,
            passes: (0, 0),
        })
    }

    fn k(&self, name: &str) -> &CudaFunction {
        &self.f[name]
    }

    /// `out` = the prefix sum of `x[..n]` (mode 0: exclusive, 1: inclusive minus one); the
    /// total is written to `small[slot]` (read it after synchronising).
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        x: &CudaSlice<u32>,
        n: usize,
        mode: u32,
        out: &mut CudaSlice<u32>,
        sums: &mut CudaSlice<u32>,
        small: &mut CudaSlice<u32>,
        slot: usize,
    ) -> Result<(), GpuError> {
        let mut total = small.slice_mut(slot..slot + 1);
        self.scan.run(&self.gpu, x, n, mode, out, sums, &mut total)
    }

    /// Runs the method on a device input into `ws` (its out_vert, out_idx, vertices_out and
    /// used_count). Synchronises a few times to read counts (used vertices; for the sort, which
    /// digits vary; the output size).
    pub fn run(&self, input: &DeviceInput, ws: &mut Workspace) -> Result<(), GpuError> {
        let (n, m) = (input.vertices, input.indices);
        let s = &self.gpu.stream;
        let m32 = m as u32;
        let mb = m.div_ceil(BLOCK as usize);
        s.memset_zeros(&mut ws.used).ctx("clearing used flags")?;
        let mut l = s.launch_builder(self.k("rxp_mark_used"));
        l.arg(&input.idx).arg(&m32).arg(&mut ws.used);
        // SAFETY: one thread per index; indices were validated below the vertex count.
        unsafe { launch(l, mb.max(1) as u32, BLOCK, 0, "rxp_mark_used") }?;
        // the used count, into small[0] (the scan's output goes to scratch `a`)
        let Workspace {
            used,
            a,
            sums,
            small,
            ..
        } = ws;
        self.scan(used, n, 0, a, sums, small, 0)?;
        // each vertex's class representative (`map`) and each representative's new index (b)
        let map = match ws.method {
            GpuMethod::Sort => self.sort_classes(input, ws)?,
            GpuMethod::Hash => self.hash_classes(input, ws)?,
        };
        let Workspace {
            a, b, ids, out_idx, ..
        } = ws;
        let map: &CudaSlice<u32> = match map {
            Map::Ids(k) => &ids[k],
            Map::A => a,
        };
        // every index becomes newIdx[map[i]]
        let mut l = s.launch_builder(self.k("rxr_remap"));
        l.arg(&input.idx)
            .arg(&m32)
            .arg(map)
            .arg(&*b)
            .arg(&mut *out_idx);
        // SAFETY: one thread per index; map and newIdx have n entries, and every indexed vertex
        // is used, so its map entry is set.
        unsafe { launch(l, mb.max(1) as u32, BLOCK, 0, "rxr_remap") }?;
        let totals = self.gpu.download(&ws.small, 2)?;
        ws.used_count = totals[0] as usize;
        ws.vertices_out = totals[1] as usize;
        Ok(())
    }

    /// The classes by sorting: every used vertex's key (its cell and words) radix-sorted with
    /// its id, the heads of equal runs numbered (b), the first of each class scattered to the
    /// output and the sorted order's inverse left as the map.
    fn sort_classes(&self, input: &DeviceInput, ws: &mut Workspace) -> Result<Map, GpuError> {
        let (n, fl) = (input.vertices, input.floats as u32);
        let s = &self.gpu.stream;
        let n32 = n as u32;
        let nb = (n.div_ceil(BLOCK as usize).max(1)) as u32;
        let Workspace {
            used, keys, ids, ..
        } = ws;
        let mut l = s.launch_builder(self.k("rxr_keys"));
        l.arg(&input.vert)
            .arg(&fl)
            .arg(&input.cell)
            .arg(&n32)
            .arg(&*used)
            .arg(&input.first)
            .arg(&mut keys[0])
            .arg(&mut ids[0]);
        // SAFETY: one thread per vertex, writing its own key words and id.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_keys") }?;
        let (run, skipped) = self.radix_sort(n, fl, ws)?;
        let Workspace {
            used,
            a,
            b,
            keys,
            ids,
            sums,
            small,
            out_vert,
            ..
        } = ws;
        // (each pass moves the keys and ids to the other buffer of their pair)
        let sorted = (run % 2) as usize;
        let mut l = s.launch_builder(self.k("rxr_heads"));
        l.arg(&keys[sorted]).arg(&n32).arg(&fl).arg(&mut *a);
        // SAFETY: one thread per sorted key.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_heads") }?;
        self.scan(a, n, 1, b, sums, small, 1)?;
        // the inverse permutation goes to the other id buffer
        let [i0, i1] = ids;
        let (src_i, dst_i) = if sorted == 0 { (i0, i1) } else { (i1, i0) };
        let mut l = s.launch_builder(self.k("rxr_scatter"));
        l.arg(&input.vert)
            .arg(&fl)
            .arg(&n32)
            .arg(&*src_i)
            .arg(&*a)
            .arg(&*b)
            .arg(&*used)
            .arg(&input.first)
            .arg(&mut *out_vert)
            .arg(&mut *dst_i);
        // SAFETY: orgID is a permutation of 0..n; newIdx < the unique count <= n.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_scatter") }?;
        ws.passes = (run, skipped);
        Ok(Map::Ids(1 - sorted))
    }

    /// Radix-sorts `n` keys of `fl` words (keys[0], with their ids in ids[0]) a byte digit a
    /// pass, least significant first, skipping the digits equal in every key. Returns the passes
    /// run and skipped; the sorted keys and ids are in the buffers of the pass count's parity.
    fn radix_sort(&self, n: usize, fl: u32, ws: &mut Workspace) -> Result<(u32, u32), GpuError> {
        let s = &self.gpu.stream;
        let n32 = n as u32;
        let nb = n.div_ceil(BLOCK as usize);
        let Workspace {
            keys,
            ids,
            counts,
            offsets,
            sums,
            small,
            ..
        } = ws;
        let [k0, k1] = keys;
        let [i0, i1] = ids;
        // which bits of each word vary (small[1..1 + floats])
        for w in 0..fl as usize {
            let word = k0.slice(w * n..(w + 1) * n);
            let mut d = small.slice_mut(1 + w..2 + w);
            s.memset_zeros(&mut d).ctx("clearing")?;
            let mut l = s.launch_builder(self.k("rxs_or_diff"));
            l.arg(&word).arg(&n32).arg(&mut d);
            // SAFETY: a grid-stride loop over `n` words, OR-ing into one word.
            unsafe { launch(l, nb.clamp(1, 4096) as u32, BLOCK, 0, "rxs_or_diff") }?;
        }
        let diff = self.gpu.download(small, 1 + fl as usize)?;
        let (mut run, mut skipped) = (0u32, 0u32);
        let tiles = n.div_ceil(RXS_TILE).max(1);
        let t32 = tiles as u32;
        let (mut src_k, mut dst_k, mut src_i, mut dst_i) = (k0, k1, i0, i1);
        // least significant digit first: the last word's low byte
        for w in (0..fl).rev() {
            for byte in 0..4u32 {
                let shift = 8 * byte;
                if (diff[1 + w as usize] >> shift) & 255 == 0 {
                    skipped += 1;
                    continue;
                }
                run += 1;
                let word = src_k.slice(w as usize * n..(w as usize + 1) * n);
                let mut l = s.launch_builder(self.k("rxs_upsweep"));
                l.arg(&word)
                    .arg(&n32)
                    .arg(&shift)
                    .arg(&mut *counts)
                    .arg(&t32);
                // SAFETY: one block per tile writing its 256 counts.
                unsafe { launch(l, t32, 256, 0, "rxs_upsweep") }?;
                // the counts' exclusive prefix: where each tile's digit runs go
                self.scan(counts, 256 * tiles, 0, offsets, sums, small, 9)?;
                let mut l = s.launch_builder(self.k("rxs_downsweep"));
                l.arg(&*src_k)
                    .arg(&*src_i)
                    .arg(&n32)
                    .arg(&fl)
                    .arg(&w)
                    .arg(&shift)
                    .arg(&*offsets)
                    .arg(&t32)
                    .arg(&mut *dst_k)
                    .arg(&mut *dst_i);
                // SAFETY: a stable permutation: every element goes to one distinct position
                // below n (the offsets are a prefix of the counts).
                unsafe { launch(l, t32, 256, 0, "rxs_downsweep") }?;
                std::mem::swap(&mut src_k, &mut dst_k);
                std::mem::swap(&mut src_i, &mut dst_i);
            }
        }
        Ok((run, skipped))
    }

    /// The classes by hashing: every used vertex inserted in a table of its keys (`a`: its
    /// slot's representative), the representatives flagged, numbered (b) and scattered to the
    /// output; `a` is the map.
    fn hash_classes(&self, input: &DeviceInput, ws: &mut Workspace) -> Result<Map, GpuError> {
        let (n, fl) = (input.vertices, input.floats as u32);
        let s = &self.gpu.stream;
        let n32 = n as u32;
        let nb = (n.div_ceil(BLOCK as usize).max(1)) as u32;
        let Workspace {
            used,
            a,
            b,
            ids,
            counts,
            sums,
            small,
            out_vert,
            ..
        } = ws;
        let used_count = self.gpu.download(small, 1)?[0] as usize;
        let slots = table_slots(used_count).min(counts.len());
        let mask = (slots - 1) as u32;
        let mut table = counts.slice_mut(0..slots);
        s.memset_zeros(&mut table).ctx("clearing the hash table")?;
        let mut l = s.launch_builder(self.k("rxr_hash_insert"));
        l.arg(&input.vert)
            .arg(&fl)
            .arg(&input.cell)
            .arg(&n32)
            .arg(&*used)
            .arg(&mut table)
            .arg(&mask)
            .arg(&mut *a);
        // SAFETY: one thread per vertex; the table has more empty slots than used vertices, so
        // every probe ends.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_hash_insert") }?;
        let [is_rep, _] = ids;
        let mut l = s.launch_builder(self.k("rxr_hash_rep"));
        l.arg(&n32)
            .arg(&*used)
            .arg(&*counts)
            .arg(&mut *a)
            .arg(&mut *is_rep);
        // SAFETY: one thread per vertex; slots are below the table size.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_hash_rep") }?;
        self.scan(is_rep, n, 0, b, sums, small, 1)?;
        let mut l = s.launch_builder(self.k("rxr_hash_scatter"));
        l.arg(&input.vert)
            .arg(&fl)
            .arg(&n32)
            .arg(&*is_rep)
            .arg(&*b)
            .arg(&mut *out_vert);
        // SAFETY: representatives go to distinct scan positions below n.
        unsafe { launch(l, nb, BLOCK, 0, "rxr_hash_scatter") }?;
        Ok(Map::A)
    }

    /// Downloads the result as a mesh with `input`'s attributes.
    pub fn download(
        &self,
        input: &DeviceInput,
        ws: &Workspace,
        like: &Mesh,
    ) -> Result<Mesh, GpuError> {
        let fl = input.floats;
        if vertex_floats(like) != fl {
            return Err(GpuError::Limit(format!(
                "re-indexing '{}': the device vertices have {fl} floats, the mesh's {}",
                like.name,
                vertex_floats(like)
            )));
        }
        let vert = self.gpu.download(&ws.out_vert, ws.vertices_out * fl)?;
        let indices = self.gpu.download(&ws.out_idx, input.indices)?;
        Ok(mesh_from_words(like, &vert, fl, indices))
    }
}

/// Re-indexes `mesh` on the GPU: checks the memory the method needs, uploads, runs, downloads.
pub fn reindex(
    gpu: &Arc<Gpu>,
    mesh: &Mesh,
    weld: Option<f32>,
    method: GpuMethod,
) -> Result<Reindexed, ReindexError> {
    let mut steps = rxpipe_core::execution::Steps::default();
    let (r, input, ws) = run(gpu, mesh, weld, method, &mut steps)?;
    let out = r.download(&input, &ws, mesh)?;
    steps.done("download");
    Ok(Reindexed {
        report: ReindexReport {
            steps: steps.list,
            ..report(method.method(), mesh, ws.used_count, ws.vertices_out)
        },
        mesh: out,
    })
}

/// Whether [`reindex_on_device`] takes `mesh`: its attributes are positions, normals and uvs
/// alone ([`Mesh::has_only_device_attributes`]).
pub fn stays_on_device(mesh: &Mesh) -> bool {
    mesh.has_only_device_attributes()
}

/// A re-indexed mesh left on the device ([`reindex_on_device`]).
pub struct OnDevice {
    /// the new vertices and indices
    pub arrays: DeviceAttributes,
    /// the bounds of the new positions (`None`: no vertices)
    pub bounds: Option<(Vec3, Vec3)>,
    pub report: ReindexReport,
}

/// Re-indexes `mesh` on the GPU and leaves the result there, as a mesh's device arrays, with the
/// bounds of its positions: for GPU stages after it, which would otherwise upload again what
/// [`reindex`] downloads. Takes a mesh [`stays_on_device`] accepts.
pub fn reindex_on_device(
    gpu: &Arc<Gpu>,
    mesh: &Mesh,
    weld: Option<f32>,
    method: GpuMethod,
) -> Result<OnDevice, ReindexError> {
    if !stays_on_device(mesh) {
        return Err(GpuError::Limit(format!(
            "'{}' has attributes a mesh's device arrays do not hold",
            mesh.name
        ))
        .into());
    }
    let mut steps = rxpipe_core::execution::Steps::default();
    let (r, input, ws) = run(gpu, mesh, weld, method, &mut steps)?;
    let report = report(method.method(), mesh, ws.used_count, ws.vertices_out);
    let (n, fl, index_count) = (ws.vertices_out, input.floats, input.indices);
    // (the input's memory given back before the arrays are made: the peak stays the run's)
    drop(input);
    let Workspace {
        out_vert, out_idx, ..
    } = ws;
    let attributes = |on: bool, floats: usize, what: &str| -> Result<_, GpuError> {
        on.then(|| gpu.zeros::<f32>(floats * n, what)).transpose()
    };
    let mut d = DeviceAttributes {
        positions: gpu.zeros::<f32>(3 * n, "positions")?,
        normals: attributes(mesh.normals.is_some(), 3, "normals")?,
        uvs: attributes(mesh.uvs.is_some(), 2, "texture coordinates")?,
        indices: out_idx,
        vertex_count: n,
        index_count,
    };
    let mut boxed = gpu.upload(&[!0u32, !0, !0, 0, 0, 0], "bounds")?;
    let (fl32, n32, null) = (fl as u32, n as u32, 0u64);
    let mut l = gpu.stream.launch_builder(r.k("rxr_split"));
    l.arg(&out_vert).arg(&fl32).arg(&n32).arg(&mut d.positions);
    match &mut d.normals {
        Some(b) => l.arg(b),
        None => l.arg(&null),
    };
    match &mut d.uvs {
        Some(b) => l.arg(b),
        None => l.arg(&null),
    };
    l.arg(&mut boxed);
    // SAFETY: one thread per output vertex, reading its `fl` floats and writing its own
    // entries of the arrays (each sized for n vertices, present as the mesh's attributes and so
    // as the vertices' words).
    unsafe {
        launch(
            l,
            n.div_ceil(BLOCK as usize).max(1) as u32,
            BLOCK,
            0,
            "rxr_split",
        )
    }?;
    let b = gpu.download(&boxed, 6)?;
    steps.done("arrays");
    let unordered = |w: u32| {
        f32::from_bits(if w & 0x8000_0000 != 0 {
            w & 0x7fff_ffff
        } else {
            !w
        })
    };
    let bounds = (n > 0).then(|| {
        (
            Vec3::new(unordered(b[0]), unordered(b[1]), unordered(b[2])),
            Vec3::new(unordered(b[3]), unordered(b[4]), unordered(b[5])),
        )
    });
    Ok(OnDevice {
        arrays: d,
        bounds,
        report: ReindexReport {
            steps: steps.list,
            ..report
        },
    })
}

/// Checks `mesh` and the device's memory, uploads and runs `method`: the kernels, the input and
/// the workspace holding the result.
fn run(
    gpu: &Arc<Gpu>,
    mesh: &Mesh,
    weld: Option<f32>,
    method: GpuMethod,
    steps: &mut rxpipe_core::execution::Steps,
) -> Result<(Reindexer, DeviceInput, Workspace), ReindexError> {
    let keys = Keys::new(mesh, weld)?;
    steps.done("checked");
    let (n, m) = (mesh.vertex_count(), mesh.indices.len());
    if m > u32::MAX as usize {
        return Err(GpuError::Limit(format!(
            "'{}' has {m} indices; the GPU re-indexing takes at most {}",
            mesh.name,
            u32::MAX
        ))
        .into());
    }
    let need = required_bytes(method, n, m, keys.words);
    let (free, _) = gpu.ctx.mem_get_info().ctx("querying free GPU memory")?;
    if need > free {
        return Err(GpuError::OutOfMemory {
            what: format!(
                "re-indexing '{}' ({n} vertices) with {}",
                mesh.name,
                method.method().name()
            ),
            bytes: need,
            total: gpu.memory_bytes,
        }
        .into());
    }
    let r = Reindexer::new(gpu)?;
    let input = DeviceInput::upload_checked(gpu, mesh, &keys, weld)?;
    gpu.sync()?;
    steps.done("upload");
    let mut ws = r.workspace(&input, method)?;
    r.run(&input, &mut ws)?;
    gpu.sync()?;
    steps.done("run");
    Ok((r, input, ws))
}
