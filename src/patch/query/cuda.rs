//! The queries on the GPU (kernels/query.cu): one block per patch, the patch's EV and FE in shared
//! memory, every owned source element answered from them and their transposes. A query runs in
//! passes over the same kernel: count each list, lay the lists out (a prefix sum), fill them; a
//! user computation runs as one more pass over the filled lists.
//!
//! The user computation is CUDA C spliced into the kernel, as vertex shaders are:
//! `__device__ void rxq_user(unsigned element, const unsigned* list, unsigned n, const float* in,
//! float* out)`, called once per active source element with its list (global ids, in the
//! documented order), the user's input floats (positions, say) and the output, of which it
//! writes its element's floats (`out[element]`, or `out[3 * element + k]`). Compile errors name
//! the user's file and line.

use super::shared::{edge_faces_needs, most_shared, shared_needs, transpose_needs, SHARED_LIMIT};
use super::{sources, Query, QueryResult};
use crate::gpu::kernels::{Source, BLOCKS};
use crate::gpu::{launch, Gpu, GpuError};
use crate::patch::PatchData;
use cudarc::driver::{CudaModule, CudaSlice, DeviceRepr, PushKernelArg};
use std::sync::Arc;

/// The query kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("query.cu");

/// The patch layout every patch kernel reads (`RxqPatch`, the matrices in shared memory).
pub const PATCH: Source<'static> = rxpipe_gpu::kernel_source!("patch.cuh");

/// The user computation compiled when none is given: a list's length (a vertex's valence for VV).
pub const USER_LENGTH: &str = "__device__ void rxq_user(unsigned element, const unsigned* list, unsigned n,\n                         const float* in, float* out) {\n    out[element] = (float)n;\n}\n";

/// The passes of kernels/query.cu.
const RXQ_COUNT: u32 = 0;
const RXQ_FILL: u32 = 1;
const RXQ_USER: u32 = 2;

/// The flags of kernels/query.cu: lists in patch rows; no patch has an edge of three faces.
const RXQ_PATCH_ROWS: u32 = 1;
const RXQ_MANIFOLD: u32 = 2;

/// A query's device buffers, as its passes hand them on.
struct Buffers {
    /// one flag per source element (`None`: all active)
    active: Option<CudaSlice<u8>>,
    /// each list's length (the count pass)
    counts: CudaSlice<u32>,
    /// whether the rows are in patch order ([`Rows::Patch`])
    patch_rows: bool,
    /// where each row's list starts (one more than source elements; set before the fill pass)
    offsets: CudaSlice<u32>,
    /// the lists
    items: CudaSlice<u32>,
    /// the user computation's input and output
    input: CudaSlice<f32>,
    out: CudaSlice<f32>,
}

/// How a query's lists are laid out in their compressed rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rows {
    /// a row per element in global id order (what [`QueryResult`] holds)
    #[default]
    Element,
    /// patch by patch, each patch's owned elements in local order (the RXMesh paper's 'thread
    /// order'): a block writes its rows together whatever the order of the global ids;
    /// [`QueryLists::download`] puts them back in element order
    Patch,
}

/// Threads per block (per patch; the query kernels' `__launch_bounds__` are for 256).
const BLOCK: u32 = 256;
/// One patch as the kernel reads it (`RxqPatch` in kernels/query.cu).
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct PatchInfo {
    v_off: u32,
    e_off: u32,
    f_off: u32,
    nv: u32,
    ne: u32,
    nf: u32,
    ov: u32,
    oe: u32,
    of: u32,
    /// the first row of the patch's owned vertices, edges and faces in [`Rows::Patch`]
    vrow: u32,
    erow: u32,
    frow: u32,
}

// SAFETY: twelve u32, the layout of the CUDA struct.
unsafe impl DeviceRepr for PatchInfo {}

/// The patch data on the device: every patch's maps and matrices, end to end.
pub struct DevicePatchData {
    /// unique in the process: the lists laid out for this data are filled only from it
    id: u64,
    patches: CudaSlice<PatchInfo>,
    /// the patch table on the host (to put lists laid out in patch order back in element order)
    info: Vec<PatchInfo>,
    lv: CudaSlice<u32>,
    le: CudaSlice<u32>,
    lf: CudaSlice<u32>,
    ev: CudaSlice<u16>,
    fe: CudaSlice<u16>,
    /// patches (one block each)
    pub(crate) count: u32,
    /// global vertices, edges and faces
    pub(crate) vertices: usize,
    pub(crate) edges: usize,
    pub(crate) faces: usize,
    /// the largest patch's shared memory for VV, VE and VF ([`transpose_needs`]), and for
    /// EF's and FF's general paths ([`shared_needs`])
    shared_transposes: [usize; 3],
    shared: usize,
    shared_ff: usize,
    /// the shared memory of EF's and FF's manifold path ([`edge_faces_needs`])
    shared_edge_faces: [usize; 2],
    /// no edge of any patch has more than two faces: EF and FF never take their general path
    manifold: bool,
    /// the largest patch's matrices in shared memory (`rxq_matrix_bytes`)
    pub(crate) matrix_bytes: usize,
    /// the most vertices a patch owns
    pub(crate) max_owned_vertices: usize,
}

impl DevicePatchData {
    /// Uploads `d`. A patch too large for a block's shared memory is an error naming it (see
    /// [`crate::patch::fit`], which splits such patches first).
    pub fn upload(gpu: &Gpu, d: &PatchData) -> Result<DevicePatchData, GpuError> {
        let mut info = Vec::with_capacity(d.patches.len());
        let (mut lv, mut le, mut lf) = (Vec::new(), Vec::new(), Vec::new());
        let (mut ev, mut fe) = (Vec::new(), Vec::new());
        let (mut shared, mut shared_ff) = (0usize, 0usize);
        let (mut shared_edge_faces, mut manifold) = ([0usize; 2], true);
        let mut shared_transposes = [0usize; 3];
        let (mut matrix_bytes, mut max_owned_vertices) = (0usize, 0usize);
        let mut rows = [0u32; 3];
        for (k, p) in d.patches.iter().enumerate() {
            let (nv, ne, nf) = (p.vertices.len(), p.edges.len(), p.faces.len());
            let (matrices, s, s_ff) = shared_needs(p);
            let (edge_faces, two_faces) = edge_faces_needs(p);
            let transposes = transpose_needs(p);
            let most = most_shared(s, s_ff, edge_faces, transposes);
            if most > SHARED_LIMIT {
                return Err(GpuError::Limit(format!(
                    "patch {k} with its ribbon ({nv} vertices, {ne} edges, {nf} faces) needs {most} bytes of shared memory for its queries, more than a block has ({SHARED_LIMIT}); patch with a smaller size, or let patch::fit split it"
                )));
            }
            shared = shared.max(s);
            shared_ff = shared_ff.max(s_ff);
            shared_transposes = [0, 1, 2].map(|i| shared_transposes[i].max(transposes[i]));
            shared_edge_faces = [0, 1].map(|i| shared_edge_faces[i].max(edge_faces[i]));
            manifold &= two_faces;
            matrix_bytes = matrix_bytes.max(matrices);
            max_owned_vertices = max_owned_vertices.max(p.owned_vertices as usize);
            info.push(PatchInfo {
                v_off: lv.len() as u32,
                e_off: le.len() as u32,
                f_off: lf.len() as u32,
                nv: nv as u32,
                ne: ne as u32,
                nf: nf as u32,
                ov: p.owned_vertices as u32,
                oe: p.owned_edges as u32,
                of: p.owned_faces as u32,
                vrow: rows[0],
                erow: rows[1],
                frow: rows[2],
            });
            rows[0] += p.owned_vertices as u32;
            rows[1] += p.owned_edges as u32;
            rows[2] += p.owned_faces as u32;
            lv.extend_from_slice(&p.vertices);
            le.extend_from_slice(&p.edges);
            lf.extend_from_slice(&p.faces);
            ev.extend_from_slice(&p.ev);
            fe.extend_from_slice(&p.fe);
        }
        // the kernels stage maps and matrices in 16-byte pieces (`rxp_stage`), which may read
        // up to 15 bytes past the last patch's
        lv.extend([0; 4]);
        le.extend([0; 4]);
        lf.extend([0; 4]);
        ev.extend([0; 8]);
        fe.extend([0; 8]);
        // (each element of a face is owned by exactly one patch; a vertex of no face by none:
        // its row, empty, follows the patches' in patch order)
        let elements = [d.vertex_owner.len(), d.edges.len(), d.face_owner.len()];
        if rows.iter().zip(elements).any(|(&r, e)| r as usize > e) {
            return Err(GpuError::Limit(format!(
                "the patches own {rows:?} vertices, edges and faces of a mesh of {elements:?}"
            )));
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(DevicePatchData {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            patches: gpu.upload(&info, "patches")?,
            info,
            lv: gpu.upload(&lv, "patch vertex maps")?,
            le: gpu.upload(&le, "patch edge maps")?,
            lf: gpu.upload(&lf, "patch face maps")?,
            ev: gpu.upload(&ev, "patch EV matrices")?,
            fe: gpu.upload(&fe, "patch FE matrices")?,
            count: d.patches.len() as u32,
            vertices: d.vertex_owner.len(),
            edges: d.edges.len(),
            faces: d.face_owner.len(),
            shared_transposes,
            shared,
            shared_ff,
            shared_edge_faces,
            manifold,
            matrix_bytes,
            max_owned_vertices,
        })
    }

    /// Pushes the arguments every patch kernel starts with: the patch table, the vertex, edge
    /// and face maps, EV and FE (`const RxqPatch*, const unsigned* lv, le, lf, const unsigned
    /// short* ev, fe`).
    pub(crate) fn push_args<'a>(&'a self, l: &mut cudarc::driver::LaunchArgs<'a>) {
        l.arg(&self.patches)
            .arg(&self.lv)
            .arg(&self.le)
            .arg(&self.lf)
            .arg(&self.ev)
            .arg(&self.fe);
    }
}

/// The query kernels compiled with one user computation.
pub struct CudaQueries {
    pub gpu: Arc<Gpu>,
    module: Arc<CudaModule>,
}

impl CudaQueries {
    /// The kernels with the default user computation ([`USER_LENGTH`]).
    pub fn new(gpu: Arc<Gpu>) -> Result<CudaQueries, GpuError> {
        CudaQueries::with_user(gpu, "rxq_user (built in)", USER_LENGTH)
    }

    /// The kernels with the user computation `source` (CUDA C defining `rxq_user`); `name` is
    /// what compile errors call it.
    pub fn with_user(gpu: Arc<Gpu>, name: &str, source: &str) -> Result<CudaQueries, GpuError> {
        let module = gpu.module(
            "query",
            &[Source { name, text: source }, BLOCKS, PATCH, KERNELS],
            &[],
        )?;
        Ok(CudaQueries { gpu, module })
    }

    /// One pass of `q` over every patch (`RXQ_COUNT`, `RXQ_FILL` or `RXQ_USER`).
    fn pass(
        &self,
        d: &DevicePatchData,
        q: Query,
        pass: u32,
        b: &mut Buffers,
    ) -> Result<(), GpuError> {
        if d.count == 0 {
            return Ok(());
        }
        // (a kernel per kind of query, none paying another's registers: kernels/query.cu)
        let name = format!("rxq_query_{}", q.name());
        let f = self.gpu.function(&self.module, &name)?;
        // (EF and FF start on their manifold path, and take the general one where a patch has
        // an edge of three faces)
        let smem = match q {
            Query::EF if d.manifold => d.shared_edge_faces[0],
            Query::FF if d.manifold => d.shared_edge_faces[1],
            Query::EF => d.shared.max(d.shared_edge_faces[0]),
            Query::FF => d.shared_ff.max(d.shared_edge_faces[1]),
            Query::VV => d.shared_transposes[0],
            Query::VE => d.shared_transposes[1],
            Query::VF => d.shared_transposes[2],
            // the fixed-length queries read their rows of the matrices in global memory
            Query::FV | Query::FE | Query::EV => 0,
        };
        let null = 0u64;
        let mut l = self.gpu.stream.launch_builder(&f);
        d.push_args(&mut l);
        l.arg(&pass);
        match &b.active {
            Some(a) => l.arg(a),
            None => l.arg(&null),
        };
        // (with RXQ_MANIFOLD, EF and FF skip their check for edges of three faces)
        let flags = if b.patch_rows { RXQ_PATCH_ROWS } else { 0 }
            | if d.manifold { RXQ_MANIFOLD } else { 0 };
        l.arg(&flags)
            .arg(&mut b.counts)
            .arg(&b.offsets)
            .arg(&mut b.items)
            .arg(&b.input)
            .arg(&mut b.out);
        // SAFETY: one block per patch; the patch table's offsets and sizes describe the
        // uploaded maps and matrices, the shared memory covers the largest patch's needs, and
        // counts, offsets, items and the user's output are sized for the query's source and
        // result counts (the fill pass writes exactly the counted lists).
        unsafe { launch(l, d.count, BLOCK, smem as u32, &name) }
    }

    /// Answers `q` for every element (or the `active` ones: one flag per source element; the
    /// others get empty lists).
    pub fn run(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
    ) -> Result<QueryResult, GpuError> {
        self.run_in(d, q, active, Rows::Element)
    }

    /// [`CudaQueries::run`] with the lists laid out in `rows` on the device; the result is in
    /// element order either way.
    pub fn run_in(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
        rows: Rows,
    ) -> Result<QueryResult, GpuError> {
        Ok(self.passes(d, q, active, None, rows)?.0)
    }

    /// Runs the user computation on every (active) element's list of `q`, with `input` as its
    /// `in` and an output of `per_element` floats per source element (zero where it did not
    /// run), which it returns.
    pub fn for_each(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
        input: &[f32],
        per_element: usize,
    ) -> Result<Vec<f32>, GpuError> {
        // the user's computation reads the lists where the fill pass put them: in patch order
        // a block's lists are its own, whatever the order of the global ids
        Ok(self
            .passes(d, q, active, Some((input, per_element)), Rows::Patch)?
            .1)
    }

    fn passes(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
        user: Option<(&[f32], usize)>,
        rows: Rows,
    ) -> Result<(QueryResult, Vec<f32>), GpuError> {
        let mut lists = self.lay_out(d, q, active, user, rows)?;
        self.fill(d, &mut lists)?;
        if user.is_some() {
            self.pass(d, q, RXQ_USER, &mut lists.b)?;
        }
        let out = match user {
            Some((_, per)) => self
                .gpu
                .download(&lists.b.out, lists.sources * per.max(1))?,
            None => Vec::new(),
        };
        let result = match user {
            Some(_) => QueryResult::default(),
            None => lists.download(&self.gpu, d)?,
        };
        Ok((result, out))
    }

    /// Lays out the lists of `q` on the device (for the `active` elements) in `rows`: the count
    /// pass, the offsets (a prefix sum on the host) and room for the lists, which
    /// [`CudaQueries::fill`] writes.
    pub fn layout(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
        rows: Rows,
    ) -> Result<QueryLists, GpuError> {
        self.lay_out(d, q, active, None, rows)
    }

    fn lay_out(
        &self,
        d: &DevicePatchData,
        q: Query,
        active: Option<&[bool]>,
        user: Option<(&[f32], usize)>,
        rows: Rows,
    ) -> Result<QueryLists, GpuError> {
        let gpu = &self.gpu;
        let n = sources(q, d.vertices, d.edges, d.faces);
        if let Some(a) = active {
            if a.len() != n {
                return Err(GpuError::Limit(format!(
                    "{} active flags for {n} source elements of {q}",
                    a.len()
                )));
            }
        }
        let active_d = match active {
            Some(a) => {
                let flags: Vec<u8> = a.iter().map(|&x| x as u8).collect();
                Some(gpu.upload(&flags, "active elements")?)
            }
            None => None,
        };
        let per = user.map_or(1, |u| u.1.max(1));
        let mut b = Buffers {
            active: active_d,
            patch_rows: rows == Rows::Patch,
            counts: gpu.zeros(n.max(1), "query list lengths")?,
            offsets: gpu.zeros(1, "no offsets yet")?,
            items: gpu.zeros(1, "no lists yet")?,
            input: gpu.upload(user.map_or(&[0.0][..], |u| u.0), "the user's input")?,
            out: gpu.zeros((n * per).max(1), "the user's output")?,
        };
        self.pass(d, q, RXQ_COUNT, &mut b)?;
        let lengths = gpu.download(&b.counts, n)?;
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut total = 0u64;
        for &c in &lengths {
            total += c as u64;
            if total > u32::MAX as u64 {
                return Err(GpuError::Limit(format!(
                    "{q} lists hold more than {} entries",
                    u32::MAX
                )));
            }
            offsets.push(total as u32);
        }
        // (EF's kernel stages a patch's offsets in 16-byte pieces, `rxp_stage`, which may read up
        // to 15 bytes past the last row's)
        offsets.extend([total as u32; 4]);
        b.offsets = gpu.upload(&offsets, "query list offsets")?;
        offsets.truncate(n + 1);
        b.items = gpu.zeros((total as usize).max(1), "query lists")?;
        Ok(QueryLists {
            query: q,
            rows,
            data: d.id,
            sources: n,
            offsets,
            b,
        })
    }

    /// The fill pass: writes every (active) element's list of `lists.query` at its offset, in
    /// the documented order. The lists must have been laid out for `d` (the kernel takes their
    /// lengths from the layout).
    pub fn fill(&self, d: &DevicePatchData, lists: &mut QueryLists) -> Result<(), GpuError> {
        if lists.data != d.id {
            return Err(GpuError::Limit(
                "these query lists were laid out for other patch data".into(),
            ));
        }
        self.pass(d, lists.query, RXQ_FILL, &mut lists.b)
    }
}

/// A query's lists laid out on the device ([`CudaQueries::layout`]).
pub struct QueryLists {
    query: Query,
    rows: Rows,
    /// the [`DevicePatchData`] they were laid out for
    data: u64,
    sources: usize,
    offsets: Vec<u32>,
    b: Buffers,
}

impl QueryLists {
    /// Where each row's list starts, on the device (one more entry than source elements).
    pub fn offsets(&self) -> &CudaSlice<u32> {
        &self.b.offsets
    }

    /// The number of list entries.
    pub fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0) as usize
    }

    /// The lists as the last fill pass left them, in element order (from `d`, the data they
    /// were laid out for).
    pub fn download(&self, gpu: &Gpu, d: &DevicePatchData) -> Result<QueryResult, GpuError> {
        if self.data != d.id {
            return Err(GpuError::Limit(
                "these query lists were laid out for other patch data".into(),
            ));
        }
        let items = gpu.download(&self.b.items, self.total())?;
        if self.rows == Rows::Element {
            return Ok(QueryResult {
                query: Some(self.query),
                offsets: self.offsets.clone(),
                items,
            });
        }
        // a patch's owned elements are the first entries of its part of the maps, and its rows
        // follow the previous patches' (vrow, erow and frow are those running sums)
        let (map, len) = match self.query.source() {
            super::Element::Vertex => (&d.lv, d.lv.len()),
            super::Element::Edge => (&d.le, d.le.len()),
            super::Element::Face => (&d.lf, d.lf.len()),
        };
        let map = gpu.download(map, len)?;
        let owned = d.info.iter().map(|p| {
            let (off, n) = match self.query.source() {
                super::Element::Vertex => (p.v_off, p.ov),
                super::Element::Edge => (p.e_off, p.oe),
                super::Element::Face => (p.f_off, p.of),
            };
            &map[off as usize..(off + n) as usize]
        });
        Ok(QueryResult::from_patch_rows(
            self.query,
            owned,
            &self.offsets,
            &items,
        ))
    }
}
