// A patch as the patch kernels read it (src/patch/query/cuda.rs: PatchInfo, DevicePatchData):
// offsets into the concatenated local-to-global maps (the matrices follow the edge and face
// maps), sizes and owned counts. The queries (query.cu), the normals through them (normals.cu)
// and smoothing (smooth.cu) share it.
#pragma once

struct RxqPatch {
    unsigned v_off, e_off, f_off;
    unsigned nv, ne, nf;
    unsigned ov, oe, of;
};

// Copies the patch's EV (two local vertices per local edge) and FE (three `edge << 1 | flipped`
// per local face) into shared memory at `ev` and `fe` (2 * ne and 3 * nf entries); the caller
// synchronises before reading them.
__device__ __forceinline__ void rxq_load_matrices(const RxqPatch& P,
                                                  const unsigned short* __restrict__ ev_all,
                                                  const unsigned short* __restrict__ fe_all,
                                                  unsigned short* ev, unsigned short* fe) {
    const unsigned short* gev = ev_all + 2ull * P.e_off;
    const unsigned short* gfe = fe_all + 3ull * P.f_off;
    for (unsigned i = threadIdx.x; i < 2 * P.ne; i += blockDim.x) ev[i] = gev[i];
    for (unsigned i = threadIdx.x; i < 3 * P.nf; i += blockDim.x) fe[i] = gfe[i];
}

// Corner c of local face f as a local vertex: the start of the face's c-th edge.
__device__ __forceinline__ unsigned rxq_corner(const unsigned short* ev, const unsigned short* fe,
                                               unsigned f, unsigned c) {
    const unsigned e = fe[3 * f + c];
    return (unsigned)ev[2 * (e >> 1) + (e & 1)];
}

// Bytes of shared memory the two matrices take, rounded up to 16.
__device__ __forceinline__ unsigned rxq_matrix_bytes(const RxqPatch& P) {
    return (2 * (2 * P.ne + 3 * P.nf) + 15) & ~15u;
}
