//! The envelope's guarantee, checked exactly and restored where the per-vertex program alone
//! does not give it: no triangle of the envelope meets the input, nor a triangle of the
//! envelope that shares no vertex with it ([`crate::distance::intersect::triangles_meet`]: exact
//! predicates, touching counts). An envelope triangle and an input triangle that share a vertex
//! which stayed where it was ([`super::cpu::Limit::Pinned`]) touch there by construction and are
//! not compared.
//!
//! [`repair`] finds every such meeting over the two BVHs, halves the offsets of the vertices of
//! the envelope triangles involved, and looks again at the triangles those vertices touch;
//! after [`SHRINKS`] halvings a vertex still involved stays where it was. Each round either ends
//! the search or moves a vertex back, so it ends; where every vertex of two meeting triangles
//! already stays, the input itself crosses there, and that is an error naming them.

use super::cpu::{Limit, Record, SafeOffset};
use crate::distance::bvh::Bvh;
use crate::distance::intersect::{triangles_meet, Corners};
use glam::Vec3;
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// How many times a vertex's offset may be halved before it stays.
pub const SHRINKS: u32 = 12;

/// What [`repair`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Repaired {
    /// rounds of checking (the first checks every triangle; 1 means nothing needed repair)
    pub rounds: u32,
    /// vertices whose offset was halved or taken back
    pub vertices: u64,
    /// meetings found over all rounds
    pub meetings: u64,
}

/// Why the envelope could not be made free of crossings.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RepairError {
    #[error(
        "the input crosses itself: triangles {0} and {1} meet and share no vertex (an envelope \
         cannot avoid that)"
    )]
    InputCrosses(u32, u32),
}

fn corners(positions: &[Vec3], indices: &[u32], t: u32) -> Corners {
    [0, 1, 2].map(|k| positions[indices[3 * t as usize + k] as usize])
}

fn tri_box(c: &Corners) -> crate::distance::triangle::Aabb {
    [
        c[0].min(c[1]).min(c[2]).to_array(),
        c[0].max(c[1]).max(c[2]).to_array(),
    ]
}

/// One meeting: an envelope triangle and either an input triangle or another envelope one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meeting {
    Input(u32, u32),
    Envelope(u32, u32),
}

/// Every meeting of the envelope triangles `dirty` with the input and with the envelope.
fn meetings(
    input: &Mesh,
    input_tree: &Bvh,
    envelope: &[Vec3],
    envelope_tree: &Bvh,
    dirty: &[u32],
) -> Vec<Meeting> {
    let idx = &input.indices;
    let stays = |v: u32| envelope[v as usize] == input.positions[v as usize];
    dirty
        .par_iter()
        .flat_map_iter(|&e| {
            let ce = corners(envelope, idx, e);
            let ve = [0, 1, 2].map(|k| idx[3 * e as usize + k]);
            let b = tri_box(&ce);
            let mut found = Vec::new();
            input_tree.visit(&b, |u| {
                let vu = [0, 1, 2].map(|k| idx[3 * u as usize + k]);
                if ve.iter().any(|&v| stays(v) && vu.contains(&v)) {
                    return;
                }
                if triangles_meet(&ce, &corners(&input.positions, idx, u)) {
                    found.push(Meeting::Input(e, u));
                }
            });
            envelope_tree.visit(&b, |f| {
                let vf = [0, 1, 2].map(|k| idx[3 * f as usize + k]);
                if f == e || ve.iter().any(|v| vf.contains(v)) {
                    return;
                }
                if triangles_meet(&ce, &corners(envelope, idx, f)) {
                    found.push(Meeting::Envelope(e, f));
                }
            });
            found
        })
        .collect()
}

/// Makes `records` (the program's, one per vertex of `input`) an envelope that meets neither
/// the input nor itself (but where triangles share a vertex), moving vertices back towards the
/// input where it must. `input_tree` is the input's BVH.
pub fn repair(
    program: &SafeOffset,
    input: &Mesh,
    input_tree: &Bvh,
    records: &mut [Record],
) -> Result<Repaired, RepairError> {
    let idx = &input.indices;
    let mut env = input.clone();
    env.positions = records
        .iter()
        .map(|r| Vec3::new(r[0], r[1], r[2]))
        .collect();
    let mut tree = Bvh::of_checked(&env);
    let mut halved = vec![0u32; records.len()];
    let mut touched = vec![false; records.len()];
    let mut dirty: Vec<u32> = (0..input.triangle_count() as u32).collect();
    let mut done = Repaired::default();
    while !dirty.is_empty() {
        done.rounds += 1;
        let found = meetings(input, input_tree, &env.positions, &tree, &dirty);
        if found.is_empty() {
            break;
        }
        done.meetings += found.len() as u64;
        let mut moved: Vec<u32> = Vec::new();
        let stays = |v: u32| records[v as usize][7] == Limit::Pinned as u8 as f32;
        for m in &found {
            let (a, b) = match *m {
                Meeting::Input(e, u) => (e, u),
                Meeting::Envelope(e, f) => (e, f),
            };
            let mut tris = vec![a];
            if let Meeting::Envelope(..) = m {
                tris.push(b);
            }
            let verts: Vec<u32> = tris
                .iter()
                .flat_map(|&t| (0..3).map(move |k| idx[3 * t as usize + k]))
                .filter(|&v| !stays(v))
                .collect();
            if verts.is_empty() {
                return Err(RepairError::InputCrosses(a.min(b), a.max(b)));
            }
            moved.extend(verts);
        }
        moved.sort_unstable();
        moved.dedup();
        for &v in &moved {
            let r = &mut records[v as usize];
            touched[v as usize] = true;
            halved[v as usize] += 1;
            // (a vertex that moved has a direction: the program's, recomputed in full precision)
            *r = match program.direction(v) {
                Some(dir) if halved[v as usize] <= SHRINKS => {
                    program.record(v, dir, r[3] * 0.5, Limit::Blocked)
                }
                _ => program.pinned(v),
            };
            env.positions[v as usize] = Vec3::new(r[0], r[1], r[2]);
        }
        tree.refit(&env);
        let mut next: Vec<u32> = moved
            .iter()
            .flat_map(|&v| program.faces.corners_of(v as usize).iter().map(|c| c / 3))
            .collect();
        next.sort_unstable();
        next.dedup();
        dirty = next;
    }
    done.vertices = touched.iter().filter(|&&t| t).count() as u64;
    Ok(done)
}
