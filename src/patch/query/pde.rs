//! Parallel Directed Edges (PDE), the comparison the paper holds RXMesh to (section 7): the
//! directed-edges structure of Campagna et al. in structure-of-arrays form, the queries on the
//! GPU with one thread per source element walking halfedges in global memory (kernels/pde.cu).
//!
//! Edge `i` (numbered as the queries number edges: in order of their (smaller, larger) vertex
//! pair) has the halfedges `2i` (smaller to larger vertex) and `2i + 1`, so a halfedge's twin is
//! `h ^ 1`. Per halfedge: its target vertex, its face (none on a boundary) and the next halfedge
//! (of its face, or along the boundary); per vertex one outgoing halfedge; per face the halfedge
//! leaving its corner 0. 42 bytes per face on a closed mesh, as the paper counts.
//!
//! Lists come out in the walk's order (rotation around a vertex; corner order for FV and FE); the
//! tests and the benchmark compare them with the queries as sets. The structure holds only
//! edge-manifold, consistently oriented meshes with manifold vertices; others are refused with
//! the element that breaks it.

use super::{sources, Query, QueryResult};
use crate::gpu::kernels::Source;
use crate::gpu::{launch_1d, Gpu, GpuError};
use crate::patch::PatchError;
use cudarc::driver::{CudaModule, CudaSlice, PushKernelArg};
use std::sync::Arc;

/// No halfedge, face or vertex.
pub const NONE: u32 = u32::MAX;

/// The directed-edges structure of a mesh, on the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectedEdges {
    /// target vertex of every halfedge
    pub target: Vec<u32>,
    /// face of every halfedge ([`NONE`] on a boundary)
    pub face: Vec<u32>,
    /// next halfedge of every halfedge
    pub next: Vec<u32>,
    /// one outgoing halfedge per vertex ([`NONE`] for a vertex no face uses)
    pub vertex_out: Vec<u32>,
    /// the halfedge leaving corner 0 of every face
    pub face_edge: Vec<u32>,
}

impl DirectedEdges {
    /// Builds the structure of the whole triangles of `indices` over `vertex_count` vertices.
    pub fn build(indices: &[u32], vertex_count: usize) -> Result<DirectedEdges, PatchError> {
        let faces = indices.len() / 3;
        let idx = &indices[..3 * faces];
        if let Some(&i) = idx.iter().find(|&&i| i as usize >= vertex_count) {
            return Err(PatchError::NotManifold(format!(
                "index {i} is past the {vertex_count} vertices"
            )));
        }
        let key = |a: u32, b: u32| ((a.min(b) as u64) << 32) | a.max(b) as u64;
        let corner_to = |c: usize| idx[c / 3 * 3 + (c % 3 + 1) % 3];
        let mut keys: Vec<u64> = (0..3 * faces).map(|c| key(idx[c], corner_to(c))).collect();
        keys.sort_unstable();
        keys.dedup();
        let halfedges = 2 * keys.len();
        let mut target = vec![NONE; halfedges];
        let mut face = vec![NONE; halfedges];
        let mut next = vec![NONE; halfedges];
        for (e, &k) in keys.iter().enumerate() {
            let (a, b) = ((k >> 32) as u32, k as u32);
            target[2 * e] = b;
            target[2 * e + 1] = a;
        }
        // the halfedge of every corner (from the corner to the next one)
        let mut corner_he = vec![0u32; 3 * faces];
        for c in 0..3 * faces {
            let (a, b) = (idx[c], corner_to(c));
            let f = (c / 3) as u32;
            if a == b {
                return Err(PatchError::NotManifold(format!(
                    "face {f} is degenerate (vertex {a} twice)"
                )));
            }
            let e = keys
                .binary_search(&key(a, b))
                .expect("every edge is listed") as u32;
            let h = 2 * e + (a > b) as u32;
            if face[h as usize] != NONE {
                return Err(PatchError::NotManifold(format!(
                    "faces {} and {f} both walk the edge from vertex {a} to {b}",
                    face[h as usize]
                )));
            }
            face[h as usize] = f;
            corner_he[c] = h;
        }
        for c in 0..3 * faces {
            next[corner_he[c] as usize] = corner_he[c / 3 * 3 + (c % 3 + 1) % 3];
        }
        // boundary halfedges continue with the boundary halfedge leaving their target
        let mut vertex_out = vec![NONE; vertex_count];
        let mut boundary_out = vec![NONE; vertex_count];
        for h in 0..halfedges as u32 {
            let from = target[(h ^ 1) as usize];
            if face[h as usize] == NONE {
                if boundary_out[from as usize] != NONE {
                    return Err(PatchError::NotManifold(format!(
                        "vertex {from} is on two boundary loops (a non-manifold vertex)"
                    )));
                }
                boundary_out[from as usize] = h;
            }
            if vertex_out[from as usize] == NONE {
                vertex_out[from as usize] = h;
            }
        }
        for h in 0..halfedges {
            if face[h] == NONE {
                next[h] = boundary_out[target[h] as usize];
            }
        }
        let d = DirectedEdges {
            target,
            face,
            next,
            vertex_out,
            face_edge: (0..faces).map(|f| corner_he[3 * f]).collect(),
        };
        // a vertex whose outgoing halfedges form more than one rotation (two fans meeting at it)
        let mut degree = vec![0u32; vertex_count];
        for h in 0..halfedges {
            degree[d.target[h ^ 1] as usize] += 1;
        }
        for (v, &deg) in degree.iter().enumerate() {
            let n = d.rotation(v as u32).take(deg as usize + 1).count();
            if n != deg as usize {
                return Err(PatchError::NotManifold(format!(
                    "vertex {v} joins several fans ({n} of its {deg} edges around one)"
                )));
            }
        }
        Ok(d)
    }

    /// The outgoing halfedges of `v` in rotation order (empty for an unused vertex).
    pub fn rotation(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        let start = self.vertex_out[v as usize];
        let mut h = start;
        std::iter::from_fn(move || {
            if h == NONE {
                return None;
            }
            let out = h;
            h = self.next[(h ^ 1) as usize];
            if h == start {
                h = NONE;
            }
            Some(out)
        })
    }

    /// Bytes the structure takes (32-bit ids).
    pub fn bytes(&self) -> usize {
        4 * (3 * self.target.len() + self.vertex_out.len() + self.face_edge.len())
    }

    /// The number of edges.
    pub fn edges(&self) -> usize {
        self.target.len() / 2
    }

    /// Answers `q` on the host by the same walks as the GPU kernel (the lists in walk order).
    pub fn query(&self, q: Query) -> QueryResult {
        let n = sources(q, self.vertex_out.len(), self.edges(), self.face_edge.len());
        let lists = (0..n as u32).map(|g| self.list(q, g)).collect();
        QueryResult::from_lists(q, lists)
    }

    fn list(&self, q: Query, g: u32) -> Vec<u32> {
        let face_he = |f: u32| {
            let h = self.face_edge[f as usize];
            let n1 = self.next[h as usize];
            [h, n1, self.next[n1 as usize]]
        };
        match q {
            Query::VV => self.rotation(g).map(|h| self.target[h as usize]).collect(),
            Query::VE => self.rotation(g).map(|h| h >> 1).collect(),
            Query::VF => self
                .rotation(g)
                .map(|h| self.face[h as usize])
                .filter(|&f| f != NONE)
                .collect(),
            Query::EV => vec![self.target[2 * g as usize + 1], self.target[2 * g as usize]],
            Query::EF => [self.face[2 * g as usize], self.face[2 * g as usize + 1]]
                .into_iter()
                .filter(|&f| f != NONE)
                .collect(),
            // the halfedge leaving corner k ends at corner k + 1
            Query::FV => {
                let h = face_he(g);
                vec![
                    self.target[h[2] as usize],
                    self.target[h[0] as usize],
                    self.target[h[1] as usize],
                ]
            }
            Query::FE => face_he(g).map(|h| h >> 1).to_vec(),
            Query::FF => face_he(g)
                .map(|h| self.face[(h ^ 1) as usize])
                .into_iter()
                .filter(|&f| f != NONE)
                .collect(),
        }
    }
}

/// The PDE kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("pde.cu");

/// The structure on the device.
pub struct CudaPde {
    gpu: Arc<Gpu>,
    module: Arc<CudaModule>,
    target: CudaSlice<u32>,
    face: CudaSlice<u32>,
    next: CudaSlice<u32>,
    vertex_out: CudaSlice<u32>,
    face_edge: CudaSlice<u32>,
    vertices: usize,
    edges: usize,
    faces: usize,
}

impl CudaPde {
    /// Uploads `d`.
    pub fn upload(gpu: Arc<Gpu>, d: &DirectedEdges) -> Result<CudaPde, GpuError> {
        Ok(CudaPde {
            target: gpu.upload(&d.target, "halfedge targets")?,
            face: gpu.upload(&d.face, "halfedge faces")?,
            next: gpu.upload(&d.next, "next halfedges")?,
            vertex_out: gpu.upload(&d.vertex_out, "vertex halfedges")?,
            face_edge: gpu.upload(&d.face_edge, "face halfedges")?,
            module: gpu.module("pde", &[KERNELS], &[])?,
            vertices: d.vertex_out.len(),
            edges: d.edges(),
            faces: d.face_edge.len(),
            gpu,
        })
    }

    /// The number of source elements of `q`.
    pub fn sources(&self, q: Query) -> usize {
        sources(q, self.vertices, self.edges, self.faces)
    }

    /// Writes every element's list of `q` into `items` at `offsets` (one more entry than
    /// source elements, laid out for the query's list lengths; a list never runs past its
    /// slot).
    pub fn fill(
        &self,
        q: Query,
        offsets: &CudaSlice<u32>,
        items: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        let n = self.sources(q);
        let f = self.gpu.function(&self.module, "pde_query")?;
        let qn = Query::ALL.iter().position(|&x| x == q).expect("a query") as u32;
        let nn = n as u32;
        let mut l = self.gpu.stream.launch_builder(&f);
        l.arg(&self.target)
            .arg(&self.face)
            .arg(&self.next)
            .arg(&self.vertex_out)
            .arg(&self.face_edge)
            .arg(&qn)
            .arg(&nn)
            .arg(offsets)
            .arg(items);
        // SAFETY: one thread per source element; the structure's ids are in range (built and
        // checked on the host) and every thread writes at most its slot of `items`, which the
        // offsets lay out.
        unsafe { launch_1d(l, nn, "pde_query") }
    }

    /// Answers `q` (lists in walk order), with the list lengths of `layout` (the same query's
    /// result from elsewhere: the walk's lengths are the same).
    pub fn run(&self, q: Query, layout: &QueryResult) -> Result<QueryResult, GpuError> {
        let offsets = self.gpu.upload(&layout.offsets, "query list offsets")?;
        let total = layout.items.len();
        let mut items: CudaSlice<u32> = self.gpu.zeros(total.max(1), "query lists")?;
        self.fill(q, &offsets, &mut items)?;
        Ok(QueryResult {
            query: Some(q),
            offsets: layout.offsets.clone(),
            items: self.gpu.download(&items, total)?,
        })
    }
}
