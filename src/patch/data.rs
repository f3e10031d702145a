//! The patch data RXMesh stores (section 5.2 of the paper), built on the CPU from a patching:
//!
//! - global edges: every pair of vertices some face joins, as (smaller, larger) vertex ids;
//! - per patch, its **ribbon**: the faces of other patches that share a vertex with one of its own
//!   faces (the one-ring of its boundary vertices), so that every query about an owned element
//!   can be answered inside the patch;
//! - **ownership**: each face belongs to its patch; a vertex or an edge is owned by the smallest
//!   patch among the faces around it (that patch holds its whole one-ring); owned elements take
//!   the lowest local indices;
//! - **local indices** (16-bit) and the LAR matrices: `ev`, two local vertices per local edge
//!   (in global order, smaller vertex id first), and `fe`, three local edges per local face, each
//!   `edge << 1 | flipped`, where `flipped` says the face walks the edge from its second vertex to
//!   its first; corner k of a face is the start of its k-th edge;
//! - local-to-global maps per patch, and global owner maps (16-bit while the patch count allows,
//!   [`OwnerMap`]).

use super::{PatchError, Patching};
use rayon::prelude::*;
use rxpipe_core::mesh::Mesh;

/// One patch with its ribbon, in local indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// global ids of the local vertices, edges and faces (owned ones first)
    pub vertices: Vec<u32>,
    pub edges: Vec<u32>,
    pub faces: Vec<u32>,
    /// how many of each the patch owns (they are the first of each list)
    pub owned_vertices: u16,
    pub owned_edges: u16,
    pub owned_faces: u16,
    /// two local vertices per local edge
    pub ev: Vec<u16>,
    /// three `local edge << 1 | flipped` per local face
    pub fe: Vec<u16>,
}

impl Patch {
    /// The global ids of the elements of `kind` the patch owns, in local order.
    pub fn owned(&self, kind: crate::patch::query::Element) -> &[u32] {
        use crate::patch::query::Element;
        match kind {
            Element::Vertex => &self.vertices[..self.owned_vertices as usize],
            Element::Edge => &self.edges[..self.owned_edges as usize],
            Element::Face => &self.faces[..self.owned_faces as usize],
        }
    }

    /// The local vertices of local face `f`, in the face's order.
    pub fn face_vertices(&self, f: usize) -> [u16; 3] {
        [0, 1, 2].map(|k| {
            let e = self.fe[3 * f + k];
            let (edge, flipped) = ((e >> 1) as usize, (e & 1) as usize);
            // the face leaves corner k along its k-th edge: its start
            self.ev[2 * edge + flipped]
        })
    }

    /// Bytes of the patch as stored: the two matrices (16-bit) and the three maps (32-bit).
    pub fn bytes(&self) -> usize {
        2 * (self.ev.len() + self.fe.len())
            + 4 * (self.vertices.len() + self.edges.len() + self.faces.len())
    }
}

/// Every patch's data and the global maps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchData {
    pub patches: Vec<Patch>,
    /// the two vertices of every global edge, smaller id first
    pub edges: Vec<[u32; 2]>,
    /// the owning patch of every vertex, edge and face (`u32::MAX` for a vertex no face uses)
    pub vertex_owner: OwnerMap,
    pub edge_owner: OwnerMap,
    pub face_owner: OwnerMap,
}

/// The owning patch of every element of one kind. Stored in 16 bits while every patch id fits
/// below `u16::MAX` (the sentinel), which holds for meshes up to about 33 M faces with 512-face
/// patches; in 32 bits past that. [`OwnerMap::get`] answers in 32 bits either way (`u32::MAX`:
/// no owner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerMap {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for OwnerMap {
    fn default() -> OwnerMap {
        OwnerMap::Narrow(Vec::new())
    }
}

impl OwnerMap {
    /// Stores `owners` (patch ids below `patches`, or `u32::MAX`) in the narrowest form that
    /// holds them.
    pub fn new(owners: Vec<u32>, patches: usize) -> OwnerMap {
        if patches < u16::MAX as usize {
            OwnerMap::Narrow(
                owners
                    .iter()
                    .map(|&o| o.min(u16::MAX as u32) as u16)
                    .collect(),
            )
        } else {
            OwnerMap::Wide(owners)
        }
    }

    /// The owner of element `i` (`u32::MAX` for none).
    pub fn get(&self, i: usize) -> u32 {
        match self {
            OwnerMap::Narrow(v) if v[i] == u16::MAX => u32::MAX,
            OwnerMap::Narrow(v) => v[i] as u32,
            OwnerMap::Wide(v) => v[i],
        }
    }

    pub fn len(&self) -> usize {
        match self {
            OwnerMap::Narrow(v) => v.len(),
            OwnerMap::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes as stored.
    pub fn bytes(&self) -> usize {
        match self {
            OwnerMap::Narrow(v) => 2 * v.len(),
            OwnerMap::Wide(v) => 4 * v.len(),
        }
    }
}

/// Memory of the patch data, against the paper's 45.4 bytes per face (34 without the owner maps
/// higher-order queries need). The owner maps count as stored (16 or 32 bits, [`OwnerMap`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PatchMemory {
    /// the patches' matrices and maps, per face of the mesh
    pub first_order_bytes_per_face: f64,
    /// with the three owner maps
    pub bytes_per_face: f64,
    /// local faces over owned faces, summed over patches (1 = no ribbon)
    pub ribbon_overhead: f64,
}

impl PatchData {
    /// Builds the data of `patching` of `mesh`. A patch whose ribbon takes it past 65,535 local
    /// elements (16-bit local indices) is an error naming it.
    pub fn build(mesh: &Mesh, patching: &Patching) -> Result<PatchData, PatchError> {
        let faces = mesh.triangle_count();
        let idx = &mesh.indices[..3 * faces];
        let nv = mesh.vertex_count();
        let owner_f = &patching.patch_of_face;
        // global edges: (key, face, corner) sorted by key
        let mut corner_edges: Vec<(u64, u32)> = (0..3 * faces as u32)
            .into_par_iter()
            .map(|c| {
                let t = (c / 3) as usize;
                let k = (c % 3) as usize;
                let (a, b) = (idx[3 * t + k], idx[3 * t + (k + 1) % 3]);
                (((a.min(b) as u64) << 32) | a.max(b) as u64, c)
            })
            .collect();
        corner_edges.par_sort_unstable();
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let mut edge_of_corner = vec![0u32; 3 * faces];
        let mut edge_owner: Vec<u32> = Vec::new();
        for (i, &(key, c)) in corner_edges.iter().enumerate() {
            if i == 0 || corner_edges[i - 1].0 != key {
                edges.push([(key >> 32) as u32, key as u32]);
                edge_owner.push(u32::MAX);
            }
            let e = edges.len() - 1;
            edge_of_corner[c as usize] = e as u32;
            let p = owner_f[(c / 3) as usize];
            edge_owner[e] = edge_owner[e].min(p);
        }
        let mut vertex_owner = vec![u32::MAX; nv];
        for (t, tri) in idx.chunks_exact(3).enumerate() {
            for &v in tri {
                vertex_owner[v as usize] = vertex_owner[v as usize].min(owner_f[t]);
            }
        }
        // the faces around every vertex, to find ribbons
        let vf = rxpipe_core::mesh::VertexFaces::build(idx, nv);
        let owned = patching.faces_of_patches();
        let patches: Vec<Patch> = owned
            .par_iter()
            .enumerate()
            .map(|(p, own)| {
                build_patch(
                    p as u32,
                    own,
                    idx,
                    owner_f,
                    &vf,
                    &edges,
                    &edge_of_corner,
                    &vertex_owner,
                    &edge_owner,
                )
            })
            .collect::<Result<_, _>>()?;
        let n = patches.len();
        Ok(PatchData {
            patches,
            edges,
            vertex_owner: OwnerMap::new(vertex_owner, n),
            edge_owner: OwnerMap::new(edge_owner, n),
            face_owner: OwnerMap::new(owner_f.clone(), n),
        })
    }

    /// Bytes per face of the data, and the ribbon overhead.
    pub fn memory(&self) -> PatchMemory {
        let faces = self.face_owner.len().max(1) as f64;
        let patches: usize = self.patches.iter().map(Patch::bytes).sum();
        let owners = self.vertex_owner.bytes() + self.edge_owner.bytes() + self.face_owner.bytes();
        let local: usize = self.patches.iter().map(|p| p.faces.len()).sum();
        PatchMemory {
            first_order_bytes_per_face: patches as f64 / faces,
            bytes_per_face: (patches + owners) as f64 / faces,
            ribbon_overhead: local as f64 / faces,
        }
    }
}

/// One patch: owned faces, then its ribbon; vertices and edges of those faces, owned first.
#[allow(clippy::too_many_arguments)]
fn build_patch(
    p: u32,
    own: &[u32],
    idx: &[u32],
    owner_f: &[u32],
    vf: &rxpipe_core::mesh::VertexFaces,
    edges: &[[u32; 2]],
    edge_of_corner: &[u32],
    vertex_owner: &[u32],
    edge_owner: &[u32],
) -> Result<Patch, PatchError> {
    use std::collections::HashMap;
    // ribbon: faces of other patches around the vertices of the owned faces
    let mut faces: Vec<u32> = own.to_vec();
    let mut seen: HashMap<u32, ()> = own.iter().map(|&f| (f, ())).collect();
    let mut verts: Vec<u32> = own
        .iter()
        .flat_map(|&f| idx[3 * f as usize..3 * f as usize + 3].iter().copied())
        .collect();
    verts.sort_unstable();
    verts.dedup();
    for &v in &verts {
        for &c in vf.corners_of(v as usize) {
            let f = c / 3;
            if owner_f[f as usize] != p && seen.insert(f, ()).is_none() {
                faces.push(f);
            }
        }
    }
    faces[own.len()..].sort_unstable();
    // vertices and edges of the local faces, owned ones first (each group in global order)
    let mut vs: Vec<u32> = faces
        .iter()
        .flat_map(|&f| idx[3 * f as usize..3 * f as usize + 3].iter().copied())
        .collect();
    vs.sort_unstable();
    vs.dedup();
    vs.sort_by_key(|&v| (vertex_owner[v as usize] != p, v));
    let mut es: Vec<u32> = faces
        .iter()
        .flat_map(|&f| {
            edge_of_corner[3 * f as usize..3 * f as usize + 3]
                .iter()
                .copied()
        })
        .collect();
    es.sort_unstable();
    es.dedup();
    es.sort_by_key(|&e| (edge_owner[e as usize] != p, e));
    let too_many = |what: &str, n: usize| PatchError::TooLarge {
        patch: p,
        what: what.into(),
        count: n,
    };
    for (what, n) in [
        ("faces", faces.len()),
        ("vertices", vs.len()),
        ("edges", es.len()),
    ] {
        if n > u16::MAX as usize {
            return Err(too_many(what, n));
        }
    }
    let local_v: HashMap<u32, u16> = vs.iter().enumerate().map(|(i, &v)| (v, i as u16)).collect();
    let local_e: HashMap<u32, u16> = es.iter().enumerate().map(|(i, &e)| (e, i as u16)).collect();
    let ev: Vec<u16> = es
        .iter()
        .flat_map(|&e| edges[e as usize].map(|v| local_v[&v]))
        .collect();
    let local_e = &local_e;
    let fe: Vec<u16> = faces
        .iter()
        .flat_map(|&f| {
            (0..3).map(move |k| {
                let c = 3 * f as usize + k;
                let e = edge_of_corner[c];
                // flipped: the face walks the edge from its larger vertex to its smaller
                let flipped = idx[c] != edges[e as usize][0];
                (local_e[&e] << 1) | flipped as u16
            })
        })
        .collect();
    Ok(Patch {
        owned_vertices: vs
            .iter()
            .filter(|&&v| vertex_owner[v as usize] == p)
            .count() as u16,
        owned_edges: es.iter().filter(|&&e| edge_owner[e as usize] == p).count() as u16,
        owned_faces: own.len() as u16,
        vertices: vs,
        edges: es,
        faces,
        ev,
        fe,
    })
}

#[cfg(test)]
mod tests {
    use super::OwnerMap;

    #[test]
    fn owner_maps_are_narrow_while_patch_ids_fit() {
        let owners = vec![0, 7, u32::MAX, 65_533];
        let narrow = OwnerMap::new(owners.clone(), 65_534);
        assert!(matches!(narrow, OwnerMap::Narrow(_)));
        assert_eq!(narrow.bytes(), 8);
        let wide = OwnerMap::new(owners.clone(), 65_535);
        assert!(matches!(wide, OwnerMap::Wide(_)));
        assert_eq!(wide.bytes(), 16);
        for (i, &o) in owners.iter().enumerate() {
            assert_eq!(narrow.get(i), o, "narrow {i}");
            assert_eq!(wide.get(i), o, "wide {i}");
        }
    }
}
