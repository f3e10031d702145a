//! The smoothing stage on the CPU: each step, patch by patch in parallel, every owned vertex's
//! weighted one-ring offset summed in double precision over the patch's local edges (uniform)
//! or faces (cotangent), in the order the GPU kernel visits them per thread.

use super::{Smooth, SmoothMethod};
use crate::patch::{Patch, PatchData};
use glam::{DVec3, Vec3};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// One step over patch `p`: the new positions of its owned vertices.
fn step_patch(p: &Patch, pos: &[Vec3], fixed: &[u8], s: &Smooth) -> Vec<Vec3> {
    let owned = p.owned_vertices as usize;
    let at = |l: u16| pos[p.vertices[l as usize] as usize].as_dvec3();
    // (weighted offset sum, weight sum) per owned vertex
    let mut acc = vec![(DVec3::ZERO, 0.0f64); owned];
    let mut add = |i: u16, pi: DVec3, pj: DVec3, w: f64| {
        if let Some(a) = acc.get_mut(i as usize) {
            a.0 += w * (pj - pi);
            a.1 += w;
        }
    };
    match s.method {
        SmoothMethod::Uniform => {
            for e in p.ev.chunks_exact(2) {
                let (a, b) = (e[0], e[1]);
                if a == b || (a as usize >= owned && b as usize >= owned) {
                    continue;
                }
                let (pa, pb) = (at(a), at(b));
                add(a, pa, pb, 1.0);
                add(b, pb, pa, 1.0);
            }
        }
        SmoothMethod::Cotangent => {
            for f in 0..p.faces.len() {
                let l = p.face_vertices(f);
                if l.iter().all(|&v| v as usize >= owned) {
                    continue;
                }
                let q = l.map(at);
                for k in 0..3 {
                    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                    let (a, b) = (q[i] - q[k], q[j] - q[k]);
                    let sin = a.cross(b).length();
                    if sin == 0.0 {
                        continue;
                    }
                    let w = 0.5 * a.dot(b) / sin;
                    add(l[i], q[i], q[j], w);
                    add(l[j], q[j], q[i], w);
                }
            }
        }
    }
    acc.iter()
        .zip(&p.vertices)
        .map(|(&(sum, w), &g)| {
            let x = pos[g as usize].as_dvec3();
            let scale = if fixed[g as usize] == 0 && w > 0.0 {
                s.lambda as f64 / w
            } else {
                0.0
            };
            (x + scale * sum).as_vec3()
        })
        .collect()
}

/// Runs `s` on `mesh` with the patch data of its index buffer and the fixed-vertex flags.
pub fn run(mesh: &mut Mesh, s: &Smooth, data: &PatchData, fixed: &[u8]) {
    let mut pos = mesh.positions.clone();
    for _ in 0..s.iterations {
        let moved: Vec<Vec<Vec3>> = data
            .patches
            .par_iter()
            .map(|p| step_patch(p, &pos, fixed, s))
            .collect();
        let mut next = pos.clone();
        for (p, m) in data.patches.iter().zip(moved) {
            for (&g, x) in p.vertices.iter().zip(m) {
                next[g as usize] = x;
            }
        }
        pos = next;
    }
    mesh.positions = pos;
}
