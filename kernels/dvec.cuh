// Double-precision 3-vectors for the kernels that sum geometry in float64 so that they match
// their CPU references (normals.cu, smooth.cu).
#pragma once

struct rxd3 {
    double x, y, z;
};

__device__ __forceinline__ rxd3 rxd_load(const float* p, unsigned i) {
    return {(double)p[3 * i], (double)p[3 * i + 1], (double)p[3 * i + 2]};
}
__device__ __forceinline__ rxd3 rxd_sub(rxd3 a, rxd3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ __forceinline__ rxd3 rxd_cross(rxd3 a, rxd3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ __forceinline__ double rxd_dot(rxd3 a, rxd3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ double rxd_len(rxd3 a) { return sqrt(rxd_dot(a, a)); }
// the angle between two edges, robust near 0 and pi
__device__ __forceinline__ double rxd_angle(rxd3 a, rxd3 b) {
    return atan2(rxd_len(rxd_cross(a, b)), rxd_dot(a, b));
}
