//! What a patch needs of one block's shared memory in the query kernels (kernels/query.cu), and
//! whether it fits: [`crate::patch::fit`] splits the patches that do not, on both backends alike,
//! so that the CPU and the GPU work on the same patches.

/// Dynamic shared memory a block may use: 48 KB without opting in, less 1 KB for the static
/// shared memory of the kernels that take dynamic memory (128 bytes: the block scan's sums),
/// which counts against the same 48 KB (the fixed-length queries' 3 KB of static memory go
/// with none).
pub const SHARED_LIMIT: usize = 47 * 1024;

/// A patch's shared memory in the query kernels: its matrices; EF's general path (the matrices,
/// then a counter, a list start and an output offset per owned source and the lists, each face
/// adding itself to its three edges); and FF's general path.
pub(crate) fn shared_needs(p: &crate::patch::Patch) -> (usize, usize, usize) {
    let (ne, nf) = (p.edges.len(), p.faces.len());
    let matrices = (2 * (2 * ne + 3 * nf)).next_multiple_of(16);
    let owned = (p.owned_vertices.max(p.owned_edges).max(p.owned_faces)) as usize;
    let s = matrices + 4 * (3 * owned + 1) + 4 * (2 * ne).max(3 * nf);
    let s_ff = matrices + 4 * (2 * ne + 1) + 2 * 3 * nf;
    (matrices, s, s_ff)
}

/// The room `rxp_stage` (kernels/blocks.cuh) takes for `bytes` staged: 32 bytes more, rounded up
/// to 16.
pub(crate) fn stage_room(bytes: usize) -> usize {
    (bytes + 32).next_multiple_of(16)
}

/// The shared memory of VV, VE and VF (`rxq_query_vv`, `_ve` and `_vf`), each laid out for
/// what it reads: EV, FE (VF) and the map of the elements its lists hold, staged (`rxp_stage`:
/// 32 bytes more each, 16-byte aligned); then a zero word, a counter, a list start and an
/// output offset per owned vertex, and the lists (an edge adds itself to both its vertices, a
/// face to its three). With cursors (no starts or offsets) the lists begin after the counters,
/// at the next 16 bytes and up to 3 words on (their skew): at most `ov + 7` words in.
pub(crate) fn transpose_needs(p: &crate::patch::Patch) -> [usize; 3] {
    let (nv, ne, nf) = (p.vertices.len(), p.edges.len(), p.faces.len());
    let ov = p.owned_vertices as usize;
    let common = stage_room(4 * ne) + 4 * (3 * ov + 2).max(ov + 7);
    [
        common + stage_room(4 * nv) + 4 * 2 * ne,
        common + stage_room(4 * ne) + 4 * 2 * ne,
        common + stage_room(6 * nf) + stage_room(4 * nf) + 4 * 3 * nf,
    ]
}

/// The shared memory of the manifold path of EF and FF (`rxq_query_ef` and
/// `rxq_query_ff`), for EF and for FF: a face count and two faces per edge (EF's owned
/// edges, every local edge for FF), then for EF the staged FE rows, face map and list offsets
/// (`rxp_stage`: 32 bytes more each, 16-byte aligned); and whether every edge of the patch has at
/// most two faces (as the kernel counts them: each face once per distinct edge), where the kernel
/// never takes its general path.
pub(crate) fn edge_faces_needs(p: &crate::patch::Patch) -> ([usize; 2], bool) {
    let (ne, nf) = (p.edges.len(), p.faces.len());
    let slots = |n: usize| (4 * ((n + 1) & !1) + 8 * n).next_multiple_of(16);
    let oe = p.owned_edges as usize;
    let bytes = [
        slots(oe) + stage_room(6 * nf) + stage_room(4 * nf) + stage_room(4 * (oe + 1)),
        slots(ne),
    ];
    let mut faces = vec![0u8; ne];
    for row in p.fe.chunks_exact(3) {
        let es = [row[0] >> 1, row[1] >> 1, row[2] >> 1];
        for c in 0..3 {
            if es[..c].contains(&es[c]) {
                continue;
            }
            let n = &mut faces[es[c] as usize];
            *n += 1;
            if *n > 2 {
                return (bytes, false);
            }
        }
    }
    (bytes, true)
}

/// Whether one block's shared memory holds the patch for every query (and so for every patch
/// kernel); [`crate::patch::fit`] splits the patches that it does not.
pub fn fits_shared(p: &crate::patch::Patch) -> bool {
    let (_, s, s_ff) = shared_needs(p);
    most_shared(s, s_ff, edge_faces_needs(p).0, transpose_needs(p)) <= SHARED_LIMIT
}

/// The most shared memory any query kernel takes for a patch, from its needs: EF's and FF's
/// general paths, their manifold path, and VV's, VE's and VF's.
pub(crate) fn most_shared(
    s: usize,
    s_ff: usize,
    edge_faces: [usize; 2],
    transposes: [usize; 3],
) -> usize {
    [s, s_ff]
        .into_iter()
        .chain(edge_faces)
        .chain(transposes)
        .max()
        .unwrap_or(0)
}
