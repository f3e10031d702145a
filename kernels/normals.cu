// The normals stage (src/passes/normals): vertex normals from the triangles, in double precision
// so that they match the float64 reference; the CPU reference is src/passes/normals/cpu.rs.
//
//   rxn_accumulate  one thread per triangle of the index buffer (the hardwired form): each
//                   corner's weighted face normal added to its vertex with double atomics
//   rxn_patch_fv    the same through the patches' FV query (RXMesh's Listing 1): one block per
//                   patch, each owned face's corners read from its rows of FE and EV
//   rxn_patch_vf    through the VF query: one block per patch; every local face (ribbon
//                   included) adds its corner weights to the patch's owned vertices in shared
//                   memory (the VF transpose, accumulated rather than listed), and each owned
//                   vertex writes its unit normal once: no global atomics, no second pass
//   rxn_normalize   one thread per vertex: the sum normalised to float (zero stays zero)
//   rxn_flat        one thread per triangle: three new vertices with the unit face normal
//
// Weights (rxn_corner): area, the face's cross product (twice its area); angle, the unit face
// normal times the corner's angle (Thurmer and Wuthrich); max, the cross product over the squared
// lengths of the corner's two edges (Max 1999).

#define RXN_AREA 0
#define RXN_ANGLE 1
#define RXN_MAX 2

// The weighted normal corner k of the triangle p adds to its vertex (zero for a degenerate one).
__device__ __forceinline__ rxd3 rxn_corner(const rxd3 p[3], int k, int mode) {
    const rxd3 n = rxd_cross(rxd_sub(p[1], p[0]), rxd_sub(p[2], p[0]));
    const rxd3 a = rxd_sub(p[(k + 1) % 3], p[k]), b = rxd_sub(p[(k + 2) % 3], p[k]);
    double w = 1.0;
    if (mode == RXN_ANGLE) {
        const double l = rxd_len(n);
        w = l == 0.0 ? 0.0 : rxd_angle(a, b) / l;
    } else if (mode == RXN_MAX) {
        const double d = rxd_dot(a, a) * rxd_dot(b, b);
        w = d == 0.0 ? 0.0 : 1.0 / d;
    }
    return {n.x * w, n.y * w, n.z * w};
}

__device__ __forceinline__ void rxn_add(double* acc, unsigned v, rxd3 w) {
    atomicAdd(&acc[3 * v], w.x);
    atomicAdd(&acc[3 * v + 1], w.y);
    atomicAdd(&acc[3 * v + 2], w.z);
}

extern "C" __global__ void rxn_accumulate(const float* __restrict__ pos, const unsigned* __restrict__ idx,
                                          unsigned triangles, int mode, double* __restrict__ acc) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= triangles) return;
    const unsigned v[3] = {idx[3 * t], idx[3 * t + 1], idx[3 * t + 2]};
    const rxd3 p[3] = {rxd_load(pos, v[0]), rxd_load(pos, v[1]), rxd_load(pos, v[2])};
    for (int k = 0; k < 3; ++k) rxn_add(acc, v[k], rxn_corner(p, k, mode));
}

// Each owned face's FE row and its edges' EV rows are read where they are, as the FV query
// reads them (query.cu): no copy of the patch's matrices into shared memory, none of the
// ribbon's rows, no barrier (the copy cost more than the reads it saved).
extern "C" __global__ void rxn_patch_fv(const RxqPatch* __restrict__ patches,
                                        const unsigned* __restrict__ lv,
                                        const unsigned* __restrict__ le,
                                        const unsigned* __restrict__ lf,
                                        const unsigned short* __restrict__ ev_all,
                                        const unsigned short* __restrict__ fe_all,
                                        const float* __restrict__ pos, int mode,
                                        double* __restrict__ acc) {
    const RxqPatch P = patches[blockIdx.x];
    const unsigned short* ev = ev_all + 2ull * P.e_off;
    const unsigned short* fe = fe_all + 3ull * P.f_off;
    const unsigned* gv = lv + P.v_off;
    for (unsigned f = threadIdx.x; f < P.of; f += blockDim.x) {
        unsigned v[3];
        rxd3 p[3];
        for (int k = 0; k < 3; ++k) {
            v[k] = gv[rxq_corner(ev, fe, f, k)];
            p[k] = rxd_load(pos, v[k]);
        }
        for (int k = 0; k < 3; ++k) rxn_add(acc, v[k], rxn_corner(p, k, mode));
    }
}

// Dynamic shared memory: the patch's matrices, then three doubles per owned vertex.
extern "C" __global__ void rxn_patch_vf(const RxqPatch* __restrict__ patches,
                                        const unsigned* __restrict__ lv,
                                        const unsigned* __restrict__ le,
                                        const unsigned* __restrict__ lf,
                                        const unsigned short* __restrict__ ev_all,
                                        const unsigned short* __restrict__ fe_all,
                                        const float* __restrict__ pos, int mode,
                                        float* __restrict__ out) {
    extern __shared__ __align__(16) unsigned char smem[];
    const RxqPatch P = patches[blockIdx.x];
    const RxqMatrices m = rxq_load_matrices(P, ev_all, fe_all, smem);
    const unsigned short *ev = m.ev, *fe = m.fe;
    double* sum = reinterpret_cast<double*>(m.rest);
    for (unsigned i = threadIdx.x; i < 3 * P.ov; i += blockDim.x) sum[i] = 0.0;
    __syncthreads();
    const unsigned* gv = lv + P.v_off;
    for (unsigned f = threadIdx.x; f < P.nf; f += blockDim.x) {
        unsigned l[3];
        if (!rxq_face_corners(ev, fe, f, P.ov, l)) continue;
        rxd3 p[3];
        for (int k = 0; k < 3; ++k) p[k] = rxd_load(pos, gv[l[k]]);
        for (int k = 0; k < 3; ++k)
            if (l[k] < P.ov) rxn_add(sum, l[k], rxn_corner(p, k, mode));
    }
    __syncthreads();
    for (unsigned v = threadIdx.x; v < P.ov; v += blockDim.x) {
        const rxd3 s = {sum[3 * v], sum[3 * v + 1], sum[3 * v + 2]};
        const double n = rxd_len(s);
        const double r = n > 0.0 ? 1.0 / n : 0.0;
        const unsigned g = gv[v];
        out[3 * g] = (float)(s.x * r);
        out[3 * g + 1] = (float)(s.y * r);
        out[3 * g + 2] = (float)(s.z * r);
    }
}

extern "C" __global__ void rxn_normalize(const double* __restrict__ acc, unsigned vertices,
                                         float* __restrict__ out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= vertices) return;
    const rxd3 s = {acc[3 * i], acc[3 * i + 1], acc[3 * i + 2]};
    const double l = rxd_len(s);
    const double r = l > 0.0 ? 1.0 / l : 0.0;
    out[3 * i] = (float)(s.x * r);
    out[3 * i + 1] = (float)(s.y * r);
    out[3 * i + 2] = (float)(s.z * r);
}

// uv and out_uv may be null (the mesh has no texture coordinates)
extern "C" __global__ void rxn_flat(const float* __restrict__ pos, const float* __restrict__ uv,
                                    const unsigned* __restrict__ idx, unsigned triangles,
                                    float* __restrict__ out_pos, float* __restrict__ out_nrm,
                                    float* __restrict__ out_uv, unsigned* __restrict__ out_idx) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= triangles) return;
    const unsigned v[3] = {idx[3 * t], idx[3 * t + 1], idx[3 * t + 2]};
    const rxd3 p[3] = {rxd_load(pos, v[0]), rxd_load(pos, v[1]), rxd_load(pos, v[2])};
    const rxd3 n = rxd_cross(rxd_sub(p[1], p[0]), rxd_sub(p[2], p[0]));
    const double l = rxd_len(n);
    const double r = l > 0.0 ? 1.0 / l : 0.0;
    for (int k = 0; k < 3; ++k) {
        const unsigned o = 3 * t + k;
        for (int c = 0; c < 3; ++c) out_pos[3 * o + c] = pos[3 * v[k] + c];
        out_nrm[3 * o] = (float)(n.x * r);
        out_nrm[3 * o + 1] = (float)(n.y * r);
        out_nrm[3 * o + 2] = (float)(n.z * r);
        if (uv) {
            out_uv[2 * o] = uv[2 * v[k]];
            out_uv[2 * o + 1] = uv[2 * v[k] + 1];
        }
        out_idx[o] = o;
    }
}
