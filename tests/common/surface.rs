//! Surfaces for the simplification tests: noise, size, and a brute-force distance between two
//! meshes written for the tests.

use glam::DVec3;
use rxpipe::Mesh;

/// The squared distance from `p` to triangle `t`, written for this test: the point projected
/// on the plane when that lands inside, else the nearest point of the three edges.
pub fn dist2(p: DVec3, t: &[DVec3; 3]) -> f64 {
    let seg = |a: DVec3, b: DVec3| {
        let d = b - a;
        let s = if d.length_squared() > 0.0 {
            ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (a + d * s).distance_squared(p)
    };
    let edges = seg(t[0], t[1]).min(seg(t[1], t[2])).min(seg(t[2], t[0]));
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    if n.length_squared() == 0.0 {
        return edges;
    }
    let q = p - n * ((p - t[0]).dot(n) / n.length_squared());
    // barycentric signs of the projection
    let inside = (0..3).all(|k| (t[(k + 1) % 3] - t[k]).cross(q - t[k]).dot(n) >= 0.0);
    if inside {
        q.distance_squared(p)
    } else {
        edges
    }
}

pub fn triangles(m: &Mesh) -> Vec<[DVec3; 3]> {
    m.indices
        .chunks_exact(3)
        .map(|c| [0, 1, 2].map(|k| m.positions[c[k] as usize].as_dvec3()))
        .collect()
}

/// The greatest distance from a dense sample of `from`'s triangles (a barycentric grid of 66
/// points each: corners, edges and inside) to the nearest triangle of `to`, by brute force.
pub fn sampled_distance(from: &Mesh, to: &Mesh) -> f64 {
    use rayon::prelude::*;
    let to = triangles(to);
    const N: usize = 10;
    triangles(from)
        .par_iter()
        .map(|t| {
            let mut worst = 0.0f64;
            for i in 0..=N {
                for j in 0..=N - i {
                    let (a, b) = (i as f64 / N as f64, j as f64 / N as f64);
                    let p = t[0] * (1.0 - a - b) + t[1] * a + t[2] * b;
                    let d = to.iter().map(|u| dist2(p, u)).fold(f64::INFINITY, f64::min);
                    worst = worst.max(d);
                }
            }
            worst.sqrt()
        })
        .reduce(|| 0.0, f64::max)
}

pub fn diagonal(m: &Mesh) -> f64 {
    let (lo, hi) = m.bounds().unwrap();
    (hi - lo).as_dvec3().length()
}

/// Moves every vertex along its direction from the origin by up to `amount` of its length,
/// pseudo-randomly (a scan's noise: a surface with no two faces in one plane).
pub fn roughen(mut m: Mesh, amount: f32, seed: u32) -> Mesh {
    let mut state = seed;
    for p in &mut m.positions {
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        *p *= 1.0 + amount * ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5);
    }
    m.normals = None;
    m
}
