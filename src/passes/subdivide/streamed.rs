//! Loop subdivision on the geometry stage's strategies (Kenzel et al. 2018, section 5.1): each
//! level is seen from its output triangles. The next level's index buffer (every triangle split
//! in four, as [`super::cpu`] splits it) is the index stream; every output vertex (an input
//! vertex moved by its rule, or an edge's new vertex) is one run of [`LoopProgram`] through the
//! chosen strategy, so a vertex that a batch shares is computed once. The program walks the
//! vertex's ring of neighbours itself ([`Ring`], the level's adjacency): the per-vertex work the
//! strategies save. Here the strategies are the CPU's ([`crate::geometry::cpu::process`]); on
//! the GPU ([`super::cuda`]) the geometry stage's kernels in the processing mode run the same
//! program in CUDA C (kernels/programs/loop.cu), every level made on the device.
//!
//! The result equals the reference's ([`super::cpu`]) bit for bit whatever the strategy on the
//! CPU, and within float rounding on the GPU (bit for bit but where a vertex has more than
//! [`super::BETA_TABLE`] edges): the same rules, each neighbour sum added in the same (edge)
//! order, and a vertex's every run gives the same record, which is scattered back to its place.

use super::cpu::{edge_faces, edge_value, host_attributes, split, Rule};
use super::{beta, next_sizes, Edges, SubdivideError, BETA_TABLE};
use crate::geometry::cpu::{process, Program};
use crate::geometry::{GeometryStats, Strategy};
use glam::{Vec2, Vec3};
use rxpipe_core::mesh::Mesh;

/// One output vertex's record: position (3), uv (2), second uv (2), unused (1).
pub type Record = [f32; 8];

/// Every vertex's neighbours in edge order (an edge from a vertex to itself names none), each
/// marked where the edge between them is a crease (not exactly two triangles).
pub struct Ring {
    offsets: Vec<u32>,
    neighbours: Vec<(u32, bool)>,
}

impl Ring {
    /// The rings of `v` vertices joined by edges `ev` with `count` triangles each.
    pub fn build(v: usize, ev: &[[u32; 2]], count: &[u32]) -> Ring {
        let mut offsets = vec![0u32; v + 1];
        for &[a, b] in ev.iter().filter(|e| e[0] != e[1]) {
            offsets[a as usize + 1] += 1;
            offsets[b as usize + 1] += 1;
        }
        for i in 0..v {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut neighbours = vec![(0u32, false); offsets[v] as usize];
        for (&[a, b], &c) in ev.iter().zip(count) {
            if a == b {
                continue;
            }
            for (i, j) in [(a, b), (b, a)] {
                let at = &mut fill[i as usize];
                neighbours[*at as usize] = (j, c != 2);
                *at += 1;
            }
        }
        Ring {
            offsets,
            neighbours,
        }
    }

    fn of(&self, i: usize) -> &[(u32, bool)] {
        &self.neighbours[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Bytes the rings of `v` vertices and `e` edges take.
    pub fn bytes(v: usize, e: usize) -> u64 {
        4 * (v as u64 + 1) + 16 * e as u64
    }
}

/// The next level's vertex `id` by Loop's rules: for an old vertex (below `v`) its rule from its
/// ring (smooth, crease or corner), for an edge's vertex its ends and opposite corners. Reads the
/// level's positions and uvs, its edges and their triangles, and the rings.
pub struct LoopProgram<'a> {
    pub positions: &'a [Vec3],
    pub uvs: Option<&'a [Vec2]>,
    pub uvs1: Option<&'a [Vec2]>,
    pub ev: &'a [[u32; 2]],
    pub count: &'a [u32],
    pub opposite: &'a [[u32; 2]],
    pub ring: &'a Ring,
    pub betas: &'a [f64],
    pub cos_corner: f64,
}

impl LoopProgram<'_> {
    /// Old vertex `i`'s rule, from its ring (the reference's: its edges, and the first two of
    /// its crease edges, in edge order).
    fn rule(&self, i: usize) -> Rule {
        let ring = self.ring.of(i);
        let (mut creases, mut ends) = (0u32, [u32::MAX; 2]);
        for &(j, crease) in ring {
            if crease {
                if creases < 2 {
                    ends[creases as usize] = j;
                }
                creases += 1;
            }
        }
        Rule::of(
            self.positions,
            i,
            ring.len() as u32,
            creases,
            ends,
            self.cos_corner,
        )
    }

    /// Attribute `x` (`D` floats a vertex) of old vertex `i` under `rule`, into `out`; the
    /// neighbours' sum walks the ring in edge order, as the reference adds it.
    fn old<const D: usize>(&self, x: &[[f32; D]], i: usize, rule: Rule, out: &mut [f32]) {
        let at = |k: u32| x[k as usize].map(f64::from);
        let sum = || {
            let mut s = [0f64; D];
            for &(j, _) in self.ring.of(i) {
                let xj = at(j);
                for d in 0..D {
                    s[d] += xj[d];
                }
            }
            s
        };
        out[..D].copy_from_slice(&rule.apply(x[i], sum, at, self.betas));
    }

    /// Attribute `x` of edge `e`'s new vertex, into `out`.
    fn edge<const D: usize>(&self, x: &[[f32; D]], e: usize, out: &mut [f32]) {
        let at = |k: u32| x[k as usize].map(f64::from);
        let v = edge_value(at, self.ev[e], self.count[e], self.opposite[e]);
        out[..D].copy_from_slice(&v);
    }
}

fn floats2(v: &[Vec2]) -> &[[f32; 2]] {
    bytemuck::cast_slice(v)
}

impl Program for LoopProgram<'_> {
    type Out = Record;

    fn run(&self, id: u32) -> Record {
        let mut r = [0f32; 8];
        let v = self.positions.len();
        let p: &[[f32; 3]] = bytemuck::cast_slice(self.positions);
        let i = id as usize;
        if i < v {
            let rule = self.rule(i);
            self.old(p, i, rule, &mut r[0..3]);
            if let Some(u) = self.uvs {
                self.old(floats2(u), i, rule, &mut r[3..5]);
            }
            if let Some(u) = self.uvs1 {
                self.old(floats2(u), i, rule, &mut r[5..7]);
            }
        } else {
            let e = i - v;
            self.edge(p, e, &mut r[0..3]);
            if let Some(u) = self.uvs {
                self.edge(floats2(u), e, &mut r[3..5]);
            }
            if let Some(u) = self.uvs1 {
                self.edge(floats2(u), e, &mut r[5..7]);
            }
        }
        r
    }
}

/// Bytes one level holds at its peak beside the mesh: the rings, the edges' triangle counts and
/// opposite corners, the streamed records (one per run, with its source: at most three per new
/// triangle corner, naive's) and the scattered ones.
pub fn level_bytes(v: usize, e: usize, f2: usize) -> u64 {
    Ring::bytes(v, e) + 12 * e as u64 + 36 * 3 * f2 as u64 + 12 * f2 as u64 + 32 * (v + e) as u64
}

/// Subdivides `mesh` `levels` times through `strategy` on the CPU; `edges` are its edges,
/// `cos_corner` the cosine of the corner angle. Returns how many crease edges the input has and
/// the strategy's counts over all levels.
pub fn run(
    mesh: &mut Mesh,
    levels: u32,
    mut edges: Edges,
    cos_corner: f64,
    strategy: Strategy,
) -> Result<(usize, GeometryStats), SubdivideError> {
    let betas: Vec<f64> = (0..=BETA_TABLE).map(beta).collect();
    let mut input_creases = 0;
    let mut stats = GeometryStats::default();
    for level in 1..=levels {
        let (v, e, f) = (mesh.positions.len(), edges.ev.len(), mesh.indices.len() / 3);
        let (v2, e2, f2) = next_sizes(v, e, f).ok_or(SubdivideError::TooLarge { level })?;
        rxpipe_core::limits::check_host(
            super::cpu::level_bytes(mesh, v2, e2, f2) + level_bytes(v, e, f2),
            || format!("subdivision level {level} ({f2} triangles)"),
        )?;
        let (count, opposite) = edge_faces(&mesh.indices, &edges);
        if level == 1 {
            input_creases = count.iter().filter(|&&n| n != 2).count();
        }
        let ring = Ring::build(v, &edges.ev, &count);
        let (tris, next_edges) = split(&mesh.indices, &edges, v as u32);
        let program = LoopProgram {
            positions: &mesh.positions,
            uvs: mesh.uvs.as_deref(),
            uvs1: mesh.uvs1.as_deref(),
            ev: &edges.ev,
            count: &count,
            opposite: &opposite,
            ring: &ring,
            betas: &betas,
            cos_corner,
        };
        let mut records = vec![[0f32; 8]; v2];
        let mut ran = vec![false; v2];
        let streamed = process(strategy, v2, &tris, None, &program)
            .map_err(|e| SubdivideError::Device(e.to_string()))?;
        stats.add(&streamed.stats);
        streamed.scatter(&mut records);
        for &s in &streamed.sources {
            ran[s as usize] = true;
        }
        // a vertex no new triangle names (an old one that none named, the vertex of a
        // duplicate edge that degenerate triangles leave) is no primitive's: it runs once here,
        // outside the strategies and their counts, so that the mesh is the reference's
        for (id, r) in records.iter_mut().enumerate().filter(|(id, _)| !ran[*id]) {
            *r = program.run(id as u32);
        }
        mesh.positions = records
            .iter()
            .map(|r| Vec3::new(r[0], r[1], r[2]))
            .collect();
        if let Some(u) = mesh.uvs.as_mut() {
            *u = records.iter().map(|r| Vec2::new(r[3], r[4])).collect();
        }
        if let Some(u) = mesh.uvs1.as_mut() {
            *u = records.iter().map(|r| Vec2::new(r[5], r[6])).collect();
        }
        host_attributes(&mut mesh.colors, &mut mesh.tangents, &edges.ev);
        mesh.indices = tris;
        mesh.normals = None;
        edges = next_edges;
    }
    Ok((input_creases, stats))
}
