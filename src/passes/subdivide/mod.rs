//! The subdivision stage: Loop subdivision (Charles Loop, 1987), `levels` times. Every triangle
//! becomes four; every edge gets a new vertex, every old vertex moves; the surface converges to a
//! smooth limit surface (C2 but at extraordinary vertices).
//!
//! The rules, each position computed in double precision and rounded to float once:
//!
//! - **edge vertex**: an edge with exactly two faces takes 3/8 of its ends and 1/8 of the two
//!   opposite corners; any other edge (a boundary, a non-manifold edge) is a crease and takes
//!   the midpoint of its ends;
//! - **old vertex** on no crease, with n edges: (1 - n beta) itself plus beta times the sum of its
//!   neighbours, with Loop's beta = (5/8 - (3/8 + cos(2 pi / n) / 4)^2) / n; on exactly two crease
//!   edges: 3/4 itself and 1/8 each of the two crease neighbours (the boundary curve is
//!   subdivided as a cubic B-spline), unless the two creases meet at less than the `corner`
//!   angle (120 degrees by default: the corners of a square stay, a hexagon's are smoothed);
//!   on one or more than two crease edges: a corner, it stays.
//!
//! So a smooth scan's open border is smoothed with it, while a model whose faces were split at
//! its hard edges (a cube with a normal per face: six separate squares) keeps its edges and
//! corners.
//!
//! Texture coordinates (both sets, where a mesh has two) take the positions' rules, vertex by
//! vertex (a uv seam, where the re-indexed mesh has two vertices, is a crease on each side):
//! where the uvs are an affine function of the position, as on a textured flat wall or floor,
//! they stay so, and the texture does not swim over a surface that smoothing moves within its
//! plane. Vertex colours and tangents of an edge vertex are the mean of its ends'; the normals
//! are dropped and recomputed by the normals stage. Triangles keep their order and orientation:
//! triangle f becomes triangles 4f to 4f + 3.
//!
//! The input's edges are numbered in the order the index buffer first names them ([`Edges`]: a
//! sort on the CPU, a hash table and a scan on the GPU); each level's new edges follow from the
//! old ones without a search (each edge splits in two, each triangle adds three inside), on the
//! CPU ([`cpu`]) and on the GPU ([`cuda`], kernels/subdivide.cu) alike. Both compute the same
//! values; the sums at a vertex are added in another order on the GPU (exact in double precision
//! unless the coordinates span more than about 2^29), and Loop's weight of a vertex of more than
//! [`BETA_TABLE`] edges uses each side's cosine, so the two agree bit for bit on ordinary meshes
//! and within float rounding always.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod streamed;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use rayon::prelude::*;
use rxpipe_core::execution::BackendKind;

/// The subdivision stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subdivide {
    /// how many times every triangle is split in four
    pub levels: u32,
    /// a vertex where two crease edges meet at less than this angle (degrees) is a corner and
    /// stays where it is (0: none)
    pub corner: f32,
    /// where given, every level runs on the geometry stage's strategies ([`streamed`]: each new
    /// vertex one run of Loop's rules through this strategy, the same result); `None`: the
    /// stage's own kernels, on the edges
    pub strategy: Option<crate::geometry::Strategy>,
}

impl Default for Subdivide {
    fn default() -> Self {
        Subdivide {
            levels: 1,
            corner: 120.0,
            strategy: None,
        }
    }
}

/// The most levels the argument accepts (each multiplies the triangles by four; the last level's
/// size and memory are checked before the first).
pub const MAX_LEVELS: u32 = 10;

pub(crate) const INFO: StageInfo = StageInfo {
    name: "subdivide",
    kind: StageKind::Mesh,
    about: "Loop subdivision: every triangle split in four per level, the surface smoothed (boundaries and non-manifold edges kept as creases)",
    args: &[
        ArgInfo {
            name: "levels",
            values: "0..=10",
            default: "1",
            about: "how many times every triangle is split in four",
        },
        ArgInfo {
            name: "corner",
            values: "0..=180",
            default: "120",
            about: "degrees: where two crease edges (boundaries, non-manifold edges) meet at less, the vertex stays",
        },
        ArgInfo {
            name: "strategy",
            values: "naive, warp, sort, hash, phash, multi, patch",
            default: "none",
            about: "run each level on the geometry stage's strategies (every new vertex one run of Loop's rules through it; the same result)",
        },
    ],
    backends: &[BackendKind::Cpu, BackendKind::Cuda],
    default: "only when listed",
};

impl Subdivide {
    pub(crate) fn from_args(a: &Args) -> Result<Subdivide, PassError> {
        let d = Subdivide::default();
        let bad = |arg: String, message: String| PassError::Argument {
            stage: "subdivide".into(),
            arg,
            message,
        };
        let levels = match a.get("levels") {
            None => d.levels,
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|&n| n <= MAX_LEVELS)
                .ok_or_else(|| bad(format!("levels={v}"), format!("expected 0 to {MAX_LEVELS}")))?,
        };
        let corner = match a.get("corner") {
            None => d.corner,
            Some(v) => v
                .parse::<f32>()
                .ok()
                .filter(|c| (0.0..=180.0).contains(c))
                .ok_or_else(|| {
                    bad(
                        format!("corner={v}"),
                        "expected an angle from 0 to 180 degrees".into(),
                    )
                })?,
        };
        let strategy = a.strategy()?;
        Ok(Subdivide {
            levels,
            corner,
            strategy,
        })
    }
}

/// The edges of a triangle mesh: each edge's two vertices, and each triangle's three edges in
/// corner order (edge k joins corners k and k + 1, k + 1 taken modulo 3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Edges {
    pub ev: Vec<[u32; 2]>,
    pub fe: Vec<[u32; 3]>,
}

impl Edges {
    /// The edges of `indices`: one per unordered pair of vertices that a triangle joins (the
    /// smaller vertex first), numbered in the order the index buffer first names them (corner c
    /// of triangle c / 3 names the edge to the next corner), as the GPU numbers them. A
    /// degenerate triangle joins a vertex to itself: that is an edge too, so every triangle has
    /// three.
    pub fn build(indices: &[u32]) -> Edges {
        let n = indices.len() / 3 * 3;
        let key = |c: usize| {
            let (a, b) = (indices[c], indices[c / 3 * 3 + (c % 3 + 1) % 3]);
            (a.min(b) as u64) << 32 | a.max(b) as u64
        };
        let mut keys: Vec<(u64, u32)> =
            (0..n).into_par_iter().map(|c| (key(c), c as u32)).collect();
        keys.par_sort_unstable();
        // each corner's edge's first corner (the first of its run: the runs are sorted by corner)
        let mut first = vec![0u32; n];
        let mut is_first = vec![false; n];
        for run in keys.chunk_by(|a, b| a.0 == b.0) {
            let f = run[0].1;
            is_first[f as usize] = true;
            for &(_, c) in run {
                first[c as usize] = f;
            }
        }
        drop(keys);
        let mut id = vec![0u32; n];
        let mut ev: Vec<[u32; 2]> = Vec::new();
        for c in (0..n).filter(|&c| is_first[c]) {
            id[c] = ev.len() as u32;
            let k = key(c);
            ev.push([(k >> 32) as u32, k as u32]);
        }
        let fe = (0..n / 3)
            .map(|t| std::array::from_fn(|k| id[first[3 * t + k] as usize]))
            .collect();
        Edges { ev, fe }
    }
}

/// The sizes after one level of a mesh of `v` vertices, `e` edges and `f` triangles: vertices,
/// edges, triangles; `None` when one would not fit a 32-bit index.
pub fn next_sizes(v: usize, e: usize, f: usize) -> Option<(usize, usize, usize)> {
    let (v2, e2, f2) = (v + e, 2 * e + 3 * f, 4 * f);
    let fits = |n: usize| n <= u32::MAX as usize;
    (fits(v2) && fits(e2) && fits(3 * f2)).then_some((v2, e2, f2))
}

/// The sizes (vertices, edges, triangles) of the last of `levels` levels of a mesh of `v`
/// vertices, `e` edges and `f` triangles, and the level at which one first would not fit a
/// 32-bit index.
pub fn last_level_sizes(
    v: usize,
    e: usize,
    f: usize,
    levels: u32,
) -> Result<(usize, usize, usize), u32> {
    (1..=levels).try_fold((v, e, f), |(v, e, f), level| {
        next_sizes(v, e, f).ok_or(level)
    })
}

/// Loop's weight of each neighbour of a vertex with `n` edges: (5/8 - (3/8 + cos(2 pi / n) /
/// 4)^2) / n (0 for n = 0).
pub fn beta(n: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    let c = 0.375 + 0.25 * (2.0 * std::f64::consts::PI / n).cos();
    (0.625 - c * c) / n
}

/// Up to how many edges at a vertex both backends take Loop's weight from the host's [`beta`]
/// (the GPU from a table of them); past it each works it out with its own cosine.
pub const BETA_TABLE: u32 = 1024;

/// Loop's weight of a vertex of `n` edges, as both backends take it ([`BETA_TABLE`]).
#[inline]
pub(crate) fn beta_of(table: &[f64], n: u32) -> f64 {
    table.get(n as usize).copied().unwrap_or_else(|| beta(n))
}

/// Why a level could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SubdivideError {
    #[error("level {level} would have more than 2^32 - 1 vertices, edges or indices")]
    TooLarge { level: u32 },
    #[error(transparent)]
    Memory(#[from] rxpipe_core::limits::OutOfMemory),
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    #[error("{0}")]
    Device(String),
}

/// What one triangle becomes at the next level: four triangles (corners), their edges (three
/// each, in corner order), and the vertices of the three new edges inside it.
pub(crate) struct Split {
    pub triangles: [[u32; 3]; 4],
    pub edges: [[u32; 3]; 4],
    pub inside: [[u32; 2]; 3],
}

/// Triangle `f` split in four ([`Split`]): `v` and `e` are the old vertex and edge counts, `t`
/// the triangle's corners, `fe` its edges, `ev` the old edges. Edge x's new vertex is v + x; its
/// halves are edges 2x (from its first end) and 2x + 1; triangle f's inside edges are 2e + 3f
/// to 2e + 3f + 2.
#[inline]
pub(crate) fn split_triangle(
    f: usize,
    v: u32,
    e: u32,
    t: [u32; 3],
    fe: [u32; 3],
    ev: &[[u32; 2]],
) -> Split {
    let [a, b, c] = t;
    let m = fe.map(|x| v + x);
    // the half of old edge x that ends at corner y: the first half starts at the edge's first end
    let half = |x: u32, y: u32| {
        if ev[x as usize][0] == y {
            2 * x
        } else {
            2 * x + 1
        }
    };
    let inside = 2 * e + 3 * f as u32;
    let (i0, i1, i2) = (inside, inside + 1, inside + 2);
    let tris = [
        [a, m[0], m[2]],
        [m[0], b, m[1]],
        [m[2], m[1], c],
        [m[0], m[1], m[2]],
    ];
    let edges = [
        [half(fe[0], a), i0, half(fe[2], a)],
        [half(fe[0], b), half(fe[1], b), i1],
        [i2, half(fe[1], c), half(fe[2], c)],
        [i1, i2, i0],
    ];
    Split {
        triangles: tris,
        edges,
        inside: [[m[0], m[2]], [m[0], m[1]], [m[1], m[2]]],
    }
}

impl MeshPass for Subdivide {
    fn name(&self) -> &str {
        "subdivide"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn invalidates(&self) -> Derived {
        Derived::ALL
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        let (v0, f0) = (mesh.vertex_count(), mesh.triangle_count());
        if self.levels == 0 || f0 == 0 {
            return Ok(format!(
                "nothing to do ({} levels, {f0} triangles)",
                self.levels
            ));
        }
        let (object, name) = (ctx.object, mesh.name().to_string());
        let failed = |message: String| PassError::Failed {
            stage: "subdivide".into(),
            object,
            mesh: name.clone(),
            message,
        };
        let cos_corner = (self.corner as f64).to_radians().cos();
        let mut counted: Option<(
            crate::geometry::Strategy,
            crate::geometry::GeometryStats,
            Option<f64>,
        )> = None;
        let creases = match (ctx.backend, ctx.gpu) {
            #[cfg(feature = "cuda")]
            (BackendKind::Cuda, Some(gpu)) => {
                let (creases, runs) = cuda::run(gpu, mesh, self.levels, cos_corner, self.strategy)
                    .map_err(|e| failed(e.to_string()))?;
                counted = self
                    .strategy
                    .zip(runs)
                    .map(|(s, (st, ms))| (s, st, Some(ms)));
                creases
            }
            _ => {
                // the input's edges; every level's sizes and the last one's memory, first
                let host = mesh.host().map_err(PassError::gpu("subdivide"))?;
                let bytes = 24 * host.indices.len() as u64 + 12 * (f0 as u64);
                rxpipe_core::limits::check_host(bytes, || "the edge table".into())
                    .map_err(|e| failed(e.to_string()))?;
                let edges = Edges::build(&host.indices);
                let (v2, e2, f2) = last_level_sizes(v0, edges.ev.len(), f0, self.levels)
                    .map_err(|level| failed(SubdivideError::TooLarge { level }.to_string()))?;
                rxpipe_core::limits::check_host(cpu::level_bytes(host, v2, e2, f2), || {
                    format!("subdivision level {} ({f2} triangles)", self.levels)
                })
                .map_err(|e| failed(e.to_string()))?;
                let host = mesh.host_mut().map_err(PassError::gpu("subdivide"))?;
                match self.strategy {
                    None => cpu::run(host, self.levels, edges, cos_corner),
                    Some(s) => streamed::run(host, self.levels, edges, cos_corner, s).map(
                        |(creases, stats)| {
                            counted = Some((s, stats, None));
                            creases
                        },
                    ),
                }
                .map_err(|e| failed(e.to_string()))?
            }
        };
        let runs = match counted {
            Some((s, st, ms)) => format!(
                "; {} runs of Loop's rules through {s} ({:.3} a triangle, the least {:.3}){}",
                st.invocations,
                st.asr(),
                st.ideal_asr(),
                ms.map_or(String::new(), |ms| format!("; its kernels {ms:.3} ms"))
            ),
            None => String::new(),
        };
        Ok(format!(
            "{} levels: {v0} -> {} vertices, {f0} -> {} triangles ({creases} crease edges in the input){runs}",
            self.levels,
            mesh.vertex_count(),
            mesh.triangle_count()
        ))
    }
}
