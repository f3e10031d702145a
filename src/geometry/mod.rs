//! The geometry stage: vertex shading with batch-based vertex reuse (Kenzel et al. 2018).
//!
//! Every [`Strategy`] produces the same assembled triangles, in input order, as naive shading;
//! they differ in how many times the vertex shader runs. The CPU implementation in [`cpu`]
//! emulates what a GPU warp or block does, so its invocation counts are the ones the CUDA kernels
//! produce.

pub mod batching;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod order;
pub mod patches;
pub mod shaders;

pub use batching::Batches;
pub use order::VertexOrder;
pub use patches::PatchBatches;
pub use shaders::{FmaLoad, Transform, Uniforms, VertexIn, VertexOut, VertexShader};

use std::fmt;

/// Default limits of the dynamic batching preprocess (§3.4): indices and unique vertices.
pub const DEFAULT_MAX_INDICES: u32 = 1023;
pub const DEFAULT_MAX_VERTICES: u32 = 256;
/// Default static batch of warp voting: 96 indices for a warp of 32 lanes.
pub const DEFAULT_WARP_BATCH: u32 = 96;
/// Solo probes of parallel hashing before the warp-cooperative slow path.
pub const DEFAULT_FAST_PROBES: u32 = 4;

/// Slots of the hash table of a dynamic batch of at most `max_vertices` vertices (CPU and GPU):
/// the power of two of at least twice that, so that the table is at most half full and linear
/// probe sequences stay short.
pub fn hash_table_size(max_vertices: u32) -> u32 {
    (2 * max_vertices.max(1)).next_power_of_two()
}

/// How the geometry stage finds reusable vertices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Every index is shaded (ASR exactly 3).
    Naive,
    /// Statically-batched warp voting (Algorithm 1): `batch` indices per warp of 32 lanes.
    WarpVote { batch: u32 },
    /// Dynamically-batched sorting (Algorithm 2).
    DynamicSort { max_indices: u32, max_vertices: u32 },
    /// Dynamically-batched hashing with linear probing (Algorithm 3).
    DynamicHash { max_indices: u32, max_vertices: u32 },
    /// Dynamically-batched parallel hashing: `fast_probes` solo probes, then the warp-cooperative
    /// search.
    ParallelHash {
        max_indices: u32,
        max_vertices: u32,
        fast_probes: u32,
    },
    /// Non-streaming reference: shade every vertex once, then assemble.
    Multi,
    /// RXMesh patches as batches known in advance: each patch shades the distinct vertices of
    /// its faces once and assembles its triangles through local indices built with the patches
    /// (no deduplication at run time). Needs the patch order.
    Patch,
}

/// What the geometry stage of a strategy needs prepared with the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// dynamic batches of these index and vertex limits
    pub batches: Option<(u32, u32)>,
    /// the patches' vertex lists and local indices (the index buffer in patch order)
    pub patches: bool,
    /// each triangle's patch colour, for the patch shading mode
    pub patch_colors: bool,
    /// the dynamic batches numbered once, for the hashing strategies (on the GPU, a mesh whose
    /// frames draw at least 2^20 of its triangles: they read the numbers instead of hashing)
    pub tables: bool,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match (self.batches, self.patches) {
            (Some((mi, mv)), _) => write!(f, "batches of {mi} indices / {mv} vertices"),
            (None, true) => f.write_str("patch vertex lists"),
            (None, false) => f.write_str("no batches"),
        }?;
        if self.patch_colors {
            f.write_str(", patch colours")?;
        }
        Ok(())
    }
}

/// Every strategy with its default parameters, in [`Strategy::NAMES`] order.
const DEFAULTS: [Strategy; 7] = [
    Strategy::Naive,
    Strategy::WarpVote {
        batch: DEFAULT_WARP_BATCH,
    },
    Strategy::DynamicSort {
        max_indices: DEFAULT_MAX_INDICES,
        max_vertices: DEFAULT_MAX_VERTICES,
    },
    Strategy::DynamicHash {
        max_indices: DEFAULT_MAX_INDICES,
        max_vertices: DEFAULT_MAX_VERTICES,
    },
    Strategy::ParallelHash {
        max_indices: DEFAULT_MAX_INDICES,
        max_vertices: DEFAULT_MAX_VERTICES,
        fast_probes: DEFAULT_FAST_PROBES,
    },
    Strategy::Multi,
    Strategy::Patch,
];

/// Strategies by their short names, with their default parameters (`--strategy hash`).
impl rxpipe_core::named::Named for Strategy {
    const NAMES: &'static [&'static [&'static str]] = &[
        &["naive"],
        &["warp", "warpvote", "warp-vote"],
        &["sort"],
        &["hash"],
        &["phash", "parallel-hash"],
        &["multi"],
        &["patch"],
    ];
    fn from_name(name: &str) -> Option<Strategy> {
        Strategy::parse(name)
    }
}

impl Strategy {
    pub const NAMES: [&'static str; 7] =
        ["naive", "warp", "sort", "hash", "phash", "multi", "patch"];

    /// Every strategy with its default parameters, in the paper's table order (and the patches
    /// last).
    pub fn all() -> [Strategy; 7] {
        DEFAULTS
    }

    /// Parses a short name: naive, warp, sort, hash, phash, multi, patch.
    pub fn parse(name: &str) -> Option<Strategy> {
        let name = name.to_ascii_lowercase();
        let name = match name.as_str() {
            "warpvote" | "warp-vote" => "warp",
            "parallel-hash" => "phash",
            n => n,
        };
        DEFAULTS.into_iter().find(|s| s.name() == name)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::WarpVote { .. } => "warp",
            Strategy::DynamicSort { .. } => "sort",
            Strategy::DynamicHash { .. } => "hash",
            Strategy::ParallelHash { .. } => "phash",
            Strategy::Multi => "multi",
            Strategy::Patch => "patch",
        }
    }

    /// What the strategy needs prepared with the mesh.
    pub fn layout(&self) -> Layout {
        Layout {
            batches: self.dynamic_limits(),
            patches: *self == Strategy::Patch,
            patch_colors: false,
            tables: matches!(
                self,
                Strategy::DynamicHash { .. } | Strategy::ParallelHash { .. }
            ),
        }
    }

    /// The dynamic batch limits, for the strategies that use dynamic batching.
    pub fn dynamic_limits(&self) -> Option<(u32, u32)> {
        match *self {
            Strategy::DynamicSort {
                max_indices,
                max_vertices,
            }
            | Strategy::DynamicHash {
                max_indices,
                max_vertices,
            }
            | Strategy::ParallelHash {
                max_indices,
                max_vertices,
                ..
            } => Some((max_indices, max_vertices)),
            _ => None,
        }
    }

    /// The next strategy in table order (the viewer's key cycles through them).
    pub fn next(&self) -> Strategy {
        let all = Strategy::all();
        let i = all
            .iter()
            .position(|s| s.name() == self.name())
            .unwrap_or(0);
        all[(i + 1) % all.len()]
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of the geometry stage.
#[derive(Debug, thiserror::Error)]
pub enum GeometryError {
    #[error("dynamic batching needs max_vertices >= 3 and max_indices >= 3, got {max_vertices} and {max_indices}")]
    BatchLimits { max_indices: u32, max_vertices: u32 },
    #[error("warp voting needs a batch that is a positive multiple of 3 indices, got {0}")]
    WarpBatch(u32),
    #[error("patches: {0}")]
    Patches(String),
    #[error("the patch strategy needs the mesh's patches (prepare it with the patch order)")]
    NoPatches,
    #[error(transparent)]
    OutOfMemory(#[from] rxpipe_core::limits::OutOfMemory),
    #[error("triangle {triangle} refers to vertex {index}, but there are {vertices} vertices")]
    IndexOutOfRange {
        triangle: usize,
        index: u32,
        vertices: usize,
    },
    /// A GPU error met by the stage.
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
}

/// Checks that every index refers to one of `vertex_count` vertices (naming the first that does
/// not) and returns the whole triangles (a trailing partial triangle is dropped).
pub fn whole_triangles(indices: &[u32], vertex_count: usize) -> Result<&[u32], GeometryError> {
    use rayon::prelude::*;
    // (the first one out of range, found by chunks in parallel)
    const CHUNK: usize = 1 << 16;
    let bad = |i: &u32| *i as usize >= vertex_count;
    if let Some(i) = indices
        .par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| chunk.iter().position(bad).map(|k| c * CHUNK + k))
    {
        return Err(GeometryError::IndexOutOfRange {
            triangle: i / 3,
            index: indices[i],
            vertices: vertex_count,
        });
    }
    Ok(&indices[..indices.len() / 3 * 3])
}

/// Vertex shader invocation statistics of one geometry stage run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct GeometryStats {
    pub invocations: u64,
    pub triangles: u64,
    /// distinct vertices referenced by the triangles
    pub unique_vertices: u64,
}

impl GeometryStats {
    /// Average shading rate: invocations per triangle.
    pub fn asr(&self) -> f64 {
        if self.triangles == 0 {
            0.0
        } else {
            self.invocations as f64 / self.triangles as f64
        }
    }
    /// The ideal ASR: every referenced vertex shaded once.
    pub fn ideal_asr(&self) -> f64 {
        if self.triangles == 0 {
            0.0
        } else {
            self.unique_vertices as f64 / self.triangles as f64
        }
    }
    pub fn add(&mut self, o: &GeometryStats) {
        self.invocations += o.invocations;
        self.triangles += o.triangles;
        self.unique_vertices += o.unique_vertices;
    }
}

/// What the strategies stream out: every invocation's record (a shaded vertex, or a processing
/// program's result: [`cpu::Program`]), and per input triangle (in input order) the three
/// invocations that make it up.
#[derive(Debug, Clone)]
pub struct Streamed<T> {
    /// one entry per invocation
    pub vertices: Vec<T>,
    /// the input vertex each invocation ran for
    pub sources: Vec<u32>,
    /// per input triangle, indices into `vertices`
    pub triangles: Vec<[u32; 3]>,
    pub stats: GeometryStats,
}

impl<T> Default for Streamed<T> {
    fn default() -> Self {
        Streamed {
            vertices: Vec::new(),
            sources: Vec::new(),
            triangles: Vec::new(),
            stats: GeometryStats::default(),
        }
    }
}

/// The output of the geometry stage: every shader invocation's shaded vertex.
pub type ShadedGeometry = Streamed<VertexOut>;

impl<T: Copy> Streamed<T> {
    /// The assembled triangle `t` (the records of its three corners).
    pub fn triangle(&self, t: usize) -> [T; 3] {
        self.triangles[t].map(|i| self.vertices[i as usize])
    }

    /// Each input vertex's record, starting from `out` (one entry per input vertex): where a
    /// vertex ran more than once, any of its records (a program gives one vertex one result).
    pub fn scatter(&self, out: &mut [T]) {
        for (&s, &v) in self.sources.iter().zip(&self.vertices) {
            if let Some(o) = out.get_mut(s as usize) {
                *o = v;
            }
        }
    }

    /// How many times each input vertex was shaded.
    pub fn invocations_per_vertex(&self, vertex_count: usize) -> Vec<u32> {
        let mut c = vec![0u32; vertex_count];
        for &s in &self.sources {
            if let Some(x) = c.get_mut(s as usize) {
                *x += 1;
            }
        }
        c
    }
}
