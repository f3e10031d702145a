// The smoothing stage on the patches (src/passes/smooth; the CPU reference is its cpu.rs): one
// block per patch; every owned vertex's weighted one-ring offset summed in shared memory in
// double precision, then the vertex moved by lambda times the weighted mean offset and written
// once (a Jacobi step: reads `in`, writes `out`).
//
//   uniform    the VV query: every local edge adds each end to the other with weight 1
//   cotangent  through the faces: every local face adds, for each of its edges, half the
//              cotangent of the opposite corner to both ends (interior edges get
//              (cot a + cot b) / 2 in all)
//
// A vertex flagged `fixed` (boundary and non-manifold vertices) or whose weights sum to zero or
// less stays where it is.

#define RXSM_UNIFORM 0
#define RXSM_COTANGENT 1

// acc[4 * i ..] += w * (pj - pi), acc[4 * i + 3] += w
__device__ __forceinline__ void rxsm_add(double* acc, unsigned i, rxd3 pi, rxd3 pj, double w) {
    atomicAdd(&acc[4 * i], w * (pj.x - pi.x));
    atomicAdd(&acc[4 * i + 1], w * (pj.y - pi.y));
    atomicAdd(&acc[4 * i + 2], w * (pj.z - pi.z));
    atomicAdd(&acc[4 * i + 3], w);
}

// Dynamic shared memory: the patch's matrices, then four doubles per owned vertex.
extern "C" __global__ void rxsm_smooth(const RxqPatch* __restrict__ patches,
                                      const unsigned* __restrict__ lv,
                                      const unsigned* __restrict__ le,
                                      const unsigned* __restrict__ lf,
                                      const unsigned short* __restrict__ ev_all,
                                      const unsigned short* __restrict__ fe_all,
                                      const float* __restrict__ in,
                                      const unsigned char* __restrict__ fixed, int method,
                                      float lambda, float* __restrict__ out) {
    extern __shared__ __align__(16) unsigned char smem[];
    const RxqPatch P = patches[blockIdx.x];
    const RxqMatrices m = rxq_load_matrices(P, ev_all, fe_all, smem);
    const unsigned short *ev = m.ev, *fe = m.fe;
    double* acc = reinterpret_cast<double*>(m.rest);
    for (unsigned i = threadIdx.x; i < 4 * P.ov; i += blockDim.x) acc[i] = 0.0;
    __syncthreads();
    const unsigned* gv = lv + P.v_off;
    if (method == RXSM_UNIFORM) {
        for (unsigned e = threadIdx.x; e < P.ne; e += blockDim.x) {
            const unsigned a = ev[2 * e], b = ev[2 * e + 1];
            if (a == b || (a >= P.ov && b >= P.ov)) continue;
            const rxd3 pa = rxd_load(in, gv[a]), pb = rxd_load(in, gv[b]);
            if (a < P.ov) rxsm_add(acc, a, pa, pb, 1.0);
            if (b < P.ov) rxsm_add(acc, b, pb, pa, 1.0);
        }
    } else {
        for (unsigned f = threadIdx.x; f < P.nf; f += blockDim.x) {
            unsigned l[3];
            if (!rxq_face_corners(ev, fe, f, P.ov, l)) continue;
            rxd3 p[3];
            for (int k = 0; k < 3; ++k) p[k] = rxd_load(in, gv[l[k]]);
            for (int k = 0; k < 3; ++k) {
                const int i = (k + 1) % 3, j = (k + 2) % 3;
                const rxd3 a = rxd_sub(p[i], p[k]), b = rxd_sub(p[j], p[k]);
                const double s = rxd_len(rxd_cross(a, b));
                if (s == 0.0) continue;
                const double w = 0.5 * rxd_dot(a, b) / s;
                if (l[i] < P.ov) rxsm_add(acc, l[i], p[i], p[j], w);
                if (l[j] < P.ov) rxsm_add(acc, l[j], p[j], p[i], w);
            }
        }
    }
    __syncthreads();
    for (unsigned v = threadIdx.x; v < P.ov; v += blockDim.x) {
        const unsigned g = gv[v];
        const double w = acc[4 * v + 3];
        const bool move = !fixed[g] && w > 0.0;
        const double s = move ? (double)lambda / w : 0.0;
        out[3 * g] = (float)((double)in[3 * g] + s * acc[4 * v]);
        out[3 * g + 1] = (float)((double)in[3 * g + 1] + s * acc[4 * v + 1]);
        out[3 * g + 2] = (float)((double)in[3 * g + 2] + s * acc[4 * v + 2]);
    }
}
