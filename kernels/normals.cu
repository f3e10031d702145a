// The normals stage (src/passes/normals): vertex normals from the triangles, in double precision
// so that they match the float64 reference; the CPU reference is src/passes/normals/cpu.rs.
//
//   rxn_accumulate  one thread per triangle: each corner's weighted face normal added to its
//                   vertex (area: the cross product, whose length is twice the area; angle: the
//                   unit face normal times the corner's angle)
//   rxn_normalize   one thread per vertex: the sum normalised to float (zero stays zero)
//   rxn_flat        one thread per triangle: three new vertices with the unit face normal

#define RXN_AREA 0
#define RXN_ANGLE 1

struct rxn_d3 {
    double x, y, z;
};

__device__ __forceinline__ rxn_d3 rxn_load(const float* p, unsigned i) {
    return {(double)p[3 * i], (double)p[3 * i + 1], (double)p[3 * i + 2]};
}
__device__ __forceinline__ rxn_d3 rxn_sub(rxn_d3 a, rxn_d3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ __forceinline__ rxn_d3 rxn_cross(rxn_d3 a, rxn_d3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ __forceinline__ double rxn_dot(rxn_d3 a, rxn_d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ double rxn_len(rxn_d3 a) { return sqrt(rxn_dot(a, a)); }
// the angle between two edges, robust near 0 and pi
__device__ __forceinline__ double rxn_angle(rxn_d3 a, rxn_d3 b) {
    return atan2(rxn_len(rxn_cross(a, b)), rxn_dot(a, b));
}

extern "C" __global__ void rxn_accumulate(const float* __restrict__ pos, const unsigned* __restrict__ idx,
                                          unsigned triangles, int mode, double* __restrict__ acc) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= triangles) return;
    const unsigned v[3] = {idx[3 * t], idx[3 * t + 1], idx[3 * t + 2]};
    const rxn_d3 p[3] = {rxn_load(pos, v[0]), rxn_load(pos, v[1]), rxn_load(pos, v[2])};
    const rxn_d3 n = rxn_cross(rxn_sub(p[1], p[0]), rxn_sub(p[2], p[0]));
    double w[3] = {1.0, 1.0, 1.0};
    rxn_d3 u = n;
    if (mode == RXN_ANGLE) {
        const double l = rxn_len(n);
        if (l == 0.0) return;
        u = {n.x / l, n.y / l, n.z / l};
        for (int k = 0; k < 3; ++k) {
            w[k] = rxn_angle(rxn_sub(p[(k + 1) % 3], p[k]), rxn_sub(p[(k + 2) % 3], p[k]));
        }
    }
    for (int k = 0; k < 3; ++k) {
        atomicAdd(&acc[3 * v[k]], u.x * w[k]);
        atomicAdd(&acc[3 * v[k] + 1], u.y * w[k]);
        atomicAdd(&acc[3 * v[k] + 2], u.z * w[k]);
    }
}

extern "C" __global__ void rxn_normalize(const double* __restrict__ acc, unsigned vertices,
                                         float* __restrict__ out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= vertices) return;
    const rxn_d3 s = {acc[3 * i], acc[3 * i + 1], acc[3 * i + 2]};
    const double l = rxn_len(s);
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
    const rxn_d3 p[3] = {rxn_load(pos, v[0]), rxn_load(pos, v[1]), rxn_load(pos, v[2])};
    const rxn_d3 n = rxn_cross(rxn_sub(p[1], p[0]), rxn_sub(p[2], p[0]));
    const double l = rxn_len(n);
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
