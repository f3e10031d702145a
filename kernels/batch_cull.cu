// Whole-batch culling in the fused geometry stage (after common.cuh; the CPU reference of both
// halves is src/patch/bounds.rs). A big mesh's dynamic batches are fixed when it is prepared, so
// each gets bounds then, beside its batch tables: the sphere around the box of its corners and
// the cone of its face normals (`RxpBound`, made by `batch_bounds` as `PatchBound::of` makes a
// patch's). Each frame, before the fused kernel, `rxp_cull_keeps` tests them against the draw's
// view (`CullView::keeps`; fused_batch_list in kernels/geometry_fused.cu): a batch outside one
// clip plane, or all of whose faces face away while they are culled, is dropped whole, its
// triangles never shaded, set up or counted one by one. The margins of the test keep every batch
// one of whose triangles the raster stage could keep.

// A batch's bounds (the Rust `PatchBound`'s fields, 32 bytes): sphere centre and radius, the
// normal cone's unit axis and the cosine of its half-angle (at most zero: no cone).
struct RxpBound {
    float c[3];
    float radius;
    float axis[3];
    float cutoff;
};

// A draw's view of its object (the Rust `CullView`, 136 bytes): the six clip planes in object
// space, their normals' lengths, and the eye in object space.
struct RxpCullView {
    float planes[24];
    float norms[6];
    float eye[3];
    float pad;
};

#define RXP_OUTSIDE_MARGIN 1e-4f
#define RXP_FACING_MARGIN 0.02f

// Whether anything within `b` may show in view `v`, culling `facing` (+1 back faces, -1 front
// faces, 0 none): CullView::keeps, operation for operation.
__device__ __forceinline__ bool rxp_cull_keeps(const RxpCullView& v, const RxpBound& b,
                                               float facing) {
    const float size = fabsf(b.c[0]) + fabsf(b.c[1]) + fabsf(b.c[2]) + b.radius;
    for (int p = 0; p < 6; ++p) {
        const float* q = v.planes + 4 * p;
        const float n = v.norms[p];
        const float slack = RXP_OUTSIDE_MARGIN * (n * size + fabsf(q[3]));
        if (q[0] * b.c[0] + q[1] * b.c[1] + q[2] * b.c[2] + q[3] < -(b.radius * n) - slack)
            return false;
    }
    if (facing == 0.0f || b.cutoff <= 0.0f) return true;
    const float vx = v.eye[0] - b.c[0], vy = v.eye[1] - b.c[1], vz = v.eye[2] - b.c[2];
    const float d = sqrtf(vx * vx + vy * vy + vz * vz);
    if (d <= b.radius) return true;
    const float cos_phi =
        (b.axis[0] * facing * vx + b.axis[1] * facing * vy + b.axis[2] * facing * vz) / d;
    // the eye inside the cone's reach: some face may face it
    if (cos_phi >= b.cutoff) return true;
    const float sin_phi = sqrtf(fmaxf(1.0f - cos_phi * cos_phi, 0.0f));
    const float sin_theta = sqrtf(fmaxf(1.0f - b.cutoff * b.cutoff, 0.0f));
    // the largest n . v over the cone: |v| cos(phi - theta)
    const float best = d * (cos_phi * b.cutoff + sin_phi * sin_theta);
    return best + b.radius > -RXP_FACING_MARGIN * d;
}

// ---- the bounds, once per batch --------------------------------------------------------------

#define RXP_BOUNDS_BLOCK 128

// The block's minimum (op 0), maximum (1) or sum (2) of each thread's `x`, in every thread.
// (Minima and maxima are exact in any order; a sum's rounding depends on it.)
__device__ double rxp_block_reduce(double x, int op) {
    __shared__ double part[RXP_BOUNDS_BLOCK / 32];
    __shared__ double all;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        const double y = __shfl_xor_sync(0xffffffffu, x, o);
        x = op == 0 ? fmin(x, y) : op == 1 ? fmax(x, y) : x + y;
    }
    if (lane == 0) part[warp] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        double r = part[0];
        for (unsigned w = 1; w < RXP_BOUNDS_BLOCK / 32; ++w)
            r = op == 0 ? fmin(r, part[w]) : op == 1 ? fmax(r, part[w]) : r + part[w];
        all = r;
    }
    __syncthreads();
    const double r = all;
    __syncthreads();
    return r;
}

// Operations rounded as the CPU's float64 vector code rounds them (no contractions).
__device__ __forceinline__ double3 rxp_dsub(double3 a, double3 b) {
    return make_double3(__dsub_rn(a.x, b.x), __dsub_rn(a.y, b.y), __dsub_rn(a.z, b.z));
}
__device__ __forceinline__ double rxp_ddot(double3 a, double3 b) {
    return __dadd_rn(__dadd_rn(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y)), __dmul_rn(a.z, b.z));
}
__device__ __forceinline__ double3 rxp_dcross(double3 a, double3 b) {
    return make_double3(__dsub_rn(__dmul_rn(a.y, b.z), __dmul_rn(b.y, a.z)),
                        __dsub_rn(__dmul_rn(a.z, b.x), __dmul_rn(b.z, a.x)),
                        __dsub_rn(__dmul_rn(a.x, b.y), __dmul_rn(b.x, a.y)));
}
__device__ __forceinline__ double3 rxp_dpos(const VertexIn* vin, unsigned id) {
    const float3 p = vin[id].position;
    return make_double3(p.x, p.y, p.z);
}
// Triangle t's unit normal, or (0, 0, 0) where it has no area.
__device__ __forceinline__ double3 rxp_dnormal(const VertexIn* vin, const unsigned* c) {
    const double3 p0 = rxp_dpos(vin, c[0]);
    const double3 n =
        rxp_dcross(rxp_dsub(rxp_dpos(vin, c[1]), p0), rxp_dsub(rxp_dpos(vin, c[2]), p0));
    const double len = sqrt(rxp_ddot(n, n));
    if (!(len > 0.0)) return make_double3(0.0, 0.0, 0.0);
    const double r = 1.0 / len;
    return make_double3(__dmul_rn(n.x, r), __dmul_rn(n.y, r), __dmul_rn(n.z, r));
}

// The bounds of every batch (batch b is triangles tri_start[b] .. tri_start[b + 1] of `idx`) as
// PatchBound::of makes them: one block a batch. The centre and radius are the CPU's to the bit;
// the cone's axis sums the normals in another order, its cutoff is then the least cosine to it.
extern "C" __global__ void __launch_bounds__(RXP_BOUNDS_BLOCK)
    batch_bounds(const VertexIn* __restrict__ vin, const unsigned* __restrict__ idx,
                 const unsigned* __restrict__ tri_start, RxpBound* __restrict__ out) {
    constexpr unsigned P = RXP_BOUNDS_BLOCK;
    const unsigned first = tri_start[blockIdx.x], last = tri_start[blockIdx.x + 1];
    const unsigned* bi = idx + 3ull * first;
    const unsigned n = 3 * (last - first), ntri = last - first;
    const double big = __longlong_as_double(0x7fefffffffffffffll);  // the largest double
    double lo[3] = {big, big, big}, hi[3] = {-big, -big, -big};
    for (unsigned i = threadIdx.x; i < n; i += P) {
        const double3 p = rxp_dpos(vin, bi[i]);
        lo[0] = fmin(lo[0], p.x), lo[1] = fmin(lo[1], p.y), lo[2] = fmin(lo[2], p.z);
        hi[0] = fmax(hi[0], p.x), hi[1] = fmax(hi[1], p.y), hi[2] = fmax(hi[2], p.z);
    }
    double cen[3];
    for (int k = 0; k < 3; ++k)
        cen[k] = __dmul_rn(__dadd_rn(rxp_block_reduce(lo[k], 0), rxp_block_reduce(hi[k], 1)), 0.5);
    const double3 center = make_double3(cen[0], cen[1], cen[2]);
    double radius = 0.0;
    for (unsigned i = threadIdx.x; i < n; i += P) {
        const double3 d = rxp_dsub(rxp_dpos(vin, bi[i]), center);
        radius = fmax(radius, sqrt(rxp_ddot(d, d)));
    }
    radius = rxp_block_reduce(radius, 1);
    double sum[3] = {0.0, 0.0, 0.0}, flat = 0.0;
    for (unsigned t = threadIdx.x; t < ntri; t += P) {
        const double3 nt = rxp_dnormal(vin, bi + 3 * t);
        if (nt.x == 0.0 && nt.y == 0.0 && nt.z == 0.0) flat = 1.0;
        sum[0] += nt.x, sum[1] += nt.y, sum[2] += nt.z;
    }
    flat = rxp_block_reduce(flat, 1);
    for (int k = 0; k < 3; ++k) sum[k] = rxp_block_reduce(sum[k], 2);
    const double3 s = make_double3(sum[0], sum[1], sum[2]);
    const double len = sqrt(rxp_ddot(s, s));
    const bool cone = flat == 0.0 && len > 1e-12;
    const double3 axis =
        cone ? make_double3(s.x / len, s.y / len, s.z / len) : make_double3(0.0, 0.0, 1.0);
    double cutoff = 1.0;
    if (cone)
        for (unsigned t = threadIdx.x; t < ntri; t += P)
            cutoff = fmin(cutoff, rxp_ddot(rxp_dnormal(vin, bi + 3 * t), axis));
    cutoff = cone ? rxp_block_reduce(cutoff, 0) : -1.0;
    if (threadIdx.x == 0) {
        // rounded outward: a sphere a little larger, a cone a little wider
        RxpBound b;
        double3 cf;
        for (int k = 0; k < 3; ++k) b.c[k] = __double2float_rn(cen[k]);
        cf = make_double3(b.c[0], b.c[1], b.c[2]);
        const double3 off = rxp_dsub(cf, center);
        const float r = __double2float_rn(__dadd_rn(radius, sqrt(rxp_ddot(off, off))));
        // (plus the least normal float)
        b.radius = __fadd_rn(__fmul_rn(r, 1.0f + 1e-6f), __int_as_float(0x00800000));
        b.axis[0] = __double2float_rn(axis.x);
        b.axis[1] = __double2float_rn(axis.y);
        b.axis[2] = __double2float_rn(axis.z);
        b.cutoff = cutoff > 0.0 ? __double2float_rn(__dsub_rn(cutoff, 1e-6)) : -1.0f;
        out[blockIdx.x] = b;
    }
}
