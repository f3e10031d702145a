// A patch as the patch kernels read it (src/patch/query/cuda.rs: PatchInfo, DevicePatchData):
// offsets into the concatenated local-to-global maps (the matrices follow the edge and face
// maps), sizes, owned counts, and the first row of the patch's owned vertices, edges and faces
// when query results are laid out patch by patch (each patch's owned elements in local order,
// patch after patch: the RXMesh paper's 'thread order'). The queries (query.cu), the normals through them (normals.cu)
// and smoothing (smooth.cu) share it.
#pragma once

struct RxqPatch {
    unsigned v_off, e_off, f_off;
    unsigned nv, ne, nf;
    unsigned ov, oe, of;
    unsigned vrow, erow, frow;
};

// The patch's matrices in shared memory: EV (two local vertices per local edge), FE (three
// `edge << 1 | flipped` per local face), and `rest`, the first 16-byte-aligned byte after them
// for the kernel's own shared arrays.
struct RxqMatrices {
    unsigned short* ev;
    unsigned short* fe;
    unsigned char* rest;
};

// Bytes of shared memory the two matrices take, rounded up to 16.
__device__ __forceinline__ unsigned rxq_matrix_bytes(const RxqPatch& P) {
    return (2 * (2 * P.ne + 3 * P.nf) + 15) & ~15u;
}

// Copies the patch's EV (when `ev`) and FE (when `fe`) into shared memory at `smem` (16-byte
// aligned), each at its place whether copied or not; the caller synchronises before reading them.
__device__ __forceinline__ RxqMatrices rxq_load_matrices_of(const RxqPatch& P,
                                                            const unsigned short* __restrict__ ev_all,
                                                            const unsigned short* __restrict__ fe_all,
                                                            unsigned char* smem, bool ev, bool fe) {
    RxqMatrices m;
    m.ev = reinterpret_cast<unsigned short*>(smem);
    m.fe = m.ev + 2 * P.ne;
    m.rest = smem + rxq_matrix_bytes(P);
    const unsigned short* gev = ev_all + 2ull * P.e_off;
    const unsigned short* gfe = fe_all + 3ull * P.f_off;
    if (ev)
        for (unsigned i = threadIdx.x; i < 2 * P.ne; i += blockDim.x) m.ev[i] = gev[i];
    if (fe)
        for (unsigned i = threadIdx.x; i < 3 * P.nf; i += blockDim.x) m.fe[i] = gfe[i];
    return m;
}

// Both matrices (rxq_load_matrices_of).
__device__ __forceinline__ RxqMatrices rxq_load_matrices(const RxqPatch& P,
                                                         const unsigned short* __restrict__ ev_all,
                                                         const unsigned short* __restrict__ fe_all,
                                                         unsigned char* smem) {
    return rxq_load_matrices_of(P, ev_all, fe_all, smem, true, true);
}

// Corner c of local face f as a local vertex: the start of the face's c-th edge.
__device__ __forceinline__ unsigned rxq_corner(const unsigned short* ev, const unsigned short* fe,
                                               unsigned f, unsigned c) {
    const unsigned e = fe[3 * f + c];
    return (unsigned)ev[2 * (e >> 1) + (e & 1)];
}

// The local corners of local face f into l; whether one of them is among the `owned` first
// vertices (a ribbon face touching none of them adds nothing to the patch's own vertices).
__device__ __forceinline__ bool rxq_face_corners(const unsigned short* ev, const unsigned short* fe,
                                                 unsigned f, unsigned owned, unsigned l[3]) {
    bool any = false;
    for (unsigned c = 0; c < 3; ++c) {
        l[c] = rxq_corner(ev, fe, f, c);
        any |= l[c] < owned;
    }
    return any;
}
