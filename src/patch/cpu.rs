//! Patching on the CPU: Lloyd clustering on the face-adjacency graph, as the paper's appendix C
//! describes it.
//!
//! 1. Faces are adjacent when they share an edge (an edge of more than two faces links them in a
//!    chain, so a non-manifold fan costs linear, not quadratic, adjacency); connected components
//!    are labelled (by their smallest face), and each gets `ceil(faces / limit)` seed faces,
//!    chosen pseudo-randomly from its faces in increasing order.
//! 2. Assignment: a breadth-first search from all seeds at once gives every face the patch of
//!    the nearest seed (in face hops; the smallest patch number among equally near ones), so
//!    every patch is connected. The searches run level by level in parallel, with atomic
//!    minima and maxima where threads meet, so the result does not depend on their timing.
//! 3. When the largest patch is within the limit, patching ends. Otherwise each patch is
//!    re-centred: a breadth-first search inward from its boundary faces (those next to another
//!    patch) picks the face reached last as its new seed; and every fifth iteration each
//!    oversized patch gets one more seed, the face farthest from its seed (both the smallest
//!    face on a tie, so that the GPU's level-synchronous searches find the same).
//! 4. Patches still over the limit after `max_iterations` are split directly into connected
//!    pieces of at most `limit` faces (grown breadth-first), so patching always ends within the
//!    limit; the report says how many were split.

use super::{PatchError, PatchOptions, PatchReport, Patching};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

const NONE: u32 = u32::MAX;

/// Face adjacency in compressed rows.
pub struct FaceGraph {
    pub offsets: Vec<u32>,
    pub neighbors: Vec<u32>,
    /// edges shared by more than two faces
    pub non_manifold_edges: usize,
}

impl FaceGraph {
    /// The faces sharing an edge with each face of `indices` (whole triangles; edges with both
    /// ends at one vertex are ignored).
    pub fn build(indices: &[u32]) -> FaceGraph {
        let faces = indices.len() / 3;
        // (edge key, face) for every edge of every face, sorted by key
        let mut edges: Vec<(u64, u32)> = (0..faces)
            .into_par_iter()
            .flat_map_iter(|t| {
                let v = &indices[3 * t..3 * t + 3];
                (0..3).filter_map(move |k| {
                    let (a, b) = (v[k], v[(k + 1) % 3]);
                    (a != b).then(|| (((a.min(b) as u64) << 32) | a.max(b) as u64, t as u32))
                })
            })
            .collect();
        edges.par_sort_unstable();
        let mut degree = vec![0u32; faces + 1];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut non_manifold = 0;
        let mut i = 0;
        while i < edges.len() {
            let mut j = i + 1;
            while j < edges.len() && edges[j].0 == edges[i].0 {
                j += 1;
            }
            if j - i > 2 {
                non_manifold += 1;
            }
            // consecutive faces of the run are linked: a pair for a manifold edge, a chain for
            // a fan of more
            for w in edges[i..j].windows(2) {
                if w[0].1 != w[1].1 {
                    pairs.push((w[0].1, w[1].1));
                    degree[w[0].1 as usize + 1] += 1;
                    degree[w[1].1 as usize + 1] += 1;
                }
            }
            i = j;
        }
        for f in 0..faces {
            degree[f + 1] += degree[f];
        }
        let mut cursor = degree.clone();
        let mut neighbors = vec![0u32; degree[faces] as usize];
        for (a, b) in pairs {
            neighbors[cursor[a as usize] as usize] = b;
            cursor[a as usize] += 1;
            neighbors[cursor[b as usize] as usize] = a;
            cursor[b as usize] += 1;
        }
        // each row in face order, so that the patching depends on the faces and their order
        // only, not on how the vertices are numbered (CPU and GPU re-indexing number them
        // differently)
        for f in 0..faces {
            neighbors[degree[f] as usize..degree[f + 1] as usize].sort_unstable();
        }
        FaceGraph {
            offsets: degree,
            neighbors,
            non_manifold_edges: non_manifold,
        }
    }

    /// The faces adjacent to face `f`.
    pub fn of(&self, f: u32) -> &[u32] {
        &self.neighbors[self.offsets[f as usize] as usize..self.offsets[f as usize + 1] as usize]
    }

    fn faces(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Breadth-first search from `seeds` (face, patch) over the whole graph, level by level in
/// parallel: every unassigned face next to the frontier takes the smallest patch number among
/// its frontier neighbours (an atomic minimum, so the result does not depend on the threads'
/// timing).
fn flood(g: &FaceGraph, seeds: &[(u32, u32)], patch_of: &mut [u32]) {
    let claim: Vec<AtomicU32> = patch_of.iter().map(|&p| AtomicU32::new(p)).collect();
    // faces assigned in earlier levels (read-only while a level runs)
    let mut done = vec![false; patch_of.len()];
    let mut frontier: Vec<u32> = Vec::with_capacity(seeds.len());
    for &(f, p) in seeds {
        claim[f as usize].store(p, Ordering::Relaxed);
        done[f as usize] = true;
        frontier.push(f);
    }
    // `listed[n] == round`: n is already in this level's list
    let listed: Vec<AtomicU32> = (0..patch_of.len()).map(|_| AtomicU32::new(0)).collect();
    let mut round = 1u32;
    while !frontier.is_empty() {
        let done_now = &done;
        let mut next: Vec<u32> = frontier
            .par_iter()
            .flat_map_iter(|&f| {
                let p = claim[f as usize].load(Ordering::Relaxed);
                let (claim, listed) = (&claim, &listed);
                g.of(f).iter().filter_map(move |&n| {
                    if done_now[n as usize] {
                        return None;
                    }
                    claim[n as usize].fetch_min(p, Ordering::Relaxed);
                    (listed[n as usize].swap(round, Ordering::Relaxed) != round).then_some(n)
                })
            })
            .collect();
        // sorted: the next level then walks memory forward (results do not depend on the order)
        next.par_sort_unstable();
        for &n in &next {
            done[n as usize] = true;
        }
        frontier = next;
        round += 1;
    }
    for (p, c) in patch_of.iter_mut().zip(claim) {
        *p = c.into_inner();
    }
}

/// Per patch, the face reached last by a breadth-first search that starts from the faces
/// `source` picks and never leaves a face's patch: the largest distance, the smallest face on a
/// tie; `NONE` for a patch with no source. Level by level in parallel. With the boundary faces
/// (those next to another patch) as sources it gives each patch's centre; with a patch's seed,
/// its farthest face.
pub fn reached_last(
    g: &FaceGraph,
    patch_of: &[u32],
    patches: usize,
    source: impl Fn(u32) -> bool + Sync,
) -> Vec<u32> {
    let n = g.faces();
    let dist: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(NONE)).collect();
    let mut frontier: Vec<u32> = (0..n as u32)
        .into_par_iter()
        .filter(|&f| source(f))
        .collect();
    for &f in &frontier {
        dist[f as usize].store(0, Ordering::Relaxed);
    }
    // (distance, !face) of the best face per patch: the largest wins
    let best: Vec<AtomicU64> = (0..patches).map(|_| AtomicU64::new(0)).collect();
    let key = |d: u32, f: u32| ((d as u64 + 1) << 32) | (!f) as u64;
    frontier.par_iter().for_each(|&f| {
        best[patch_of[f as usize] as usize].fetch_max(key(0, f), Ordering::Relaxed);
    });
    let mut d = 0u32;
    while !frontier.is_empty() {
        d += 1;
        let mut next: Vec<u32> = frontier
            .par_iter()
            .flat_map_iter(|&f| {
                let p = patch_of[f as usize];
                let dist = &dist;
                g.of(f).iter().filter_map(move |&o| {
                    (patch_of[o as usize] == p
                        && dist[o as usize]
                            .compare_exchange(NONE, d, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok())
                    .then_some(o)
                })
            })
            .collect();
        next.par_sort_unstable();
        next.par_iter().for_each(|&o| {
            best[patch_of[o as usize] as usize].fetch_max(key(d, o), Ordering::Relaxed);
        });
        frontier = next;
    }
    best.into_iter()
        .map(|b| {
            let b = b.into_inner();
            if b == 0 {
                NONE
            } else {
                !(b as u32)
            }
        })
        .collect()
}

/// Whether face `f` is next to a face of another patch.
fn on_boundary(g: &FaceGraph, patch_of: &[u32], f: u32) -> bool {
    g.of(f)
        .iter()
        .any(|&o| patch_of[o as usize] != patch_of[f as usize])
}

/// The initial seeds: per connected component (numbered by its smallest face), `ceil(faces /
/// limit)` distinct faces picked pseudo-randomly from its faces in increasing order. `root` is
/// each face's component as its smallest face. Shared by the CPU and GPU patchings, so that both
/// start from the same seeds.
pub fn initial_seeds(root: &[u32], limit: usize, seed: u64) -> Vec<u32> {
    let n = root.len();
    // the components' faces, grouped by component (counting sort by root, stable)
    let mut start = vec![0u32; n + 1];
    for &r in root {
        start[r as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut faces = vec![0u32; n];
    let mut cursor = start.clone();
    for (f, &r) in root.iter().enumerate() {
        faces[cursor[r as usize] as usize] = f as u32;
        cursor[r as usize] += 1;
    }
    let mut rng = Rng(seed | 1);
    let mut seeds: Vec<u32> = Vec::new();
    let mut is_seed = vec![false; n];
    for r in 0..n {
        let c = &faces[start[r] as usize..start[r + 1] as usize];
        if c.is_empty() {
            continue;
        }
        let want = c.len().div_ceil(limit);
        let mut got = 0;
        let mut tries = 0;
        while got < want && tries < 4 * want + 8 {
            let f = c[rng.below(c.len())];
            tries += 1;
            if !std::mem::replace(&mut is_seed[f as usize], true) {
                seeds.push(f);
                got += 1;
            }
        }
    }
    seeds
}

/// Numbers the patches in the order of their first face and fills in the report's counts and
/// sizes (shared by the CPU and GPU patchings).
pub fn finish(mut patch_of: Vec<u32>, mut report: PatchReport) -> Patching {
    let n = patch_of.len();
    let mut renumber = vec![NONE; patch_of.iter().map(|&p| p as usize + 1).max().unwrap_or(0)];
    let mut count = 0u32;
    for p in patch_of.iter_mut() {
        let r = &mut renumber[*p as usize];
        if *r == NONE {
            *r = count;
            count += 1;
        }
        *p = *r;
    }
    let mut size = vec![0usize; count as usize];
    for &p in &patch_of {
        size[p as usize] += 1;
    }
    report.patches = count as usize;
    report.min_faces = size.iter().copied().min().unwrap_or(0);
    report.max_faces = size.iter().copied().max().unwrap_or(0);
    report.mean_faces = if count == 0 {
        0.0
    } else {
        n as f64 / count as f64
    };
    Patching {
        patch_of_face: patch_of,
        report,
    }
}

/// Splits every patch of more than `limit` faces into connected pieces of at most `limit`
/// faces, grown breadth-first from its smallest face not yet taken; returns how many were split.
/// The new pieces are numbered after the existing patches (`patches` of them).
pub fn split_oversized(g: &FaceGraph, patch_of: &mut [u32], patches: usize, limit: usize) -> usize {
    split_patches(g, patch_of, patches, |_| limit)
}

/// [`split_oversized`] with a limit per patch.
pub fn split_patches(
    g: &FaceGraph,
    patch_of: &mut [u32],
    patches: usize,
    limit_of: impl Fn(u32) -> usize,
) -> usize {
    let n = patch_of.len();
    let mut size = vec![0usize; patches];
    for &p in patch_of.iter() {
        size[p as usize] += 1;
    }
    let oversized = (0..patches)
        .filter(|&p| size[p] > limit_of(p as u32))
        .count();
    if oversized == 0 {
        return 0;
    }
    let mut next_patch = patches as u32;
    let mut done = vec![false; n];
    for f in 0..n as u32 {
        // faces of earlier pieces are done; their new numbers are past `size`
        if done[f as usize] {
            continue;
        }
        let p = patch_of[f as usize];
        let limit = limit_of(p);
        if size[p as usize] <= limit {
            continue;
        }
        // grow a piece of patch p from f, breadth-first, up to `limit` faces
        let piece = next_patch;
        next_patch += 1;
        let mut queue = VecDeque::from([f]);
        done[f as usize] = true;
        let mut taken = 0;
        let mut members = Vec::new();
        while let Some(x) = queue.pop_front() {
            if taken == limit {
                // not taken: free it for a later piece
                done[x as usize] = false;
                continue;
            }
            members.push(x);
            taken += 1;
            for &o in g.of(x) {
                if patch_of[o as usize] == p && !done[o as usize] {
                    done[o as usize] = true;
                    queue.push_back(o);
                }
            }
        }
        for x in members {
            patch_of[x as usize] = piece;
        }
    }
    oversized
}

/// Patches `mesh` (see the module's description). Never fails on a valid mesh: degenerate,
/// repeated, isolated and non-manifold faces are all patched.
pub fn patch(mesh: &Mesh, opts: &PatchOptions) -> Result<Patching, PatchError> {
    mesh.validate()?;
    patch_indices(&mesh.indices, opts)
}

/// [`patch`] of an index buffer alone (its whole triangles; only the topology matters).
pub fn patch_indices(indices: &[u32], opts: &PatchOptions) -> Result<Patching, PatchError> {
    if opts.max_faces == 0 || opts.max_faces > u16::MAX as u32 {
        return Err(PatchError::Limit(opts.max_faces));
    }
    let t0 = Instant::now();
    let limit = opts.max_faces as usize;
    let g = FaceGraph::build(&indices[..indices.len() / 3 * 3]);
    let n = g.faces();
    let mut report = PatchReport {
        faces: n,
        limit: opts.max_faces,
        non_manifold_edges: g.non_manifold_edges,
        isolated_faces: (0..n).filter(|&f| g.of(f as u32).is_empty()).count(),
        ..Default::default()
    };
    // connected components, each labelled with its smallest face
    let mut root = vec![NONE; n];
    let mut queue = Vec::new();
    for f in 0..n as u32 {
        if root[f as usize] != NONE {
            continue;
        }
        report.components += 1;
        root[f as usize] = f;
        queue.clear();
        queue.push(f);
        let mut i = 0;
        while i < queue.len() {
            for &o in g.of(queue[i]) {
                if root[o as usize] == NONE {
                    root[o as usize] = f;
                    queue.push(o);
                }
            }
            i += 1;
        }
    }
    let mut seeds = initial_seeds(&root, limit, opts.seed);
    drop(root);
    let mut patch_of = vec![NONE; n];
    let mut iterations = 0;
    loop {
        patch_of.iter_mut().for_each(|p| *p = NONE);
        let s: Vec<(u32, u32)> = seeds
            .iter()
            .enumerate()
            .map(|(p, &f)| (f, p as u32))
            .collect();
        flood(&g, &s, &mut patch_of);
        iterations += 1;
        let mut size = vec![0usize; seeds.len()];
        for &p in &patch_of {
            size[p as usize] += 1;
        }
        let largest = size.iter().copied().max().unwrap_or(0);
        if largest <= limit || iterations >= opts.max_iterations {
            break;
        }
        let centre = reached_last(&g, &patch_of, seeds.len(), |f| {
            on_boundary(&g, &patch_of, f)
        });
        for (s, c) in seeds.iter_mut().zip(centre) {
            if c != NONE {
                *s = c;
            }
        }
        if iterations % 5 == 0 {
            // one more seed in each oversized patch: its face farthest from its seed
            let seed_of = &seeds;
            let far = reached_last(&g, &patch_of, seeds.len(), |f| {
                let p = patch_of[f as usize] as usize;
                size[p] > limit && seed_of[p] == f
            });
            let added: Vec<u32> = far.into_iter().filter(|&f| f != NONE).collect();
            report.seeds_added += added.len();
            seeds.extend(added);
        }
    }
    report.iterations = iterations;
    report.split = split_oversized(&g, &mut patch_of, seeds.len(), limit);
    let mut p = finish(patch_of, report);
    p.report.ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok(p)
}
