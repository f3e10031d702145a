//! The CPU reference of the geometry stage. Each strategy works batch by batch, exactly as a GPU
//! warp (warp voting) or block (dynamic strategies) would, so the number of shader invocations is
//! the number the CUDA kernels produce. Batches run in parallel (rayon); the output is assembled
//! in input order.

use super::{
    Batches, GeometryError, GeometryStats, PatchBatches, ShadedGeometry, Strategy, Streamed,
    Uniforms, VertexIn, VertexOut, VertexShader,
};
use rayon::prelude::*;

/// Lanes of an emulated warp.
pub const WARP: usize = 32;

/// Batches a task of the parallel strategies runs one after another into one output: a task
/// per batch allocated three vectors per batch and frame (a fifth of the bunny's CPU frame was
/// the kernel faulting their pages in).
const GROUP: usize = 64;

/// Batches a task runs for `batches` batches: [`GROUP`] at most, fewer where that would leave
/// fewer than four tasks a thread (an expensive program over a few hundred batches would
/// otherwise keep most cores idle).
fn group(batches: usize) -> usize {
    batches
        .div_ceil(4 * rayon::current_num_threads())
        .clamp(1, GROUP)
}

/// What the strategies run once per invocation: a vertex shader over a mesh's vertices
/// ([`run`]), or the per-vertex work of a mesh pass ([`process`]: a Loop subdivision level's new
/// vertices, an envelope's offsets). The strategies decide which vertex ids run and how often
/// (a vertex shared within a batch runs once); the program decides what a run computes, from the
/// id and whatever auxiliary inputs it holds.
pub trait Program: Sync {
    /// one invocation's record
    type Out: Copy + Send + Sync;
    /// The record of vertex `id`.
    fn run(&self, id: u32) -> Self::Out;
}

/// Any function of the vertex id is a program: a closure over its auxiliary inputs.
impl<T: Copy + Send + Sync, F: Fn(u32) -> T + Sync> Program for F {
    type Out = T;
    #[inline]
    fn run(&self, id: u32) -> T {
        self(id)
    }
}

/// A vertex shader as the strategies run it.
struct Shading<'a> {
    vin: &'a [VertexIn],
    vs: &'a dyn VertexShader,
    u: &'a Uniforms,
}

impl Program for Shading<'_> {
    type Out = VertexOut;
    #[inline]
    fn run(&self, id: u32) -> VertexOut {
        self.vs.shade(&self.vin[id as usize], self.u)
    }
}

/// The output of consecutive batches: their records, sources and triangles (indices into these
/// records).
struct BatchOut<T> {
    vertices: Vec<T>,
    sources: Vec<u32>,
    triangles: Vec<[u32; 3]>,
}

impl<T> BatchOut<T> {
    fn with_capacity(v: usize, t: usize) -> Self {
        BatchOut {
            vertices: Vec::with_capacity(v),
            sources: Vec::with_capacity(v),
            triangles: Vec::with_capacity(t),
        }
    }
    fn run<P: Program<Out = T>>(&mut self, id: u32, p: &P) -> u32 {
        self.vertices.push(p.run(id));
        self.sources.push(id);
        self.vertices.len() as u32 - 1
    }
}

/// Runs `program` over the triangles of `indices` (vertex ids below `vertex_count`) with
/// `strategy`, as the geometry stage shades them: the same batches, the same invocations (and so
/// the same counts and ASR), the records streamed out instead of rasterised. `batches` as for
/// [`run`]; the patch strategy patches the index buffer here.
pub fn process<P: Program>(
    strategy: Strategy,
    vertex_count: usize,
    indices: &[u32],
    batches: Option<&Batches>,
    program: &P,
) -> Result<Streamed<P::Out>, GeometryError> {
    let mut out = Streamed::default();
    let patches = match strategy {
        Strategy::Patch => Some(PatchBatches::of_indices(indices, vertex_count)?),
        _ => None,
    };
    run_program_into(
        strategy,
        vertex_count,
        indices,
        batches,
        patches.as_ref(),
        program,
        &mut out,
    )?;
    Ok(out)
}

/// Runs the geometry stage. `batches` are the dynamic batches for the dynamic strategies (built
/// here when `None`); the patch strategy patches the index buffer here (patches of the default
/// size, wherever they lie in it).
pub fn run(
    strategy: Strategy,
    vertices: &[VertexIn],
    indices: &[u32],
    batches: Option<&Batches>,
    shader: &dyn VertexShader,
    uniforms: &Uniforms,
) -> Result<ShadedGeometry, GeometryError> {
    let mut out = ShadedGeometry::default();
    let patches = match strategy {
        Strategy::Patch => Some(PatchBatches::of_indices(indices, vertices.len())?),
        _ => None,
    };
    run_into(
        strategy,
        vertices,
        indices,
        batches,
        patches.as_ref(),
        shader,
        uniforms,
        &mut out,
    )?;
    Ok(out)
}

/// Refuses a run whose output the host cannot hold, before shading: the shaded vertices (one
/// `VertexOut` and its source per invocation: three per triangle for naive, one per vertex for
/// multi, the patches' lists for patch, and at least one per vertex for the batching strategies)
/// and three corners per triangle. Buffers `out` already holds from an earlier frame need no new
/// memory, and then the host is not asked (no /proc reads per frame).
fn check_memory<T>(
    strategy: Strategy,
    n: usize,
    t: usize,
    patches: Option<&PatchBatches>,
    out: &Streamed<T>,
) -> Result<(), GeometryError> {
    let invocations = match strategy {
        Strategy::Naive => 3 * t as u64,
        Strategy::Patch => patches.map_or(n, |p| p.vertices.len()) as u64,
        _ => n as u64,
    };
    if out.vertices.capacity() as u64 >= invocations && out.triangles.capacity() >= t {
        return Ok(());
    }
    let per = (std::mem::size_of::<T>() + 4) as u64;
    let needed = invocations
        .saturating_mul(per)
        .saturating_add(12 * t as u64);
    rxpipe_core::limits::check_host(needed, || {
        format!("the geometry stage ({t} triangles, {invocations} shader invocations)")
    })?;
    Ok(())
}

/// [`run`] into an existing output, reusing its buffers (a renderer drawing frame after frame
/// allocates nothing here). The patch strategy needs `patches` (of these indices). On error
/// `out` is left empty.
#[allow(clippy::too_many_arguments)]
pub fn run_into(
    strategy: Strategy,
    vertices: &[VertexIn],
    indices: &[u32],
    batches: Option<&Batches>,
    patches: Option<&PatchBatches>,
    shader: &dyn VertexShader,
    uniforms: &Uniforms,
    out: &mut ShadedGeometry,
) -> Result<(), GeometryError> {
    let program = Shading {
        vin: vertices,
        vs: shader,
        u: uniforms,
    };
    run_program_into(
        strategy,
        vertices.len(),
        indices,
        batches,
        patches,
        &program,
        out,
    )
}

/// [`run_into`] of any [`Program`] over `n` vertices.
fn run_program_into<P: Program>(
    strategy: Strategy,
    n: usize,
    indices: &[u32],
    batches: Option<&Batches>,
    patches: Option<&PatchBatches>,
    p: &P,
    out: &mut Streamed<P::Out>,
) -> Result<(), GeometryError> {
    out.vertices.clear();
    out.sources.clear();
    out.triangles.clear();
    out.stats = GeometryStats::default();
    let indices = super::whole_triangles(indices, n)?;
    let t = indices.len() / 3;
    check_memory(strategy, n, t, patches, out)?;
    match strategy {
        Strategy::Naive => naive(p, indices, out),
        Strategy::Multi => multi(p, n, indices, out),
        Strategy::Patch => {
            let pb = patches.ok_or(GeometryError::NoPatches)?;
            if pb.patch_of_face.len() != t {
                return Err(GeometryError::Patches(format!(
                    "the patches cover {} triangles, the index buffer has {t}",
                    pb.patch_of_face.len()
                )));
            }
            patch(pb, p, out)
        }
        Strategy::WarpVote { batch } => {
            if batch < 3 || batch % 3 != 0 {
                return Err(GeometryError::WarpBatch(batch));
            }
            let b = batch as usize;
            let g = group(indices.len().div_ceil(b));
            let parts: Vec<BatchOut<P::Out>> = indices
                .par_chunks(b * g)
                .map(|group| {
                    let mut part = BatchOut::with_capacity(group.len(), group.len() / 3);
                    for chunk in group.chunks(b) {
                        warp_vote_batch(chunk, p, &mut part);
                    }
                    part
                })
                .collect();
            concat(parts, out)
        }
        Strategy::DynamicSort { .. }
        | Strategy::DynamicHash { .. }
        | Strategy::ParallelHash { .. } => {
            let b = Batches::for_strategy(strategy, batches, indices, n)?
                .expect("a dynamic strategy has batch limits");
            let table = super::hash_table_size(b.max_vertices) as usize;
            let group = group(b.len());
            let parts: Vec<BatchOut<P::Out>> = (0..b.len().div_ceil(group))
                .into_par_iter()
                .map(|g| {
                    let ks = g * group..((g + 1) * group).min(b.len());
                    let (first, last) = (b.range(ks.start).start, b.range(ks.end - 1).end);
                    let mut part = BatchOut::with_capacity(3 * (last - first), last - first);
                    for k in ks {
                        let r = b.range(k);
                        let chunk = &indices[r.start * 3..r.end * 3];
                        let (o, fp) = (&mut part, u32::MAX);
                        match strategy {
                            Strategy::DynamicSort { .. } => sort_batch(chunk, p, o),
                            Strategy::DynamicHash { .. } => hash_batch(chunk, table, fp, p, o),
                            Strategy::ParallelHash { fast_probes, .. } => {
                                hash_batch(chunk, table, fast_probes, p, o)
                            }
                            _ => unreachable!(),
                        }
                    }
                    part
                })
                .collect();
            concat(parts, out)
        }
    }
    out.stats = GeometryStats {
        invocations: out.vertices.len() as u64,
        triangles: t as u64,
        unique_vertices: unique_count(indices, n) as u64,
    };
    Ok(())
}

/// Distinct vertices referenced by an index buffer (every index below `vertex_count`).
pub fn unique_count(indices: &[u32], vertex_count: usize) -> usize {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // a bit a vertex, set in parallel over chunks of the indices, then counted
    let seen: Vec<AtomicU64> = (0..vertex_count.div_ceil(64))
        .map(|_| AtomicU64::new(0))
        .collect();
    indices.par_chunks(1 << 16).for_each(|chunk| {
        for &i in chunk {
            let (w, b) = (i as usize / 64, 1u64 << (i % 64));
            // (a plain load first: most vertices are seen again and again within a chunk)
            if seen[w].load(Relaxed) & b == 0 {
                seen[w].fetch_or(b, Relaxed);
            }
        }
    });
    seen.par_iter()
        .map(|w| w.load(Relaxed).count_ones() as usize)
        .sum()
}

fn concat<T: Copy>(parts: Vec<BatchOut<T>>, g: &mut Streamed<T>) {
    let nv: usize = parts.iter().map(|p| p.vertices.len()).sum();
    let nt: usize = parts.iter().map(|p| p.triangles.len()).sum();
    g.vertices.reserve(nv);
    g.sources.reserve(nv);
    g.triangles.reserve(nt);
    for p in parts {
        let base = g.vertices.len() as u32;
        g.vertices.extend_from_slice(&p.vertices);
        g.sources.extend_from_slice(&p.sources);
        g.triangles
            .extend(p.triangles.iter().map(|t| t.map(|i| i + base)));
    }
}

fn naive<P: Program>(p: &P, idx: &[u32], out: &mut Streamed<P::Out>) {
    idx.par_iter()
        .map(|&i| p.run(i))
        .collect_into_vec(&mut out.vertices);
    out.sources.extend_from_slice(idx);
    out.triangles
        .extend((0..idx.len() as u32 / 3).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]));
}

fn multi<P: Program>(p: &P, n: usize, idx: &[u32], out: &mut Streamed<P::Out>) {
    (0..n as u32)
        .into_par_iter()
        .map(|i| p.run(i))
        .collect_into_vec(&mut out.vertices);
    out.sources.extend(0..n as u32);
    out.triangles
        .extend(idx.chunks_exact(3).map(|t| [t[0], t[1], t[2]]));
}

/// The patch strategy: every patch shades its vertex list once (the lists laid end to end in
/// patch order, their entries shaded in parallel, as the GPU's one thread per entry), and
/// triangle t's corners are its local indices past its patch's place.
fn patch<P: Program>(pb: &PatchBatches, p: &P, out: &mut Streamed<P::Out>) {
    pb.vertices
        .par_iter()
        .map(|&i| p.run(i))
        .collect_into_vec(&mut out.vertices);
    out.sources.extend_from_slice(&pb.vertices);
    out.triangles
        .extend((0..pb.patch_of_face.len()).map(|t| [0, 1, 2].map(|k| pb.corner(t, k))));
}

/// Algorithm 1 for one static batch, lane by lane as the warp executes it.
///
/// A round loads up to 32 indices at a time; each new index goes to the next free lane (`fill`),
/// a repeated one maps to the lane that holds it. The round ends when all 32 lanes hold a vertex
/// or the batch is exhausted. `done` counts the leading indices that found a lane; the round
/// shades `fill` vertices and emits `done / 3` whole triangles; the next round restarts at the
/// first index not emitted, without the previous round's vertices.
fn warp_vote_batch<P: Program>(batch: &[u32], p: &P, out: &mut BatchOut<P::Out>) {
    let end = batch.len();
    let mut c_start = 0;
    let mut lanes = [0u32; WARP];
    let mut map = vec![0u8; end + WARP];
    while c_start < end {
        let (mut fill, mut done, mut offset) = (0usize, 0usize, c_start);
        while offset < end && fill < WARP {
            // every lane loads one index; each finds its lane (or fails once the warp is full)
            let mut first_fail = WARP;
            for lane in 0..WARP {
                if offset + lane >= end {
                    first_fail = first_fail.min(lane);
                    break;
                }
                let id = batch[offset + lane];
                let slot = match lanes[..fill].iter().position(|&l| l == id) {
                    Some(s) => Some(s),
                    None if fill < WARP => {
                        lanes[fill] = id;
                        fill += 1;
                        Some(fill - 1)
                    }
                    None => None,
                };
                match slot {
                    Some(s) => map[done + lane] = s as u8,
                    None => first_fail = first_fail.min(lane),
                }
            }
            done += first_fail;
            offset += WARP;
            if first_fail < WARP {
                break;
            }
        }
        let tris = done / 3;
        // shade the lanes of this round; their results are not kept for the next round
        let base = out.vertices.len() as u32;
        for &id in &lanes[..fill] {
            out.run(id, p);
        }
        for t in 0..tris {
            out.triangles
                .push([0, 1, 2].map(|k| base + map[3 * t + k] as u32));
        }
        c_start += 3 * tris;
    }
}

/// Algorithm 2 for one dynamic batch: sort (index, position) pairs, mark first occurrences, scan,
/// shade the unique vertices in ascending order, assemble through the inverse map.
fn sort_batch<P: Program>(batch: &[u32], p: &P, out: &mut BatchOut<P::Out>) {
    let mut pairs: Vec<(u32, u32)> = batch
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    pairs.sort_unstable();
    let mut map = vec![0u32; batch.len()];
    let mut prev = None;
    for &(id, lin) in &pairs {
        if prev != Some(id) {
            out.run(id, p);
            prev = Some(id);
        }
        map[lin as usize] = out.vertices.len() as u32 - 1;
    }
    out.triangles
        .extend(map.chunks_exact(3).map(|t| [t[0], t[1], t[2]]));
}

/// Algorithms 3 and parallel hashing for one dynamic batch: insert every index into a table of
/// `table` slots (multiplicative hash, linear probing). With `fast_probes` below `u32::MAX`, each
/// thread first tries that many slots alone; the indices still unplaced are then inserted by the
/// warp-cooperative slow path, which continues the same probe sequence. Shading then runs over
/// the occupied slots.
fn hash_batch<P: Program>(
    batch: &[u32],
    table: usize,
    fast_probes: u32,
    p: &P,
    out: &mut BatchOut<P::Out>,
) {
    const EMPTY: u32 = u32::MAX;
    let mask = table - 1;
    let mut slots = vec![EMPTY; table];
    let mut slot_of = vec![0u32; batch.len()];
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let try_insert =
        |slots: &mut [u32], id: u32, mut p: usize, budget: u32| -> Result<usize, usize> {
            for _ in 0..budget.min(table as u32) {
                if slots[p] == EMPTY {
                    slots[p] = id;
                    return Ok(p);
                }
                if slots[p] == id {
                    return Ok(p);
                }
                p = (p + 1) & mask;
            }
            Err(p)
        };
    for (i, &id) in batch.iter().enumerate() {
        let h = hash(id, table);
        match try_insert(&mut slots, id, h, fast_probes) {
            Ok(p) => slot_of[i] = p as u32,
            Err(p) => pending.push((i, p)),
        }
    }
    // slow path: the warp searches together from where each thread stopped
    for (i, p) in pending {
        let p = try_insert(&mut slots, batch[i], p, table as u32).expect("table larger than batch");
        slot_of[i] = p as u32;
    }
    let mut local = vec![0u32; table];
    for (s, &id) in slots.iter().enumerate() {
        if id != EMPTY {
            local[s] = out.run(id, p);
        }
    }
    out.triangles.extend(slot_of.chunks_exact(3).map(|t| {
        [
            local[t[0] as usize],
            local[t[1] as usize],
            local[t[2] as usize],
        ]
    }));
}

/// Multiplicative (Knuth) hashing into a power-of-two table.
#[inline]
pub fn hash(id: u32, table: usize) -> usize {
    let bits = table.trailing_zeros();
    if bits == 0 {
        return 0;
    }
    (id.wrapping_mul(2_654_435_761) >> (32 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{FmaLoad, Transform};

    fn vin(n: usize) -> Vec<VertexIn> {
        (0..n)
            .map(|i| VertexIn {
                position: glam::Vec3::new(i as f32, (i * 7 % 13) as f32, 1.0),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn warp_voting_worked_example() {
        // a strip-like batch: 10 triangles over 12 vertices, all in one round
        let idx: Vec<u32> = (0..10u32).flat_map(|t| [t, t + 1, t + 2]).collect();
        let g = run(
            Strategy::WarpVote { batch: 96 },
            &vin(12),
            &idx,
            None,
            &Transform,
            &Uniforms::default(),
        )
        .unwrap();
        assert_eq!(g.stats.invocations, 12);
        // random soup: 32 distinct lanes hold 10 whole triangles, the two extra are reshaded
        let soup: Vec<u32> = (0..96).collect();
        let g = run(
            Strategy::WarpVote { batch: 96 },
            &vin(96),
            &soup,
            None,
            &Transform,
            &Uniforms::default(),
        )
        .unwrap();
        // rounds: 32 lanes -> 10 tris (30 used), 32 -> 10, 32 -> 10, then 6 indices -> 2 tris
        assert_eq!(g.stats.invocations, 32 + 32 + 32 + 6);
        assert_eq!(g.triangles.len(), 32);
    }

    #[test]
    fn every_strategy_assembles_what_naive_does() {
        let m = rxpipe_core::mesh::icosphere(3);
        let v: Vec<VertexIn> = m
            .positions
            .iter()
            .map(|&p| VertexIn {
                position: p,
                normal: p,
                ..Default::default()
            })
            .collect();
        let idx = crate::geometry::VertexOrder::Random(3).apply(&m.indices, v.len());
        let u = Uniforms::new(
            glam::Mat4::from_rotation_y(0.3),
            glam::Mat4::IDENTITY,
            glam::Vec3::ZERO,
            0.0,
        );
        let base = run(Strategy::Naive, &v, &idx, None, &FmaLoad::new(8), &u).unwrap();
        assert_eq!(base.stats.asr(), 3.0);
        for s in Strategy::all() {
            let g = run(s, &v, &idx, None, &FmaLoad::new(8), &u).unwrap();
            assert_eq!(g.triangles.len(), base.triangles.len());
            for t in 0..g.triangles.len() {
                assert_eq!(g.triangle(t), base.triangle(t), "{s} triangle {t}");
            }
            assert!(g.stats.asr() >= g.stats.ideal_asr());
        }
    }

    #[test]
    fn out_of_range_index_is_an_error() {
        let e = run(
            Strategy::Naive,
            &vin(3),
            &[0, 1, 5],
            None,
            &Transform,
            &Uniforms::default(),
        );
        assert!(matches!(
            e,
            Err(GeometryError::IndexOutOfRange {
                triangle: 0,
                index: 5,
                ..
            })
        ));
    }

    #[test]
    fn big_index_buffers_are_checked_and_counted_in_parallel() {
        // over several chunks: the first index out of range is named, wherever the chunks split
        let n = 1000u32;
        let mut idx: Vec<u32> = (0..600_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % n)
            .collect();
        assert_eq!(
            crate::geometry::whole_triangles(&idx, n as usize)
                .unwrap()
                .len(),
            idx.len()
        );
        idx[400_001] = n + 7;
        idx[500_000] = n;
        let e = crate::geometry::whole_triangles(&idx, n as usize).unwrap_err();
        assert!(matches!(
            e,
            GeometryError::IndexOutOfRange {
                triangle: 133_333,
                index: 1007,
                ..
            }
        ));
        // the distinct vertices, as a set counts them
        let idx: Vec<u32> = (0..300_000u32).map(|i| (i * 7919) % 250_000 / 3).collect();
        let want = idx.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(unique_count(&idx, 250_000 / 3 + 1), want);
        assert_eq!(unique_count(&[], 10), 0);
    }
}
