//! The CPU implementations: the serial hash-map reference and the paper's method with rayon.

use super::{report, Method, ReindexError, Reindexed};
use rayon::prelude::*;
use rxpipe_core::mesh::weld::{gather_mesh, Keys, MAX_WORDS};
use rxpipe_core::mesh::Mesh;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

/// Runs `f::<W>(args)` with the smallest key width `W` that holds `words` words (a few widths:
/// each is another copy of the method).
macro_rules! by_width {
    ($words:expr, $f:ident($($a:expr),*)) => {
        match $words {
            3 => $f::<3>($($a),*),
            5 => $f::<5>($($a),*),
            6 => $f::<6>($($a),*),
            7 | 8 => $f::<8>($($a),*),
            9..=12 => $f::<12>($($a),*),
            13..=16 => $f::<16>($($a),*),
            _ => $f::<MAX_WORDS>($($a),*),
        }
    };
}

/// The serial reference (the paper's `std::map` version, with a hash map): every index of every
/// triangle, in order, looks its vertex value up and appends it when new
/// ([`rxpipe_core::mesh::weld::weld`]). New vertices come in order of their first reference.
pub fn serial(mesh: &Mesh, weld: Option<f32>) -> Result<Reindexed, ReindexError> {
    let w = rxpipe_core::mesh::weld::weld(mesh, weld)?;
    let report = report(Method::Serial, mesh, w.used, w.mesh.vertex_count());
    Ok(Reindexed {
        mesh: w.mesh,
        report,
    })
}

/// The paper's method, step by step, in parallel: mark used vertices; give unused ones the key of
/// the first triangle's first vertex; sort (key, original id) pairs; flag first occurrences;
/// inclusive scan minus one gives new indices; scatter the first occurrences; invert the sort
/// permutation; remap every index as `newIdx[perm[i]]`. New vertices come in key order; equal keys
/// are ordered by original id, so the result does not depend on the thread count.
pub fn parallel(mesh: &Mesh, weld: Option<f32>) -> Result<Reindexed, ReindexError> {
    let keys = Keys::new(mesh, weld)?;
    by_width!(keys.words, parallel_w(mesh, &keys))
}

fn parallel_w<const W: usize>(mesh: &Mesh, keys: &Keys) -> Result<Reindexed, ReindexError> {
    let n = mesh.vertex_count();
    // step 1: mark used vertices
    let used: Vec<AtomicBool> = (0..n)
        .into_par_iter()
        .map(|_| AtomicBool::new(false))
        .collect();
    mesh.indices
        .par_iter()
        .for_each(|&i| used[i as usize].store(true, Relaxed));
    let first = mesh.indices[0];
    // an unused vertex stands for a copy of the first triangle's first vertex
    let source = |v: u32| {
        if used[v as usize].load(Relaxed) {
            v
        } else {
            first
        }
    };
    let used_count = used.par_iter().filter(|u| u.load(Relaxed)).count();
    // step 2: key-value sort of the vertices with their original ids
    let mut sorted: Vec<([u32; W], u32)> = (0..n as u32)
        .into_par_iter()
        .map(|v| (keys.key_n::<W>(source(v) as usize), v))
        .collect();
    sorted.par_sort_unstable();
    // first-occurrence flags, inclusive scan minus one
    let nodup: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| (i == 0 || sorted[i].0 != sorted[i - 1].0) as u32)
        .collect();
    let new_idx = inclusive_scan_minus_one(&nodup);
    let out = new_idx.last().map_or(0, |&l| l as usize + 1);
    // step 3: the new vertex array (the first occurrences, in order: a scatter to newIdx)
    let src: Vec<u32> = sorted
        .par_iter()
        .zip(&nodup)
        .filter(|(_, &f)| f == 1)
        .map(|((_, v), _)| source(*v))
        .collect();
    debug_assert_eq!(src.len(), out);
    // step 4: the inverse permutation and the index remap
    let perm: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    sorted
        .par_iter()
        .enumerate()
        .for_each(|(j, (_, v))| perm[*v as usize].store(j as u32, Relaxed));
    drop(sorted);
    let indices = mesh
        .indices
        .par_iter()
        .map(|&i| new_idx[perm[i as usize].load(Relaxed) as usize])
        .collect();
    let r = report(Method::Parallel, mesh, used_count, out);
    Ok(Reindexed {
        mesh: gather_mesh(mesh, &src, indices),
        report: r,
    })
}

/// Inclusive prefix sum minus one, in parallel (chunk sums, their prefix, then each chunk).
fn inclusive_scan_minus_one(x: &[u32]) -> Vec<u32> {
    const CHUNK: usize = 1 << 16;
    let sums: Vec<u32> = x.par_chunks(CHUNK).map(|c| c.iter().sum()).collect();
    let mut base = Vec::with_capacity(sums.len());
    let mut acc = 0u32;
    for s in sums {
        base.push(acc);
        acc += s;
    }
    let mut out = vec![0u32; x.len()];
    out.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .zip(base)
        .for_each(|((o, c), b)| {
            let mut a = b;
            for (o, &v) in o.iter_mut().zip(c) {
                a += v;
                *o = a.wrapping_sub(1);
            }
        });
    out
}
