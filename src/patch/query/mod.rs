//! The eight RXMesh queries (section 4 of the paper): for every element of one kind, the adjacent
//! elements of another. Sources and results are global ids: vertices as in the index buffer,
//! faces (triangles) in index-buffer order, edges numbered in order of their (smaller vertex,
//! larger vertex) pair ([`super::PatchData::edges`]).
//!
//! The order of each element's result is fixed, so that every implementation gives the same
//! lists:
//!
//! - FV: the face's three corners in its order; FE: its three edges, the k-th joining corner k to
//!   corner k + 1; EV: the edge's two vertices, smaller id first;
//! - VV, VE, VF, EF, FF: ascending ids, each once. VV leaves out the vertex itself (an edge of a
//!   degenerate face joining a vertex to itself adds nothing); FF is every other face that shares
//!   an edge with the face (through a non-manifold edge, all of them).
//!
//! [`cpu::run`] answers a query patch by patch from the patch data, each patch answering for the
//! elements it owns with its ribbon; [`cuda::CudaQueries`] does the same on the GPU, one block
//! per patch (kernels/query.cu); [`reference()`] answers it from the plain index buffer,
//! independently, for the tests; [`pde`] is the directed-edges comparison the benchmark times.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "cuda")]
pub mod pde;
pub mod shared;

use std::fmt;

/// One of the eight queries: the source kind, then the result kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Query {
    /// vertex to vertices (the one-ring)
    VV,
    /// vertex to edges
    VE,
    /// vertex to faces
    VF,
    /// edge to its two vertices
    EV,
    /// edge to faces
    EF,
    /// face to its three vertices
    FV,
    /// face to its three edges
    FE,
    /// face to the faces sharing an edge with it
    FF,
}

/// A kind of mesh element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Element {
    Vertex,
    Edge,
    Face,
}

impl Element {
    pub fn name(self) -> &'static str {
        match self {
            Element::Vertex => "vertex",
            Element::Edge => "edge",
            Element::Face => "face",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Element::Vertex => "vertices",
            Element::Edge => "edges",
            Element::Face => "faces",
        }
    }
}

impl rxpipe_core::named::Named for Query {
    const NAMES: &'static [&'static [&'static str]] = &[
        &["vv"],
        &["ve"],
        &["vf"],
        &["ev"],
        &["ef"],
        &["fv"],
        &["fe"],
        &["ff"],
    ];
    fn from_name(name: &str) -> Option<Query> {
        Query::parse(name)
    }
}

impl Query {
    pub const ALL: [Query; 8] = [
        Query::VV,
        Query::VE,
        Query::VF,
        Query::EV,
        Query::EF,
        Query::FV,
        Query::FE,
        Query::FF,
    ];

    /// Parses a query's two letters (`vv`, `ef`, ...).
    pub fn parse(s: &str) -> Option<Query> {
        let s = s.to_ascii_lowercase();
        Query::ALL.into_iter().find(|q| q.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Query::VV => "vv",
            Query::VE => "ve",
            Query::VF => "vf",
            Query::EV => "ev",
            Query::EF => "ef",
            Query::FV => "fv",
            Query::FE => "fe",
            Query::FF => "ff",
        }
    }

    /// The kind of element the query answers for.
    pub fn source(self) -> Element {
        match self {
            Query::VV | Query::VE | Query::VF => Element::Vertex,
            Query::EV | Query::EF => Element::Edge,
            Query::FV | Query::FE | Query::FF => Element::Face,
        }
    }

    /// The kind of element in its results.
    pub fn target(self) -> Element {
        match self {
            Query::VV | Query::EV | Query::FV => Element::Vertex,
            Query::VE | Query::FE => Element::Edge,
            Query::VF | Query::EF | Query::FF => Element::Face,
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A query's answer: for every source element (by global id), its list, in compressed rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    pub query: Option<Query>,
    /// element k's list is `items[offsets[k]..offsets[k + 1]]`
    pub offsets: Vec<u32>,
    pub items: Vec<u32>,
}

impl QueryResult {
    /// The number of source elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element k's list.
    pub fn of(&self, k: usize) -> &[u32] {
        &self.items[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// Compressed rows from one list per element.
    pub fn from_lists(query: Query, lists: Vec<Vec<u32>>) -> QueryResult {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        offsets.push(0u32);
        let mut items = Vec::with_capacity(lists.iter().map(Vec::len).sum());
        for l in lists {
            items.extend_from_slice(&l);
            offsets.push(items.len() as u32);
        }
        QueryResult {
            query: Some(query),
            offsets,
            items,
        }
    }

    /// The lists of `query` laid out patch by patch put back in element order: `owned` gives
    /// each patch's owned elements (global ids, [`crate::patch::Patch::owned`]) in patch order;
    /// their rows come first, in that order, then one row per element no patch owns (a vertex of
    /// no face), in id order; `offsets` (one more than rows) and `items` hold the rows' lists.
    ///
    /// # Panics
    ///
    /// If `owned` names an element past the rows, or `offsets` points past `items`: the layout
    /// must be one [`cuda::CudaQueries`] made for the same patch data.
    pub fn from_patch_rows<'a>(
        query: Query,
        owned: impl IntoIterator<Item = &'a [u32]>,
        offsets: &[u32],
        items: &[u32],
    ) -> QueryResult {
        let sources = offsets.len().saturating_sub(1);
        let mut row_of = vec![u32::MAX; sources];
        let mut rows = 0u32;
        for element in owned.into_iter().flatten() {
            row_of[*element as usize] = rows;
            rows += 1;
        }
        for (next, r) in (rows..).zip(row_of.iter_mut().filter(|r| **r == u32::MAX)) {
            *r = next;
        }
        let mut out_offsets = Vec::with_capacity(sources + 1);
        let mut out = Vec::with_capacity(items.len());
        out_offsets.push(0u32);
        for &r in &row_of {
            let r = r as usize;
            out.extend_from_slice(&items[offsets[r] as usize..offsets[r + 1] as usize]);
            out_offsets.push(out.len() as u32);
        }
        QueryResult {
            query: Some(query),
            offsets: out_offsets,
            items: out,
        }
    }

    /// Writes the result as text: a header line (`#`), then one line per source element, its
    /// list as space-separated global ids.
    pub fn write_text(&self, w: &mut impl std::io::Write, what: &str) -> std::io::Result<()> {
        let q = self.query.map_or("?", Query::name);
        writeln!(
            w,
            "# rxpipe query {q} of {what}: line k + 2 lists {} k's {} (global ids)",
            self.query.map_or("element", |q| q.source().name()),
            self.query.map_or("elements", |q| q.target().plural()),
        )?;
        let mut line = String::new();
        for k in 0..self.len() {
            line.clear();
            for (i, x) in self.of(k).iter().enumerate() {
                if i > 0 {
                    line.push(' ');
                }
                line.push_str(&x.to_string());
            }
            writeln!(w, "{line}")?;
        }
        Ok(())
    }
}

/// The number of source elements of `q` in a mesh of `vertices`, `edges` and `faces`.
pub(crate) fn sources(q: Query, vertices: usize, edges: usize, faces: usize) -> usize {
    match q.source() {
        Element::Vertex => vertices,
        Element::Edge => edges,
        Element::Face => faces,
    }
}

/// The query answered from the plain index buffer (whole triangles over `vertex_count`
/// vertices), without patches: the independent reference the tests hold every implementation
/// to.
pub fn reference(indices: &[u32], vertex_count: usize, q: Query) -> QueryResult {
    let faces = indices.len() / 3;
    let idx = &indices[..3 * faces];
    // edges: sorted distinct (smaller, larger) pairs
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    let mut edges: Vec<(u32, u32)> = (0..3 * faces)
        .map(|c| key(idx[c], idx[c / 3 * 3 + (c % 3 + 1) % 3]))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let edge_id =
        |a: u32, b: u32| edges.binary_search(&key(a, b)).expect("an edge of a face") as u32;
    let fe = |f: usize| -> [u32; 3] {
        [0, 1, 2].map(|k| edge_id(idx[3 * f + k], idx[3 * f + (k + 1) % 3]))
    };
    let n = sources(q, vertex_count, edges.len(), faces);
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
    match q {
        Query::FV => {
            for (f, l) in lists.iter_mut().enumerate() {
                l.extend_from_slice(&idx[3 * f..3 * f + 3]);
            }
        }
        Query::FE => {
            for (f, l) in lists.iter_mut().enumerate() {
                l.extend_from_slice(&fe(f));
            }
        }
        Query::EV => {
            for (e, l) in lists.iter_mut().enumerate() {
                l.extend([edges[e].0, edges[e].1]);
            }
        }
        Query::VV => {
            for &(a, b) in &edges {
                if a != b {
                    lists[a as usize].push(b);
                    lists[b as usize].push(a);
                }
            }
        }
        Query::VE => {
            for (e, &(a, b)) in edges.iter().enumerate() {
                lists[a as usize].push(e as u32);
                lists[b as usize].push(e as u32);
            }
        }
        Query::VF => {
            for (c, &v) in idx.iter().enumerate() {
                lists[v as usize].push((c / 3) as u32);
            }
        }
        Query::EF => {
            for f in 0..faces {
                for e in fe(f) {
                    lists[e as usize].push(f as u32);
                }
            }
        }
        Query::FF => {
            let mut ef: Vec<Vec<u32>> = vec![Vec::new(); edges.len()];
            for f in 0..faces {
                for e in fe(f) {
                    ef[e as usize].push(f as u32);
                }
            }
            for (f, l) in lists.iter_mut().enumerate() {
                for e in fe(f) {
                    l.extend(ef[e as usize].iter().filter(|&&g| g as usize != f));
                }
            }
        }
    }
    if !matches!(q, Query::FV | Query::FE | Query::EV) {
        for l in &mut lists {
            l.sort_unstable();
            l.dedup();
        }
    }
    QueryResult::from_lists(q, lists)
}
