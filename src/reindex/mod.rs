//! Re-indexing (Wald, "GPGPU-Parallel Re-indexing of Triangle Meshes with Duplicate-Vertex and
//! Unused-Vertex Removal"): the pipeline's loading stage. It removes duplicate and unused vertices
//! from an indexed mesh and keeps every triangle, in order, as the same triple of vertex values.
//!
//! Three implementations of one result:
//! - [`cpu::serial`]: a hash map from vertex value to new index, the definition of correct
//!   (new vertices in order of their first reference);
//! - [`cpu::parallel`]: the paper's method with rayon (mark used vertices, overwrite unused ones
//!   with a used one, key-value sort, first-occurrence flags, scan, scatter, inverse permutation,
//!   `newIdx[perm[i]]`; new vertices in key order);
//! - [`cuda`]: the same steps with our own kernels (LSD radix sort, reduce-then-scan), plus a
//!   hash-table variant with no sort (new vertices in order of their lowest original index).
//!
//! **Vertex equality** is exact equality of every attribute the mesh has (position, normal, uv,
//! colour),
//! compared as bit patterns after mapping floats to order-preserving integers, with one policy:
//! `-0.0` and `+0.0` are equal. NaN in any attribute is an error. With a weld cell size, positions
//! are compared by the grid cell their rounded `position / cell` falls in (normals and uvs stay
//! exact), for scanned and CAD data; a welded vertex keeps the value of one of its copies.
//!
//! ```
//! use rxpipe::reindex::{self, ReindexOptions};
//! // two triangles of a quad as a soup: six vertices, four distinct
//! let p = |x: f32, y: f32| glam::Vec3::new(x, y, 0.0);
//! let soup = rxpipe::Mesh::new(
//!     "quad",
//!     vec![p(0., 0.), p(1., 0.), p(1., 1.), p(0., 0.), p(1., 1.), p(0., 1.)],
//!     (0..6).collect(),
//! );
//! let r = reindex::reindex(&soup, &ReindexOptions::default(), None)?;
//! assert_eq!(r.mesh.vertex_count(), 4);
//! assert_eq!(r.report.duplicates, 2);
//! # Ok::<(), rxpipe::reindex::ReindexError>(())
//! ```

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;

use crate::gpu::{Gpu, GpuError};
use rxpipe_core::mesh::weld::WeldError;
use rxpipe_core::mesh::{Mesh, MeshError};

/// Errors of the re-indexing stage.
#[derive(Debug, thiserror::Error)]
pub enum ReindexError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The mesh cannot be keyed: no triangles, a NaN attribute, a bad weld cell.
    #[error(transparent)]
    Weld(#[from] WeldError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Which implementation re-indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The fastest available: the serial method for a small mesh, else CUDA (hashing) with a
    /// GPU and the parallel CPU method without one.
    ///
    /// (Small: fewer than [`AUTO_SERIAL_INDICES`] indices.)
    #[default]
    Auto,
    /// The serial hash-map reference.
    Serial,
    /// The paper's method on the CPU (rayon).
    Parallel,
    /// The paper's method on the GPU (radix sort).
    CudaSort,
    /// A GPU hash table instead of the sort.
    CudaHash,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::Auto,
        Method::Serial,
        Method::Parallel,
        Method::CudaSort,
        Method::CudaHash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Serial => "serial",
            Method::Parallel => "parallel",
            Method::CudaSort => "cuda-sort",
            Method::CudaHash => "cuda-hash",
        }
    }

    /// Whether the method runs on the GPU.
    pub fn is_gpu(self) -> bool {
        matches!(self, Method::CudaSort | Method::CudaHash)
    }

    pub fn parse(s: &str) -> Option<Method> {
        let s = s.to_ascii_lowercase();
        Method::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl rxpipe_core::named::Named for Method {
    const NAMES: &'static [&'static [&'static str]] = &[
        &["auto"],
        &["serial"],
        &["parallel"],
        &["cuda-sort"],
        &["cuda-hash"],
    ];
    fn from_name(name: &str) -> Option<Method> {
        Method::parse(name)
    }
}

/// How to re-index.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReindexOptions {
    pub method: Method,
    /// Weld positions that fall in the same grid cell of this size (`None`: exact equality).
    pub weld: Option<f32>,
}

/// What a re-indexing did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ReindexReport {
    /// the implementation that ran
    pub method: Method,
    pub vertices_in: usize,
    pub vertices_out: usize,
    /// vertices no triangle referenced
    pub unused: usize,
    /// referenced vertices equal to another one
    pub duplicates: usize,
    /// why a requested GPU method did not run, when it fell back to the CPU
    pub fallback: Option<String>,
    /// where its time went, where the method says (the GPU's: the keys checked, the upload,
    /// the run, the download)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<rxpipe_core::execution::StepTime>,
}

impl std::fmt::Display for ReindexReport {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "reindex ({}): {} -> {} vertices ({} unused and {} duplicate removed)",
            self.method.name(),
            self.vertices_in,
            self.vertices_out,
            self.unused,
            self.duplicates
        )?;
        if let Some(why) = &self.fallback {
            write!(f, "; {why}")?;
        }
        Ok(())
    }
}

/// A re-indexed mesh and what was removed.
#[derive(Debug, Clone)]
pub struct Reindexed {
    pub mesh: Mesh,
    pub report: ReindexReport,
}

/// Below this many indices [`Method::Auto`] re-indexes on one thread: handing a small mesh to
/// the thread pool or to the GPU costs more than the work ([`rxpipe_core::execution::SMALL_MESH_INDICES`]).
pub const AUTO_SERIAL_INDICES: usize = rxpipe_core::execution::SMALL_MESH_INDICES;

/// The method [`reindex`] runs for `method` on `mesh`, with a GPU or without: `Auto` is the
/// serial method for a small mesh, else CUDA hashing with a GPU and the parallel CPU method
/// without one; any other method is itself.
pub fn resolve(method: Method, mesh: &Mesh, gpu: bool) -> Method {
    match (method, gpu) {
        (Method::Auto, _) if mesh.indices.len() < AUTO_SERIAL_INDICES => Method::Serial,
        (Method::Auto, true) => Method::CudaHash,
        (Method::Auto, false) => Method::Parallel,
        (m, _) => m,
    }
}

/// Re-indexes `mesh` with the method of `opts` (`Auto`: serial for a small mesh, else on `gpu`
/// when given, else the parallel CPU method). A GPU method without a GPU, or one the GPU's memory cannot hold, falls back to
/// the parallel CPU method and says so in the report; the input is never modified.
pub fn reindex(
    mesh: &Mesh,
    opts: &ReindexOptions,
    gpu: Option<&std::sync::Arc<Gpu>>,
) -> Result<Reindexed, ReindexError> {
    let method = resolve(opts.method, mesh, gpu.is_some());
    match method {
        Method::Serial => cpu::serial(mesh, opts.weld),
        Method::Parallel | Method::Auto => cpu::parallel(mesh, opts.weld),
        #[cfg(feature = "cuda")]
        Method::CudaSort | Method::CudaHash => {
            let gpu_method = if method == Method::CudaSort {
                cuda::GpuMethod::Sort
            } else {
                cuda::GpuMethod::Hash
            };
            let why = match gpu {
                None => "no GPU".to_string(),
                Some(g) => match cuda::reindex(g, mesh, opts.weld, gpu_method) {
                    Ok(r) => return Ok(r),
                    Err(ReindexError::Gpu(e @ GpuError::OutOfMemory { .. }))
                    | Err(ReindexError::Gpu(e @ GpuError::Limit(_))) => e.to_string(),
                    Err(e) => return Err(e),
                },
            };
            let mut r = cpu::parallel(mesh, opts.weld)?;
            r.report.fallback = Some(format!(
                "{} did not run ({why}); used the parallel CPU method",
                method.name()
            ));
            Ok(r)
        }
        #[cfg(not(feature = "cuda"))]
        Method::CudaSort | Method::CudaHash => {
            let mut r = cpu::parallel(mesh, opts.weld)?;
            r.report.fallback = Some(format!(
                "{} did not run ({}); used the parallel CPU method",
                method.name(),
                crate::gpu::UNAVAILABLE
            ));
            Ok(r)
        }
    }
}

/// Merges meshes into one (Wald §3.2): vertex arrays concatenated, indices offset, then
/// re-indexed so vertices the meshes share appear once.
pub fn merge(
    meshes: &[Mesh],
    opts: &ReindexOptions,
    gpu: Option<&std::sync::Arc<Gpu>>,
) -> Result<Reindexed, ReindexError> {
    let total: usize = meshes.iter().map(|m| m.vertex_count()).sum();
    let name = meshes
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    if total > u32::MAX as usize {
        return Err(MeshError::TooManyVertices {
            mesh: name,
            vertices: total,
        }
        .into());
    }
    let mut all = Mesh {
        name,
        ..Default::default()
    };
    for m in meshes {
        m.validate()?;
        all.append(m);
    }
    all.base_color = meshes.iter().find_map(|m| m.base_color);
    reindex(&all, opts, gpu)
}

/// The triangles whose `keep` is true, as a compact mesh (Wald §3.4): all vertices kept, then
/// re-indexed so only the ones the kept triangles use remain. `keep` has one entry per triangle.
pub fn subset(
    mesh: &Mesh,
    keep: &[bool],
    opts: &ReindexOptions,
    gpu: Option<&std::sync::Arc<Gpu>>,
) -> Result<Reindexed, ReindexError> {
    if keep.len() != mesh.triangle_count() {
        return Err(MeshError::AttributeLength {
            mesh: mesh.name.clone(),
            attribute: "face mask",
            len: keep.len(),
            vertices: mesh.triangle_count(),
        }
        .into());
    }
    let indices = mesh
        .indices
        .chunks_exact(3)
        .zip(keep)
        .filter(|(_, &k)| k)
        .flat_map(|(t, _)| t.iter().copied())
        .collect();
    let part = Mesh {
        indices,
        ..mesh.clone()
    };
    reindex(&part, opts, gpu)
}

/// The report of a re-indexing from its counts.
pub(crate) fn report(method: Method, mesh: &Mesh, used: usize, out: usize) -> ReindexReport {
    ReindexReport {
        method,
        vertices_in: mesh.vertex_count(),
        vertices_out: out,
        unused: mesh.vertex_count() - used,
        duplicates: used - out,
        fallback: None,
        steps: Vec::new(),
    }
}

/// The paper's grid generator (Wald §3.5): an `n` x `n` grid of quads in the z = 0 plane, every
/// quad with its own four corner vertices and one unused centre vertex (5 n² vertices in,
/// (n + 1)² out), two triangles per quad.
pub fn paper_grid(n: u32) -> Mesh {
    use glam::Vec3;
    use rayon::prelude::*;
    let n = n as usize;
    let s = 1.0 / n as f32;
    let positions: Vec<Vec3> = (0..n * n)
        .into_par_iter()
        .flat_map_iter(|q| {
            let (x, y) = ((q % n) as f32, (q / n) as f32);
            let c = |dx: f32, dy: f32| Vec3::new((x + dx) * s, (y + dy) * s, 0.0);
            [c(0., 0.), c(1., 0.), c(1., 1.), c(0., 1.), c(0.5, 0.5)]
        })
        .collect();
    let indices: Vec<u32> = (0..(n * n) as u32)
        .into_par_iter()
        .flat_map_iter(|q| {
            let b = 5 * q;
            [b, b + 1, b + 2, b, b + 2, b + 3]
        })
        .collect();
    Mesh::new(format!("paper grid {n}x{n}"), positions, indices)
}

/// Checks that `output` is a re-indexing of `input`: the same triangles, in the same order, as
/// triples of vertex values (compared as re-indexing compares them, with `weld`), no two equal
/// vertices and no unused vertex. The error says what differs first.
pub fn verify(input: &Mesh, output: &Mesh, weld: Option<f32>) -> Result<(), String> {
    let ki = rxpipe_core::mesh::weld::Keys::new(input, weld).map_err(|e| e.to_string())?;
    let ko = rxpipe_core::mesh::weld::Keys::new(output, weld).map_err(|e| e.to_string())?;
    if input.indices.len() != output.indices.len() {
        return Err(format!(
            "{} triangles in, {} out",
            input.triangle_count(),
            output.triangle_count()
        ));
    }
    if ki.words != ko.words {
        return Err("the attributes differ".into());
    }
    for (k, (&a, &b)) in input.indices.iter().zip(&output.indices).enumerate() {
        if ki.key(a as usize) != ko.key(b as usize) {
            return Err(format!(
                "triangle {} corner {}: vertex {a} in, vertex {b} out, with different values",
                k / 3,
                k % 3
            ));
        }
    }
    let mut seen = rustc_hash::FxHashMap::default();
    for v in 0..output.vertex_count() {
        if let Some(w) = seen.insert(ko.key(v), v) {
            return Err(format!("output vertices {w} and {v} are equal"));
        }
    }
    let referenced = output.referenced_vertex_count();
    if referenced != output.vertex_count() {
        return Err(format!(
            "{} of {} output vertices are unused",
            output.vertex_count() - referenced,
            output.vertex_count()
        ));
    }
    Ok(())
}
