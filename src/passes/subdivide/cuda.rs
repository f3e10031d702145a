//! Loop subdivision on the GPU (kernels/subdivide.cu): the input's edge table and every level on
//! the device, the mesh staying there. Vertex colours and tangents, which live on the host,
//! follow on the host from each level's edges; a second uv set goes to the device beside the
//! first (four floats a vertex) and takes the same rules there.
//!
//! A level's new vertices are made either by the stage's own kernels (the neighbour sums over
//! the edges, then one thread per new vertex) or, given a strategy, by Loop's program
//! (kernels/programs/loop.cu) run through the geometry stage's strategies in the processing
//! mode (Kenzel et al. 2018, section 5.1): the next level's triangles are the index stream,
//! the rings the program walks are built here, and the records stay on the device.

use super::cpu::host_attributes;
use super::{beta, last_level_sizes, next_sizes, SubdivideError, BETA_TABLE};
use crate::geometry::cuda::{CudaGeometry, CudaShader};
use crate::geometry::{GeometryStats, Strategy};
use crate::gpu::kernels::{Source, BLOCKS, SORT};
use crate::gpu::scan::Scan;
use crate::gpu::{launch_1d, Context, Gpu, GpuError};
use crate::passes::{DeviceAttributes, WorkingMesh};
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use std::sync::Arc;

/// The stage's kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("subdivide.cu");

/// Device bytes at the peak of making a level of `v` vertices, `e` edges and `f` triangles: its
/// arrays beside the level before (about a quarter of its size) and that level's temporaries.
/// `uv_dim` is the uv floats a vertex (0, 2 or 4).
pub fn level_bytes(v: usize, e: usize, f: usize, uv_dim: usize) -> u64 {
    let per_vertex = 12 + 4 * uv_dim;
    let new = per_vertex * v + 8 * e + 24 * f;
    // the level before: a quarter of the triangles, about half the edges and vertices; its
    // temporaries (edge counts and corners, rings) on its edges and vertices
    let old = per_vertex * v / 4 + 8 * e / 2 + 24 * f / 4 + 12 * e / 2 + 40 * v / 4;
    (new + old) as u64
}

/// Device bytes a level of `v` vertices, `e` edges and `f` triangles takes on top of
/// [`level_bytes`] when a strategy makes it: the queue (at most one 64-byte record and two
/// words a new triangle corner, naive's), the batches, a 64-byte record, a mark and a count a
/// vertex, and the rings (two entries an edge of the level before, about one an edge of this
/// level: a neighbour and a flag each).
pub fn strategy_bytes(v: usize, e: usize, f: usize) -> u64 {
    (3 * f) as u64 * (64 + 8) + 4 * f as u64 + 72 * v as u64 + 8 * e as u64
}

/// The edges of the `corners / 3` triangles of `indices` on the device, numbered as
/// [`super::Edges::build`] numbers them: (each edge's two vertices, each triangle's three edges,
/// the edge count).
fn device_edges(
    gpu: &Gpu,
    module: &std::sync::Arc<cudarc::driver::CudaModule>,
    indices: &CudaSlice<u32>,
    corners: usize,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>, usize), SubdivideError> {
    let slots = (2 * corners).next_power_of_two().max(2);
    let mask = (slots - 1) as u32;
    let c32 = corners as u32;
    let keys: CudaSlice<u64> = gpu.zeros(slots, "the edge hash table")?;
    let first_plus: CudaSlice<u32> = gpu.zeros(slots, "the edges' first corners")?;
    let slot_of: CudaSlice<u32> = gpu.zeros(corners, "the corners' slots")?;
    let stream = &gpu.stream;
    let k_edge_keys = gpu.function(module, "rxsd_edge_keys")?;
    let mut l = stream.launch_builder(&k_edge_keys);
    l.arg(indices)
        .arg(&c32)
        .arg(&keys)
        .arg(&mask)
        .arg(&first_plus)
        .arg(&slot_of);
    // SAFETY: a thread per corner; the table has at least twice as many slots as corners, so
    // every probe sequence ends at an empty slot or the key's own.
    unsafe { launch_1d(l, c32, "rxsd_edge_keys") }?;
    drop(keys);
    let flag: CudaSlice<u32> = gpu.zeros(corners, "first-corner flags")?;
    let k_edge_first = gpu.function(module, "rxsd_edge_first")?;
    let mut l = stream.launch_builder(&k_edge_first);
    l.arg(&slot_of).arg(&first_plus).arg(&c32).arg(&flag);
    // SAFETY: a thread per corner, each slot below the table's size.
    unsafe { launch_1d(l, c32, "rxsd_edge_first") }?;
    let mut ids: CudaSlice<u32> = gpu.zeros(corners, "edge ids")?;
    let mut sums: CudaSlice<u32> = gpu.zeros(Scan::sums_len(corners), "scan sums")?;
    let mut total: CudaSlice<u32> = gpu.zeros(1, "the edge count")?;
    Scan::new(gpu, module)?.run(
        gpu,
        &flag,
        corners,
        0,
        &mut ids,
        &mut sums,
        &mut total.slice_mut(0..1),
    )?;
    let edges = gpu.download(&total, 1)?[0] as usize;
    // SAFETY (allocations): rxsd_edge_ids writes every corner's edge and every edge's ends
    // (each edge has exactly one first corner).
    let mut fe: CudaSlice<u32> = unsafe { gpu.alloc_uninit(corners, "the triangles' edges") }?;
    let mut ev: CudaSlice<u32> = unsafe { gpu.alloc_uninit(2 * edges, "edges") }?;
    let k_edge_ids = gpu.function(module, "rxsd_edge_ids")?;
    let mut l = stream.launch_builder(&k_edge_ids);
    l.arg(indices)
        .arg(&slot_of)
        .arg(&first_plus)
        .arg(&ids)
        .arg(&c32)
        .arg(&mut fe)
        .arg(&mut ev);
    // SAFETY: a thread per corner; ids of first corners are below the edge count.
    unsafe { launch_1d(l, c32, "rxsd_edge_ids") }?;
    Ok((ev, fe, edges))
}

/// One level's mesh on the device.
struct Level {
    positions: CudaSlice<f32>,
    /// `uv_dim` floats a vertex: the uvs, and the second set's after each vertex's first
    uvs: Option<CudaSlice<f32>>,
    /// (shared with the strategies' kernels while they read it)
    indices: Arc<CudaSlice<u32>>,
    ev: CudaSlice<u32>,
    fe: CudaSlice<u32>,
    vertices: usize,
    edges: usize,
    triangles: usize,
}

/// The Loop program in CUDA C (kernels/programs/loop.cu).
pub const LOOP_PROGRAM: Source<'static> = rxpipe_gpu::kernel_source!("programs/loop.cu");

/// The GPU's `RxlInput` (kernels/programs/loop.cu): a level's input table, byte for byte.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LoopInput {
    positions: u64,
    uvs: u64,
    ev: u64,
    count: u64,
    opposite: u64,
    ring_offsets: u64,
    ring: u64,
    crease: u64,
    betas: u64,
    nbetas: u32,
    v: u32,
    uv_dim: u32,
    pad: u32,
    cos_corner: f64,
}

/// A level's new vertices made by Loop's program through a strategy: the geometry kernels
/// compiled with the program, and the kernels that build the rings it walks.
struct OnStrategy {
    strategy: Strategy,
    geometry: CudaGeometry,
    unpack: CudaFunction,
    ring_count: CudaFunction,
    ring_fill: CudaFunction,
    ring_order: CudaFunction,
    scan: Scan,
}

/// What one level's new vertices are made from: the level, its edges' triangle counts and
/// opposite corners, the next level's triangles, the constants.
struct LevelInput<'a> {
    cur: &'a Level,
    count: &'a CudaSlice<u32>,
    opposite: &'a CudaSlice<u32>,
    next: &'a Arc<CudaSlice<u32>>,
    betas: &'a CudaSlice<f64>,
    uv_dim: usize,
    cos_corner: f64,
}

/// A level's new positions and uvs (`uv_dim` floats a vertex), and with a strategy its counts
/// and kernels' milliseconds.
type Points = (
    CudaSlice<f32>,
    Option<CudaSlice<f32>>,
    Option<(GeometryStats, f64)>,
);

impl OnStrategy {
    fn new(
        gpu: &Arc<Gpu>,
        module: &Arc<cudarc::driver::CudaModule>,
        strategy: Strategy,
    ) -> Result<OnStrategy, SubdivideError> {
        let geometry = CudaGeometry::new(gpu.clone(), CudaShader::program(LOOP_PROGRAM), true)?;
        let f = |name: &str| gpu.function(module, name);
        Ok(OnStrategy {
            strategy,
            unpack: geometry.function("rxl_unpack")?,
            geometry,
            ring_count: f("rxsd_ring_count")?,
            ring_fill: f("rxsd_ring_fill")?,
            ring_order: f("rxsd_ring_order")?,
            scan: Scan::new(gpu, module)?,
        })
    }

    /// Every vertex's neighbours in edge order (kernels/subdivide.cu: rxsd_ring_*): the offsets
    /// (v + 1), the neighbours and their edges' crease flags. Counts the level's crease edges
    /// into `crease_edges[level_index]`.
    fn rings(
        &self,
        gpu: &Gpu,
        x: &LevelInput,
        crease_edges: &CudaSlice<u32>,
        level_index: u32,
    ) -> Result<[CudaSlice<u32>; 3], SubdivideError> {
        let (v, e) = (x.cur.vertices, x.cur.edges);
        let (vu, eu) = (v as u32, e as u32);
        let s = &gpu.stream;
        // (one more count than vertices, left 0: its prefix is the total)
        let entries: CudaSlice<u32> = gpu.zeros(v + 1, "ring sizes")?;
        let mut l = s.launch_builder(&self.ring_count);
        l.arg(&x.cur.ev)
            .arg(&eu)
            .arg(x.count)
            .arg(&entries)
            .arg(crease_edges)
            .arg(&level_index);
        // SAFETY: a thread per edge; every vertex id in ev is below v; level_index is below the
        // levels crease_edges counts.
        unsafe { launch_1d(l, eu, "rxsd_ring_count") }?;
        let mut offsets: CudaSlice<u32> = gpu.zeros(v + 1, "ring offsets")?;
        let mut sums: CudaSlice<u32> = gpu.zeros(Scan::sums_len(v + 1), "scan sums")?;
        let mut total: CudaSlice<u32> = gpu.zeros(1, "the ring total")?;
        self.scan.run(
            gpu,
            &entries,
            v + 1,
            0,
            &mut offsets,
            &mut sums,
            &mut total.slice_mut(0..1),
        )?;
        drop((entries, sums, total));
        // every edge but one from a vertex to itself has an entry at each end: at most 2e
        // SAFETY (allocation): rxsd_ring_fill writes every entry the offsets count
        let ring: CudaSlice<u32> = unsafe { gpu.alloc_uninit((2 * e).max(1), "rings") }?;
        let filled: CudaSlice<u32> = gpu.zeros(v.max(1), "ring fills")?;
        let mut l = s.launch_builder(&self.ring_fill);
        l.arg(&x.cur.ev)
            .arg(&eu)
            .arg(&offsets)
            .arg(&filled)
            .arg(&ring);
        // SAFETY: a thread per edge; each vertex's entries go to its own range of the ring, as
        // many as rxsd_ring_count counted.
        unsafe { launch_1d(l, eu, "rxsd_ring_fill") }?;
        // SAFETY (allocation): rxsd_ring_order writes a flag for every entry
        let crease: CudaSlice<u32> = unsafe { gpu.alloc_uninit((2 * e).max(1), "crease flags") }?;
        let mut l = s.launch_builder(&self.ring_order);
        l.arg(&offsets)
            .arg(&vu)
            .arg(&x.cur.ev)
            .arg(x.count)
            .arg(&ring)
            .arg(&crease);
        // SAFETY: a thread per vertex, sorting and rewriting its own range of the ring and of
        // the flags; every entry is an edge id below e.
        unsafe { launch_1d(l, vu, "rxsd_ring_order") }?;
        Ok([offsets, ring, crease])
    }

    /// The next level's vertices: Loop's program run through the strategy over the next
    /// level's triangles, every record unpacked into the new positions and uvs.
    fn points(
        &self,
        gpu: &Gpu,
        x: &LevelInput,
        crease_edges: &CudaSlice<u32>,
        level_index: u32,
    ) -> Result<Points, SubdivideError> {
        let [offsets, ring, crease] = self.rings(gpu, x, crease_edges, level_index)?;
        let (v, e) = (x.cur.vertices, x.cur.edges);
        let v2 = v + e;
        let s = &gpu.stream;
        let table = LoopInput {
            positions: gpu.address(&x.cur.positions),
            uvs: x.cur.uvs.as_ref().map_or(0, |u| gpu.address(u)),
            ev: gpu.address(&x.cur.ev),
            count: gpu.address(x.count),
            opposite: gpu.address(x.opposite),
            ring_offsets: gpu.address(&offsets),
            ring: gpu.address(&ring),
            crease: gpu.address(&crease),
            betas: gpu.address(x.betas),
            nbetas: x.betas.len() as u32,
            v: v as u32,
            uv_dim: x.uv_dim as u32,
            pad: 0,
            cos_corner: x.cos_corner,
        };
        let out = self
            .geometry
            .process_on_device(self.strategy, &table, v2, x.next, 3 * 4 * x.cur.triangles)
            .map_err(|e| SubdivideError::Device(e.to_string()))?;
        // SAFETY (allocations): rxl_unpack writes every vertex's position and uvs
        let mut positions: CudaSlice<f32> =
            unsafe { gpu.alloc_uninit(3 * v2, "subdivided positions") }?;
        let mut uvs: CudaSlice<f32> = match x.uv_dim {
            0 => gpu.zeros(1, "no texture coordinates")?,
            d => unsafe { gpu.alloc_uninit(d * v2, "subdivided texture coordinates") }?,
        };
        let (n, dim) = (v2 as u32, x.uv_dim as u32);
        let mut l = s.launch_builder(&self.unpack);
        l.arg(&out.records)
            .arg(&n)
            .arg(&dim)
            .arg(&mut positions)
            .arg(&mut uvs);
        // SAFETY: a thread per new vertex; records, positions and (with uvs) uvs hold v2 of
        // theirs.
        unsafe { launch_1d(l, n, "rxl_unpack") }?;
        // (the buffers the table points at live until the unpack is enqueued after the
        // strategy's kernels, which have run: process_on_device synchronised to read its totals)
        drop((offsets, ring, crease));
        Ok((
            positions,
            (x.uv_dim > 0).then_some(uvs),
            Some((out.stats, out.kernel_ms)),
        ))
    }
}

/// Subdivides `mesh` `levels` times on the device, where a crease vertex whose creases meet at
/// an angle of cosine above `cos_corner` is a corner, each level's new vertices made by the
/// stage's own kernels or, given `strategy`, by Loop's program through it. Returns how many
/// crease edges the input has and, with a strategy, its counts over all levels and its kernels'
/// milliseconds (CUDA events).
pub fn run(
    gpu: &Arc<Gpu>,
    mesh: &mut WorkingMesh,
    levels: u32,
    cos_corner: f64,
    strategy: Option<Strategy>,
) -> Result<(usize, Option<(GeometryStats, f64)>), SubdivideError> {
    let module = gpu.module("subdivide", &[BLOCKS, SORT, KERNELS], &[])?;
    let function = |name: &str| gpu.function(&module, name);
    let topology = Topology {
        edge_faces: function("rxsd_edge_faces")?,
        split: function("rxsd_split")?,
        halves: function("rxsd_halves")?,
    };
    // (the stage's own kernels for the new vertices, when no strategy makes them)
    let stage = (function("rxsd_rings")?, function("rxsd_points")?);
    let on_strategy = strategy
        .map(|s| OnStrategy::new(gpu, &module, s))
        .transpose()?;
    let mut host = mesh.host_attributes();
    let uvs1 = host.uvs1.take();
    let host_side = host.colors.is_some() || host.tangents.is_some();
    let d = mesh.device(gpu)?;
    // (a second uv set rides beside the first: 4 floats a vertex)
    let uv_dim: usize = match (&d.uvs, &uvs1) {
        (None, _) => 0,
        (Some(_), None) => 2,
        (Some(_), Some(_)) => 4,
    };
    let (v0, f0) = (d.vertex_count, d.index_count / 3);
    let (ev, fe, e0) = device_edges(gpu, &module, &d.indices, 3 * f0)?;
    // every level's sizes, and the last one's memory, before the first level
    let (v2, e2, f2) =
        last_level_sizes(v0, e0, f0, levels).map_err(|level| SubdivideError::TooLarge { level })?;
    let bytes = level_bytes(v2, e2, f2, uv_dim)
        + if strategy.is_some() {
            strategy_bytes(v2, e2, f2)
        } else {
            0
        };
    if bytes > gpu.memory_bytes as u64 {
        return Err(SubdivideError::Device(format!(
            "level {levels} ({f2} triangles) would need {} of device memory; the device has {}",
            rxpipe_core::limits::human(bytes),
            rxpipe_core::limits::human(gpu.memory_bytes as u64)
        )));
    }
    let table: Vec<f64> = (0..=BETA_TABLE).map(beta).collect();
    let betas = gpu.upload(&table, "Loop's weights")?;
    let crease_edges: CudaSlice<u32> = gpu.zeros(levels as usize, "crease edge counts")?;
    let stream = &gpu.stream;
    let mut cur = first_level(gpu, d, uvs1.as_deref(), (ev, fe, e0))?;
    let mut counted: Option<(GeometryStats, f64)> = None;
    for level in 1..=levels {
        let (v, e, f) = (cur.vertices, cur.edges, cur.triangles);
        let (v2, e2, f2) = next_sizes(v, e, f).ok_or(SubdivideError::TooLarge { level })?;
        let next = split(gpu, &topology, &cur, e2, f2)?;
        let indices = next.indices;
        let input = LevelInput {
            cur: &cur,
            count: &next.count,
            opposite: &next.opposite,
            next: &indices,
            betas: &betas,
            uv_dim,
            cos_corner,
        };
        let (positions, uvs, runs) = match &on_strategy {
            Some(p) => p.points(gpu, &input, &crease_edges, level - 1)?,
            None => stage_points(gpu, &stage, &input, &crease_edges, level - 1)?,
        };
        if let Some((st, ms)) = runs {
            let c = counted.get_or_insert((GeometryStats::default(), 0.0));
            c.0.add(&st);
            c.1 += ms;
        }
        drop((next.count, next.opposite));
        if host_side {
            let ev: Vec<u32> = gpu.download(&cur.ev, e * 2)?;
            host_attributes(
                &mut host.colors,
                &mut host.tangents,
                bytemuck::cast_slice(&ev),
            );
        }
        cur = Level {
            positions,
            uvs,
            indices,
            ev: next.ev,
            fe: next.fe,
            vertices: v2,
            edges: e2,
            triangles: f2,
        };
    }
    let creases = gpu.download(&crease_edges, 1)?[0] as usize;
    // (two uv sets part again: the first stays on the device, the second goes to the host)
    let uvs = match cur.uvs {
        Some(both) if uv_dim == 4 => {
            let all: Vec<f32> = gpu.download(&both, 4 * cur.vertices)?;
            let first: Vec<f32> = all.chunks_exact(4).flat_map(|c| [c[0], c[1]]).collect();
            host.uvs1 = Some(
                all.chunks_exact(4)
                    .map(|c| glam::Vec2::new(c[2], c[3]))
                    .collect(),
            );
            Some(gpu.upload(&first, "texture coordinates")?)
        }
        u => u,
    };
    stream.synchronize().ctx("subdividing")?;
    let indices = Arc::try_unwrap(cur.indices)
        .map_err(|_| SubdivideError::Device("the subdivided indices are still shared".into()))?;
    mesh.set_device(DeviceAttributes {
        positions: cur.positions,
        normals: None,
        uvs,
        indices,
        vertex_count: cur.vertices,
        index_count: 3 * cur.triangles,
    });
    mesh.set_host_attributes(host);
    Ok((creases, counted))
}

/// The mesh as the first level: its device buffers copied (the mesh keeps its own until the
/// last level replaces them), the second uv set `uvs1` interleaved after each vertex's first,
/// and the edges `(ev, fe, count)`.
fn first_level(
    gpu: &Gpu,
    d: &DeviceAttributes,
    uvs1: Option<&[glam::Vec2]>,
    (ev, fe, e0): (CudaSlice<u32>, CudaSlice<u32>, usize),
) -> Result<Level, SubdivideError> {
    let stream = &gpu.stream;
    let copy = |b: &CudaSlice<f32>, what: &str| -> Result<CudaSlice<f32>, GpuError> {
        let mut c: CudaSlice<f32> = gpu.zeros(b.len(), what)?;
        stream.memcpy_dtod(b, &mut c).ctx(what)?;
        Ok(c)
    };
    let v0 = d.vertex_count;
    Ok(Level {
        positions: copy(&d.positions, "positions")?,
        uvs: match (&d.uvs, uvs1) {
            (Some(u), None) => Some(copy(u, "texture coordinates")?),
            (Some(u), Some(u1)) => {
                let first: Vec<f32> = gpu.download(u, 2 * v0)?;
                let both: Vec<f32> = first
                    .chunks_exact(2)
                    .zip(u1)
                    .flat_map(|(a, b)| [a[0], a[1], b.x, b.y])
                    .collect();
                Some(gpu.upload(&both, "both texture coordinate sets")?)
            }
            (None, _) => None,
        },
        indices: {
            let mut c: CudaSlice<u32> = gpu.zeros(d.indices.len(), "indices")?;
            stream.memcpy_dtod(&d.indices, &mut c).ctx("indices")?;
            Arc::new(c)
        },
        ev,
        fe,
        vertices: v0,
        edges: e0,
        triangles: d.index_count / 3,
    })
}

/// The kernels that make a level's connectivity.
struct Topology {
    edge_faces: CudaFunction,
    split: CudaFunction,
    halves: CudaFunction,
}

/// The next level's connectivity, with what the new vertices need of the current one: each
/// edge's triangle count and opposite corners.
struct Split {
    count: CudaSlice<u32>,
    opposite: CudaSlice<u32>,
    indices: Arc<CudaSlice<u32>>,
    ev: CudaSlice<u32>,
    fe: CudaSlice<u32>,
}

/// Splits every triangle of `cur` in four: its edges' triangles and opposite corners
/// (rxsd_edge_faces), the new triangles with their edges and the inside edges (rxsd_split),
/// and each old edge's two halves (rxsd_halves); `e2` and `f2` are the next level's edges and
/// triangles.
fn split(gpu: &Gpu, k: &Topology, cur: &Level, e2: usize, f2: usize) -> Result<Split, GpuError> {
    let stream = &gpu.stream;
    let e = cur.edges;
    let (vu, eu, fu) = (cur.vertices as u32, e as u32, cur.triangles as u32);
    let count: CudaSlice<u32> = gpu.zeros(e, "edge triangle counts")?;
    let opposite: CudaSlice<u32> = gpu.zeros(2 * e, "opposite corners")?;
    let mut l = stream.launch_builder(&k.edge_faces);
    let corners = 3 * fu;
    l.arg(&*cur.indices)
        .arg(&cur.fe)
        .arg(&corners)
        .arg(&count)
        .arg(&opposite);
    // SAFETY: a thread per corner; every edge id in fe is below e, the length of count and
    // half that of opposite.
    unsafe { launch_1d(l, corners, "rxsd_edge_faces") }?;
    // SAFETY (allocations): rxsd_split writes every index, every triangle edge and the
    // inside edges (2e .. e2); rxsd_halves the halves (0 .. 2e).
    let mut indices: CudaSlice<u32> = unsafe { gpu.alloc_uninit(3 * f2, "subdivided indices") }?;
    let mut fe2: CudaSlice<u32> = unsafe { gpu.alloc_uninit(3 * f2, "subdivided triangle edges") }?;
    let mut ev2: CudaSlice<u32> = unsafe { gpu.alloc_uninit(2 * e2, "subdivided edges") }?;
    let mut l = stream.launch_builder(&k.split);
    l.arg(&*cur.indices)
        .arg(&cur.fe)
        .arg(&cur.ev)
        .arg(&fu)
        .arg(&vu)
        .arg(&eu)
        .arg(&mut indices)
        .arg(&mut fe2)
        .arg(&mut ev2);
    // SAFETY: a thread per old triangle, writing its 12 indices and edges and its 3 inside
    // edges, all within the new buffers' sizes.
    unsafe { launch_1d(l, fu, "rxsd_split") }?;
    let mut l = stream.launch_builder(&k.halves);
    l.arg(&cur.ev).arg(&eu).arg(&vu).arg(&mut ev2);
    // SAFETY: a thread per old edge, writing its two halves (4 words at 4x).
    unsafe { launch_1d(l, eu, "rxsd_halves") }?;
    Ok(Split {
        count,
        opposite,
        indices: Arc::new(indices),
        ev: ev2,
        fe: fe2,
    })
}

/// The next level's vertices by the stage's own kernels: each vertex's neighbour sums over the
/// edges (`rings`: rxsd_rings, counting the level's crease edges into
/// `crease_edges[level_index]`), then a thread per new vertex (`points`: rxsd_points).
fn stage_points(
    gpu: &Gpu,
    (rings, points): &(CudaFunction, CudaFunction),
    x: &LevelInput,
    crease_edges: &CudaSlice<u32>,
    level_index: u32,
) -> Result<Points, SubdivideError> {
    let stream = &gpu.stream;
    let (v, e, uv_dim) = (x.cur.vertices, x.cur.edges, x.uv_dim);
    let v2 = v + e;
    let (vu, eu) = (v as u32, e as u32);
    let n: CudaSlice<u32> = gpu.zeros(v, "valences")?;
    let creases: CudaSlice<u32> = gpu.zeros(v, "crease counts")?;
    let sum: CudaSlice<f64> = gpu.zeros(3 * v, "neighbour sums")?;
    let crease_ends: CudaSlice<u32> = gpu.zeros(2 * v, "crease neighbours")?;
    let uv_arg = uv_dim as i32;
    // (a mesh without uvs passes one-element stand-ins, never read or written)
    let uv_sum: CudaSlice<f64> = gpu.zeros((uv_dim * v).max(1), "uv sums")?;
    let mut uvs: CudaSlice<f32> = match &x.cur.uvs {
        // SAFETY: rxsd_points writes every new vertex's uvs
        Some(_) => unsafe { gpu.alloc_uninit(uv_dim * v2, "subdivided texture coordinates") }?,
        None => gpu.zeros(1, "no texture coordinates")?,
    };
    let no_uv: CudaSlice<f32>;
    let uv_in = match &x.cur.uvs {
        Some(u) => u,
        None => {
            no_uv = gpu.zeros(1, "no texture coordinates")?;
            &no_uv
        }
    };
    let mut l = stream.launch_builder(rings);
    l.arg(&x.cur.ev)
        .arg(&eu)
        .arg(x.count)
        .arg(&x.cur.positions)
        .arg(&n)
        .arg(&sum)
        .arg(&creases)
        .arg(&crease_ends)
        .arg(crease_edges)
        .arg(&level_index)
        .arg(&uv_arg)
        .arg(uv_in)
        .arg(&uv_sum);
    // SAFETY: a thread per edge; every vertex id in ev is below v; level_index is below the
    // levels crease_edges counts; with uvs, uv_in and uv_sum hold uv_dim values per vertex.
    unsafe { launch_1d(l, eu, "rxsd_rings") }?;
    // SAFETY: rxsd_points writes every new vertex's position
    let mut positions: CudaSlice<f32> =
        unsafe { gpu.alloc_uninit(3 * v2, "subdivided positions") }?;
    let nbetas = x.betas.len() as u32;
    let mut l = stream.launch_builder(points);
    l.arg(&x.cur.positions)
        .arg(&vu)
        .arg(&eu)
        .arg(&n)
        .arg(&sum)
        .arg(&creases)
        .arg(&crease_ends)
        .arg(&x.cos_corner)
        .arg(x.betas)
        .arg(&nbetas)
        .arg(&x.cur.ev)
        .arg(x.count)
        .arg(x.opposite)
        .arg(&mut positions)
        .arg(&uv_arg)
        .arg(uv_in)
        .arg(&uv_sum)
        .arg(&mut uvs);
    // SAFETY: a thread per new vertex (v2 = v + e); betas holds nbetas weights; an edge with
    // two triangles has both opposite corners written, a vertex on two crease edges both
    // crease neighbours; with uvs, uvs holds uv_dim values per new vertex.
    unsafe { launch_1d(l, v2 as u32, "rxsd_points") }?;
    Ok((positions, x.cur.uvs.as_ref().map(|_| uvs), None))
}
