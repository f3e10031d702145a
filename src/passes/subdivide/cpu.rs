//! Loop subdivision on the CPU: the reference. Each level counts the triangles of every edge,
//! finds every old vertex's rule (smooth, crease or corner), sums every vertex's neighbours in
//! edge order, computes the new positions and texture coordinates with the same rules (edges
//! and vertices in parallel) and splits every triangle in four, its new edges following from the
//! old ones.

use super::{beta, beta_of, next_sizes, split_triangle, Edges, SubdivideError, BETA_TABLE};
use glam::{DVec3, Vec3, Vec4};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// Per edge: how many triangles have it, and the corners opposite it in the first two.
pub(crate) fn edge_faces(indices: &[u32], edges: &Edges) -> (Vec<u32>, Vec<[u32; 2]>) {
    let mut count = vec![0u32; edges.ev.len()];
    let mut opposite = vec![[u32::MAX; 2]; edges.ev.len()];
    for (t, fe) in indices.chunks_exact(3).zip(&edges.fe) {
        for k in 0..3 {
            let x = fe[k] as usize;
            if count[x] < 2 {
                opposite[x][count[x] as usize] = t[(k + 2) % 3];
            }
            count[x] += 1;
        }
    }
    (count, opposite)
}

/// What an old vertex does at the next level: Loop's smooth rule over its `n` neighbours, the
/// crease rule with its two crease neighbours, or stay (no edge, or a corner). Both CPU paths
/// (the edge sums here and the strategies' program, [`super::streamed`]) take their values
/// through it and [`edge_value`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Rule {
    Smooth { n: u32 },
    Crease { a: u32, b: u32 },
    Keep,
}

impl Rule {
    /// The rule of vertex `i` (of positions `p`) with `n` edges, `creases` of them crease edges,
    /// the first two ending at `ends`: a vertex on two creases that meet at an angle whose cosine
    /// is above `cos_corner` is a corner (the same operations as the kernel's).
    #[inline]
    pub(crate) fn of(
        p: &[Vec3],
        i: usize,
        n: u32,
        creases: u32,
        ends: [u32; 2],
        cos_corner: f64,
    ) -> Rule {
        match creases {
            0 if n > 0 => Rule::Smooth { n },
            2 => {
                let at = |k: u32| p[k as usize].as_dvec3();
                let [a, b] = ends;
                let x: DVec3 = p[i].as_dvec3();
                let (u, w) = (at(a) - x, at(b) - x);
                if u.dot(w) > cos_corner * (u.dot(u) * w.dot(w)).sqrt() {
                    Rule::Keep
                } else {
                    Rule::Crease { a, b }
                }
            }
            _ => Rule::Keep,
        }
    }

    /// The next level's value of an attribute of `D` floats at a vertex whose value is `v`,
    /// under this rule: `sum` gives its neighbours' sum (asked for the smooth rule only), `at`
    /// any vertex's value; in double precision, rounded once.
    #[inline]
    pub(crate) fn apply<const D: usize>(
        self,
        v: [f32; D],
        sum: impl FnOnce() -> [f64; D],
        at: impl Fn(u32) -> [f64; D],
        betas: &[f64],
    ) -> [f32; D] {
        match self {
            Rule::Smooth { n } => {
                let (s, beta) = (sum(), beta_of(betas, n));
                std::array::from_fn(|d| {
                    (v[d] as f64 * (1.0 - n as f64 * beta) + s[d] * beta) as f32
                })
            }
            Rule::Crease { a, b } => {
                let (xa, xb) = (at(a), at(b));
                std::array::from_fn(|d| (v[d] as f64 * 0.75 + (xa[d] + xb[d]) * 0.125) as f32)
            }
            Rule::Keep => v,
        }
    }
}

/// The value of an attribute of `D` floats at the new vertex of the edge joining `ends`, with
/// `count` triangles and (with two) the opposite corners `opposite`: 3/8 of its ends and 1/8 of
/// the opposite corners, else the midpoint; `at` gives any vertex's value.
#[inline]
pub(crate) fn edge_value<const D: usize>(
    at: impl Fn(u32) -> [f64; D],
    [a, b]: [u32; 2],
    count: u32,
    [o0, o1]: [u32; 2],
) -> [f32; D] {
    let (xa, xb) = (at(a), at(b));
    if count == 2 {
        let (xc, xd) = (at(o0), at(o1));
        std::array::from_fn(|d| ((xa[d] + xb[d]) * 0.375 + (xc[d] + xd[d]) * 0.125) as f32)
    } else {
        std::array::from_fn(|d| ((xa[d] + xb[d]) * 0.5) as f32)
    }
}

/// Every old vertex's rule, from the edges (`count`: each edge's triangles) and the positions
/// (which decide the corners).
fn rules(p: &[Vec3], ev: &[[u32; 2]], count: &[u32], cos_corner: f64) -> Vec<Rule> {
    // per vertex: edges, crease edges, the far ends of the first two crease edges
    let mut ring = vec![(0u32, 0u32, [u32::MAX; 2]); p.len()];
    for (&[a, b], &c) in ev.iter().zip(count) {
        if a == b {
            continue;
        }
        for (i, j) in [(a, b), (b, a)] {
            let r = &mut ring[i as usize];
            r.0 += 1;
            if c != 2 {
                if r.1 < 2 {
                    r.2[r.1 as usize] = j;
                }
                r.1 += 1;
            }
        }
    }
    ring.par_iter()
        .enumerate()
        .map(|(i, &(n, creases, ends))| Rule::of(p, i, n, creases, ends, cos_corner))
        .collect()
}

/// The next level of a per-vertex attribute of `D` floats (positions, texture coordinates): the
/// old vertices by their rules, then one value per edge ([`edge_value`]), in double precision,
/// rounded once.
fn loop_values<const D: usize>(
    x: &[[f32; D]],
    rules: &[Rule],
    ev: &[[u32; 2]],
    count: &[u32],
    opposite: &[[u32; 2]],
    betas: &[f64],
) -> Vec<[f32; D]> {
    let at = |i: u32| x[i as usize].map(f64::from);
    // each vertex's neighbours' sum, in edge order
    let mut sum = vec![[0f64; D]; x.len()];
    for &[a, b] in ev {
        if a != b {
            let (xa, xb) = (at(a), at(b));
            for d in 0..D {
                sum[a as usize][d] += xb[d];
                sum[b as usize][d] += xa[d];
            }
        }
    }
    let mut out = Vec::with_capacity(x.len() + ev.len());
    out.par_extend(
        x.par_iter()
            .zip(rules)
            .zip(&sum)
            .map(|((&v, &rule), &s)| rule.apply(v, || s, at, betas)),
    );
    out.par_extend(
        ev.par_iter()
            .zip(count)
            .zip(opposite)
            .map(|((&e, &c), &o)| edge_value(at, e, c, o)),
    );
    out
}

/// The triangles and edges of the next level of `indices` with `edges` (on `v` vertices).
pub(crate) fn split(indices: &[u32], edges: &Edges, v: u32) -> (Vec<u32>, Edges) {
    let e = edges.ev.len() as u32;
    let f = indices.len() / 3;
    let mut ev = vec![[0u32; 2]; 2 * e as usize + 3 * f];
    let (halves, inside) = ev.split_at_mut(2 * e as usize);
    halves
        .par_chunks_exact_mut(2)
        .zip(&edges.ev)
        .enumerate()
        .for_each(|(x, (h, &[a, b]))| {
            let m = v + x as u32;
            h[0] = [a, m];
            h[1] = [m, b];
        });
    let mut tris = vec![0u32; 12 * f];
    let mut fe = vec![[0u32; 3]; 4 * f];
    tris.par_chunks_exact_mut(12)
        .zip(fe.par_chunks_exact_mut(4))
        .zip(inside.par_chunks_exact_mut(3))
        .enumerate()
        .for_each(|(fi, ((t, fe2), ins))| {
            let c = [indices[3 * fi], indices[3 * fi + 1], indices[3 * fi + 2]];
            let s = split_triangle(fi, v, e, c, edges.fe[fi], &edges.ev);
            for k in 0..4 {
                t[3 * k..3 * k + 3].copy_from_slice(&s.triangles[k]);
                fe2[k] = s.edges[k];
            }
            ins.copy_from_slice(&s.inside);
        });
    (tris, Edges { ev, fe })
}

/// The mean of each edge's ends' attribute, after the old vertices' own.
fn midpoints<T: Copy + Send + Sync>(
    old: &[T],
    ev: &[[u32; 2]],
    mean: impl Fn(T, T) -> T + Sync,
) -> Vec<T> {
    let mut out = Vec::with_capacity(old.len() + ev.len());
    out.extend_from_slice(old);
    out.par_extend(
        ev.par_iter()
            .map(|&[a, b]| mean(old[a as usize], old[b as usize])),
    );
    out
}

pub(crate) fn color_mean(a: Vec4, b: Vec4) -> Vec4 {
    (a + b) * 0.5
}

/// Tangents: the mean direction (unit length; zero, meaning none, where they cancel), with the
/// first end's handedness.
pub(crate) fn tangent_mean(a: Vec4, b: Vec4) -> Vec4 {
    (a.truncate() + b.truncate())
        .normalize_or_zero()
        .extend(a.w)
}

/// The host-side attributes (vertex colours, tangents) of the next level, for edges `ev`.
pub(crate) fn host_attributes(
    colors: &mut Option<Vec<Vec4>>,
    tangents: &mut Option<Vec<Vec4>>,
    ev: &[[u32; 2]],
) {
    if let Some(c) = colors.as_mut() {
        *c = midpoints(c, ev, color_mean);
    }
    if let Some(t) = tangents.as_mut() {
        *t = midpoints(t, ev, tangent_mean);
    }
}

/// Bytes one level of a mesh of `v2` vertices, `e2` edges and `f2` triangles holds at its peak
/// (the new arrays beside the old ones), attributes included.
pub(crate) fn level_bytes(m: &Mesh, v2: usize, e2: usize, f2: usize) -> u64 {
    // per vertex: the position, its old vertex's ring (16) and rule (12) and neighbour sum (24);
    // uvs with their sums; colours and tangents
    let per_vertex = 12
        + 16
        + 12
        + 24
        + if m.uvs.is_some() { 8 + 16 } else { 0 }
        + if m.uvs1.is_some() { 8 + 16 } else { 0 }
        + if m.colors.is_some() { 16 } else { 0 }
        + if m.tangents.is_some() { 16 } else { 0 };
    // per edge: its ends, and the old edges' triangle counts and opposite corners (12)
    (per_vertex * v2 + 8 * e2 + 12 * e2 + 24 * f2) as u64
}

/// Subdivides `mesh` `levels` times; `edges` are its edges, `cos_corner` the cosine of the
/// corner angle. Returns how many crease edges the input has.
pub fn run(
    mesh: &mut Mesh,
    levels: u32,
    mut edges: Edges,
    cos_corner: f64,
) -> Result<usize, SubdivideError> {
    let betas: Vec<f64> = (0..=BETA_TABLE).map(beta).collect();
    let betas = &betas[..];
    let mut input_creases = 0;
    for level in 1..=levels {
        let (v, e, f) = (mesh.positions.len(), edges.ev.len(), mesh.indices.len() / 3);
        let (v2, e2, f2) = next_sizes(v, e, f).ok_or(SubdivideError::TooLarge { level })?;
        rxpipe_core::limits::check_host(level_bytes(mesh, v2, e2, f2), || {
            format!("subdivision level {level} ({f2} triangles)")
        })?;
        let (count, opposite) = edge_faces(&mesh.indices, &edges);
        if level == 1 {
            input_creases = count.iter().filter(|&&n| n != 2).count();
        }
        let rules = rules(&mesh.positions, &edges.ev, &count, cos_corner);
        let next: Vec<[f32; 3]> = loop_values(
            bytemuck::cast_slice(&mesh.positions),
            &rules,
            &edges.ev,
            &count,
            &opposite,
            betas,
        );
        mesh.positions = bytemuck::cast_slice(&next).to_vec();
        drop(next);
        for uv in [mesh.uvs.as_mut(), mesh.uvs1.as_mut()]
            .into_iter()
            .flatten()
        {
            let next: Vec<[f32; 2]> = loop_values(
                bytemuck::cast_slice(uv),
                &rules,
                &edges.ev,
                &count,
                &opposite,
                betas,
            );
            *uv = bytemuck::cast_slice(&next).to_vec();
        }
        host_attributes(&mut mesh.colors, &mut mesh.tangents, &edges.ev);
        let (tris, next_edges) = split(&mesh.indices, &edges, v as u32);
        mesh.indices = tris;
        mesh.normals = None;
        edges = next_edges;
    }
    Ok(input_creases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_levels_edges_are_its_triangles_edges() {
        for m in [
            rxpipe_core::mesh::torus(1.0, 0.3, 12, 8),
            rxpipe_core::mesh::grid(5, 4),
        ] {
            let mut indices = m.indices.clone();
            let mut edges = Edges::build(&indices);
            let mut v = m.positions.len() as u32;
            for level in 1..=3 {
                let (t, e) = split(&indices, &edges, v);
                v += edges.ev.len() as u32;
                for (f, (tri, fe)) in t.chunks_exact(3).zip(&e.fe).enumerate() {
                    for k in 0..3 {
                        let [a, b] = e.ev[fe[k] as usize];
                        let (x, y) = (tri[k], tri[(k + 1) % 3]);
                        assert!(
                            [a, b] == [x, y] || [a, b] == [y, x],
                            "level {level} triangle {f} edge {k}"
                        );
                    }
                }
                // no pair of vertices joined twice: as many edges as a fresh build finds
                assert_eq!(Edges::build(&t).ev.len(), e.ev.len(), "level {level}");
                assert!(e.ev.iter().flatten().all(|&x| x < v));
                (indices, edges) = (t, e);
            }
        }
    }
}
