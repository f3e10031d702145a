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

#define RXS_UNIFORM 0
#define RXS_COTANGENT 1

struct rxs_d3 {
    double x, y, z;
};

__device__ __forceinline__ rxs_d3 rxs_load(const float* p, unsigned i) {
    return {(double)p[3 * i], (double)p[3 * i + 1], (double)p[3 * i + 2]};
}

// acc[4 * i ..] += w * (pj - pi), acc[4 * i + 3] += w
__device__ __forceinline__ void rxs_add(double* acc, unsigned i, rxs_d3 pi, rxs_d3 pj, double w) {
    atomicAdd(&acc[4 * i], w * (pj.x - pi.x));
    atomicAdd(&acc[4 * i + 1], w * (pj.y - pi.y));
    atomicAdd(&acc[4 * i + 2], w * (pj.z - pi.z));
    atomicAdd(&acc[4 * i + 3], w);
}

// Dynamic shared memory: the patch's matrices, then four doubles per owned vertex.
extern "C" __global__ void rxs_smooth(const RxqPatch* __restrict__ patches,
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
    unsigned short* ev = reinterpret_cast<unsigned short*>(smem);
    unsigned short* fe = ev + 2 * P.ne;
    double* acc = reinterpret_cast<double*>(smem + rxq_matrix_bytes(P));
    rxq_load_matrices(P, ev_all, fe_all, ev, fe);
    for (unsigned i = threadIdx.x; i < 4 * P.ov; i += blockDim.x) acc[i] = 0.0;
    __syncthreads();
    const unsigned* gv = lv + P.v_off;
    if (method == RXS_UNIFORM) {
        for (unsigned e = threadIdx.x; e < P.ne; e += blockDim.x) {
            const unsigned a = ev[2 * e], b = ev[2 * e + 1];
            if (a == b || (a >= P.ov && b >= P.ov)) continue;
            const rxs_d3 pa = rxs_load(in, gv[a]), pb = rxs_load(in, gv[b]);
            if (a < P.ov) rxs_add(acc, a, pa, pb, 1.0);
            if (b < P.ov) rxs_add(acc, b, pb, pa, 1.0);
        }
    } else {
        for (unsigned f = threadIdx.x; f < P.nf; f += blockDim.x) {
            unsigned l[3];
            bool any = false;
            for (int k = 0; k < 3; ++k) {
                l[k] = rxq_corner(ev, fe, f, k);
                any |= l[k] < P.ov;
            }
            if (!any) continue;
            rxs_d3 p[3];
            for (int k = 0; k < 3; ++k) p[k] = rxs_load(in, gv[l[k]]);
            for (int k = 0; k < 3; ++k) {
                const int i = (k + 1) % 3, j = (k + 2) % 3;
                const rxs_d3 a = {p[i].x - p[k].x, p[i].y - p[k].y, p[i].z - p[k].z};
                const rxs_d3 b = {p[j].x - p[k].x, p[j].y - p[k].y, p[j].z - p[k].z};
                const rxs_d3 c = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z,
                                  a.x * b.y - a.y * b.x};
                const double s = sqrt(c.x * c.x + c.y * c.y + c.z * c.z);
                if (s == 0.0) continue;
                const double w = 0.5 * (a.x * b.x + a.y * b.y + a.z * b.z) / s;
                if (l[i] < P.ov) rxs_add(acc, l[i], p[i], p[j], w);
                if (l[j] < P.ov) rxs_add(acc, l[j], p[j], p[i], w);
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
