// Double-precision triangle geometry, operation for operation as src/distance/triangle.rs (the
// kernels are built with --fmad=false, so both give the same bits): the vector type, where a
// segment crosses a triangle, the distance between segments, the closest point of a triangle.
// The distance search (kernels/distance.cu) and the envelope program
// (kernels/programs/envelope.cu) are built after it.
#pragma once

struct rxdi_v { double x, y, z; };

__device__ __forceinline__ rxdi_v rxdi_sub(rxdi_v a, rxdi_v b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ __forceinline__ rxdi_v rxdi_add(rxdi_v a, rxdi_v b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ __forceinline__ rxdi_v rxdi_mul(rxdi_v a, double s) { return {a.x * s, a.y * s, a.z * s}; }
__device__ __forceinline__ double rxdi_dot(rxdi_v a, rxdi_v b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ rxdi_v rxdi_cross(rxdi_v a, rxdi_v b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ __forceinline__ double rxdi_dist2(rxdi_v a, rxdi_v b) { rxdi_v d = rxdi_sub(a, b); return rxdi_dot(d, d); }
__device__ __forceinline__ bool rxdi_zero(rxdi_v a) { return a.x == 0.0 && a.y == 0.0 && a.z == 0.0; }
__device__ __forceinline__ double rxdi_clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

// segment pq crosses triangle t (normal n): 1 and the point x
__device__ bool rxdi_crossing(rxdi_v p, rxdi_v q, const rxdi_v* t, rxdi_v n, rxdi_v* x) {
    if (rxdi_zero(n)) return false;
    double dp = rxdi_dot(n, rxdi_sub(p, t[0]));
    double dq = rxdi_dot(n, rxdi_sub(q, t[0]));
    if ((dp > 0.0 && dq > 0.0) || (dp < 0.0 && dq < 0.0) || dp == dq) return false;
    double s = dp / (dp - dq);
    rxdi_v c = rxdi_add(p, rxdi_mul(rxdi_sub(q, p), s));
    bool inside = rxdi_dot(n, rxdi_cross(rxdi_sub(t[1], t[0]), rxdi_sub(c, t[0]))) >= 0.0
        && rxdi_dot(n, rxdi_cross(rxdi_sub(t[2], t[1]), rxdi_sub(c, t[1]))) >= 0.0
        && rxdi_dot(n, rxdi_cross(rxdi_sub(t[0], t[2]), rxdi_sub(c, t[2]))) >= 0.0;
    *x = c;
    return inside;
}

__device__ double rxdi_seg_seg(rxdi_v p1, rxdi_v q1, rxdi_v p2, rxdi_v q2) {
    rxdi_v d1 = rxdi_sub(q1, p1), d2 = rxdi_sub(q2, p2), r = rxdi_sub(p1, p2);
    double a = rxdi_dot(d1, d1), e = rxdi_dot(d2, d2), f = rxdi_dot(d2, r);
    double s, t;
    if (a == 0.0 && e == 0.0) {
        s = 0.0; t = 0.0;
    } else if (a == 0.0) {
        s = 0.0; t = rxdi_clamp01(f / e);
    } else {
        double c = rxdi_dot(d1, r);
        if (e == 0.0) {
            s = rxdi_clamp01(-c / a); t = 0.0;
        } else {
            double b = rxdi_dot(d1, d2);
            double denom = a * e - b * b;
            double s0 = denom != 0.0 ? rxdi_clamp01((b * f - c * e) / denom) : 0.0;
            double t0 = (b * s0 + f) / e;
            if (t0 < 0.0) { s = rxdi_clamp01(-c / a); t = 0.0; }
            else if (t0 > 1.0) { s = rxdi_clamp01((b - c) / a); t = 1.0; }
            else { s = s0; t = t0; }
        }
    }
    return rxdi_dist2(rxdi_add(p1, rxdi_mul(d1, s)), rxdi_add(p2, rxdi_mul(d2, t)));
}

__device__ rxdi_v rxdi_point_tri(rxdi_v p, const rxdi_v* t) {
    rxdi_v a = t[0], b = t[1], c = t[2];
    rxdi_v ab = rxdi_sub(b, a), ac = rxdi_sub(c, a), ap = rxdi_sub(p, a);
    double d1 = rxdi_dot(ab, ap), d2 = rxdi_dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) return a;
    rxdi_v bp = rxdi_sub(p, b);
    double d3 = rxdi_dot(ab, bp), d4 = rxdi_dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) return b;
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return rxdi_add(a, rxdi_mul(ab, d1 / (d1 - d3)));
    rxdi_v cp = rxdi_sub(p, c);
    double d5 = rxdi_dot(ab, cp), d6 = rxdi_dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) return c;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return rxdi_add(a, rxdi_mul(ac, d2 / (d2 - d6)));
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
        return rxdi_add(b, rxdi_mul(rxdi_sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    double denom = 1.0 / (va + vb + vc);
    return rxdi_add(rxdi_add(a, rxdi_mul(ab, vb * denom)), rxdi_mul(ac, vc * denom));
}

