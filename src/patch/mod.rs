//! RXMesh patches (Mahmoud et al. 2021): the mesh's faces partitioned into small connected
//! patches, each at most a given number of faces, by Lloyd clustering on the face-adjacency
//! graph (section 6.3 and appendix C of the paper).
//!
//! This module holds the patching contract and its report; [`cpu`] is the reference
//! implementation, and [`data`] builds what RXMesh stores per patch (ribbons, ownership, local
//! indices, the LAR matrices EV and FE). The queries build on that.
//!
//! ```
//! use rxpipe::patch::{self, PatchOptions};
//! let m = rxpipe::mesh::icosphere(4);
//! let p = patch::cpu::patch(&m, &PatchOptions { max_faces: 256, ..Default::default() })?;
//! assert!(p.report.max_faces <= 256);
//! assert_eq!(p.patch_of_face.len(), m.triangle_count());
//! # Ok::<(), rxpipe::patch::PatchError>(())
//! ```

pub mod bounds;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod data;
pub mod query;

pub use bounds::PatchBounds;
pub use data::{OwnerMap, Patch, PatchData, PatchMemory};
pub use query::{Query, QueryResult};

use rxpipe_core::mesh::MeshError;

/// Errors of patching.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// A patch with its ribbon needs more local elements than 16-bit indices address (a vertex
    /// of a very large fan, say).
    #[error("patch {patch} with its ribbon has {count} {what}, more than 16-bit local indices address (65535)")]
    TooLarge {
        patch: u32,
        what: String,
        count: usize,
    },
    /// An active set whose length is not the query's source element count.
    #[error("{got} active flags for the {want} source elements of query {query}")]
    Active {
        query: &'static str,
        got: usize,
        want: usize,
    },
    /// A mesh the directed-edges comparison cannot hold (it needs an edge-manifold, consistently
    /// oriented mesh with manifold vertices).
    #[error("directed edges need an edge-manifold, consistently oriented mesh: {0}")]
    NotManifold(String),
    /// A patch of a single face whose ribbon still does not fit what a block holds (a vertex of
    /// an enormous fan, say).
    #[error("patch {patch} ({detail}) does not fit one block's shared memory, even with a single face of its own")]
    TooLargeForBlock { patch: u32, detail: String },
    /// The patch size limit is out of range.
    #[error("a patch holds 1 to 65535 faces (local indices are 16-bit), got {0}")]
    Limit(u32),
    /// A GPU error met by the stage.
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
}

/// How to patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchOptions {
    /// the most faces a patch may hold (512 by default; the paper uses 512 to 768)
    pub max_faces: u32,
    /// Lloyd iterations before oversized patches are split directly (the result then still
    /// meets the limit, and the report says how many were split)
    pub max_iterations: u32,
    /// seed of the pseudo-random choice of the initial seed faces
    pub seed: u64,
}

impl Default for PatchOptions {
    fn default() -> Self {
        PatchOptions {
            max_faces: 512,
            max_iterations: 100,
            seed: 0x5eed,
        }
    }
}

/// What patching did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PatchReport {
    pub faces: usize,
    pub patches: usize,
    /// connected components of the face-adjacency graph (faces sharing an edge)
    pub components: usize,
    /// faces that share no edge with any other face
    pub isolated_faces: usize,
    pub min_faces: usize,
    pub max_faces: usize,
    pub mean_faces: f64,
    /// the size limit asked for
    pub limit: u32,
    /// Lloyd iterations run
    pub iterations: u32,
    /// seeds added to oversized patches over the iterations
    pub seeds_added: usize,
    /// patches still over the limit after the iterations, split directly
    pub split: usize,
    /// edges with more than two faces
    pub non_manifold_edges: usize,
    pub ms: f64,
}

impl std::fmt::Display for PatchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} faces in {} patches (limit {}): {} to {} faces, mean {:.1}; {} components ({} isolated faces), {} non-manifold edges; {} iterations, {} seeds added, {} split; {:.1} ms",
            self.faces,
            self.patches,
            self.limit,
            self.min_faces,
            self.max_faces,
            self.mean_faces,
            self.components,
            self.isolated_faces,
            self.non_manifold_edges,
            self.iterations,
            self.seeds_added,
            self.split,
            self.ms
        )
    }
}

/// A mesh's faces partitioned into patches.
#[derive(Debug, Clone, PartialEq)]
pub struct Patching {
    /// the patch of every face (patches numbered from 0, each non-empty and connected)
    pub patch_of_face: Vec<u32>,
    pub report: PatchReport,
}

impl Patching {
    /// How many patches there are.
    pub fn len(&self) -> usize {
        self.report.patches
    }

    /// Whether there are none (a mesh without faces).
    pub fn is_empty(&self) -> bool {
        self.report.patches == 0
    }

    /// A colour per face, its patch's: hues spread by the golden ratio so that neighbouring
    /// patch numbers differ (the paper's Figure 5c).
    pub fn face_colors(&self) -> Vec<[u8; 3]> {
        let palette: Vec<[u8; 3]> = (0..self.report.patches)
            .map(|p| patch_color(p as u32))
            .collect();
        self.patch_of_face
            .iter()
            .map(|&p| palette[p as usize])
            .collect()
    }

    /// Per face of `indices` (the index buffer this patching was made of), whether it lies in
    /// another patch's ribbon: whether one of its corners is also a corner of a face of another
    /// patch (the ribbon of a patch is the one-ring of its boundary vertices, so such a face is in
    /// that patch's). Never across a real mesh boundary, where no other patch's face is.
    pub fn in_ribbons(&self, indices: &[u32]) -> Vec<bool> {
        const NONE: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        let nv = indices.iter().max().map_or(0, |&m| m as usize + 1);
        // per vertex: the one patch of its faces, or MANY
        let mut patch_of_vertex = vec![NONE; nv];
        let faces = self.patch_of_face.len().min(indices.len() / 3);
        for f in 0..faces {
            let p = self.patch_of_face[f];
            for &v in &indices[3 * f..3 * f + 3] {
                let s = &mut patch_of_vertex[v as usize];
                *s = if *s == NONE || *s == p { p } else { MANY };
            }
        }
        (0..self.patch_of_face.len())
            .map(|f| {
                f < faces
                    && indices[3 * f..3 * f + 3]
                        .iter()
                        .any(|&v| patch_of_vertex[v as usize] == MANY)
            })
            .collect()
    }

    /// The faces of every patch, in increasing order.
    pub fn faces_of_patches(&self) -> Vec<Vec<u32>> {
        let mut v = vec![Vec::new(); self.report.patches];
        for (f, &p) in self.patch_of_face.iter().enumerate() {
            v[p as usize].push(f as u32);
        }
        v
    }
}

/// The patch data of `mesh` for `patching`, with every patch that `fits` refuses split in two
/// (breadth-first pieces of half its faces, as [`cpu::split_patches`] does), again until all
/// fit: how patches too large for a block's shared memory are handled (RXMesh's issue #75; pass
/// [`query::shared::fits_shared`]). Returns the patching used, renumbered, with its report's
/// `split` counting the patches split here too. A single face that does not fit is an error
/// naming it.
pub fn fit(
    mesh: &rxpipe_core::mesh::Mesh,
    patching: &Patching,
    fits: impl Fn(&Patch) -> bool,
) -> Result<(Patching, PatchData), PatchError> {
    let mut p = patching.clone();
    let mut graph = None;
    loop {
        let data = PatchData::build(mesh, &p)?;
        let bad: Vec<usize> = (0..data.patches.len())
            .filter(|&k| !fits(&data.patches[k]))
            .collect();
        if bad.is_empty() {
            return Ok((p, data));
        }
        let mut limit = vec![usize::MAX; data.patches.len()];
        for &k in &bad {
            let n = data.patches[k].owned_faces as usize;
            if n <= 1 {
                let q = &data.patches[k];
                return Err(PatchError::TooLargeForBlock {
                    patch: k as u32,
                    detail: format!(
                        "{} vertices, {} edges and {} faces with its ribbon",
                        q.vertices.len(),
                        q.edges.len(),
                        q.faces.len()
                    ),
                });
            }
            limit[k] = n.div_ceil(2);
        }
        let g = graph.get_or_insert_with(|| {
            cpu::FaceGraph::build(&mesh.indices[..mesh.triangle_count() * 3])
        });
        let mut report = p.report.clone();
        let mut of = p.patch_of_face;
        report.split += cpu::split_patches(g, &mut of, limit.len(), |q| limit[q as usize]);
        p = cpu::finish(of, report);
    }
}

/// The colour of patch `p` (sRGB bytes): the patch shading mode's colour of the patch
/// ([`rxpipe_core::color::patch_value_color`]).
pub fn patch_color(p: u32) -> [u8; 3] {
    let c = rxpipe_core::color::patch_value_color(rxpipe_core::color::patch_value(p, false));
    let [r, g, b, _] = rxpipe_core::color::pack_srgb(c).to_le_bytes();
    [r, g, b]
}
