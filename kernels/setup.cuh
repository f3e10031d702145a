// Triangle setup as the raster stage and the fused geometry stage share it (after raster.cuh):
// trivial rejection, snapping, culling and classification of a triangle's clip-space corners,
// its edge functions and depth at a pixel centre, and the 64-bit depth keys, so that a triangle
// rasterised by either gets the same coverage, depth and key.

// Whether the three corners lie outside one same clip plane (x < -w, x > w, y < -w, y > w,
// z < 0, z > w): the trivial rejection, the CPU's outcodes sharing a bit. Written as comparisons
// combined without branches, which compile to predicate chains (the outcodes' bit masks took
// three times the instructions, in a test every triangle makes).
__device__ __forceinline__ bool rxp_outside_one_plane(const float4 v[3]) {
    bool out = false;
    out |= (v[0].x < -v[0].w) & (v[1].x < -v[1].w) & (v[2].x < -v[2].w);
    out |= (v[0].x > v[0].w) & (v[1].x > v[1].w) & (v[2].x > v[2].w);
    out |= (v[0].y < -v[0].w) & (v[1].y < -v[1].w) & (v[2].y < -v[2].w);
    out |= (v[0].y > v[0].w) & (v[1].y > v[1].w) & (v[2].y > v[2].w);
    out |= (v[0].z < 0.0f) & (v[1].z < 0.0f) & (v[2].z < 0.0f);
    out |= (v[0].z > v[0].w) & (v[1].z > v[1].w) & (v[2].z > v[2].w);
    return out;
}

__device__ __forceinline__ int rxp_snap(float v) {
    return (int)(v + copysignf(0.5f, v));
}

// The fixed-point bits of a snapped coordinate (RXP_ONE is 2^RXP_SHIFT).
#define RXP_SHIFT 8
static_assert((1LL << RXP_SHIFT) == RXP_ONE, "RXP_SHIFT");

// The geometric part of a setup record: snapped corners, depth, 1/w, area, bounding box.
struct SetupGeo {
    int x[3], y[3];
    float z[3], inv_w[3];
    long long area;
    unsigned short bbox[4];
    bool front;
    // whether corners 1 and 2 were swapped to make the area positive
    bool swapped;
};

// A corner projected and snapped as setup takes it: x and y in 1/RXP_ONE pixels, depth and 1/w
// (the same operations, in the same order, as the CPU's `emit`). Meaningful where w > 0.
struct SnapCorner {
    int x, y;
    float z, inv_w;
};
__device__ __forceinline__ SnapCorner rxp_snap_corner(float4 v, const RasterParams& p) {
    const float w = (float)p.width, h = (float)p.height, scale = (float)RXP_ONE;
    SnapCorner c;
    c.inv_w = 1.0f / v.w;
    c.x = rxp_snap((v.x * c.inv_w * 0.5f + 0.5f) * w * scale);
    c.y = rxp_snap((0.5f - v.y * c.inv_w * 0.5f) * h * scale);
    c.z = v.z * c.inv_w;
    return c;
}

// The CPU's `emit` up to the varyings, from corners with w > 0 already snapped: 0 kept, 1 culled,
// 2 rejected (covers no pixel centre). `cull` is the draw's: 0 none, 1 back, 2 front, with
// RXP_CULL_MIRRORED where the draw's model matrix mirrors, so that its front faces are those that
// wind clockwise on screen (the CPU's `Draw::mirrored`).
#define RXP_CULL_MIRRORED 4u
__device__ __forceinline__ int rxp_emit_snapped(const SnapCorner c[3], const RasterParams& p,
                                                unsigned cull, SetupGeo& g) {
    g.area = 0;
    g.swapped = false;
    for (int k = 0; k < 3; k++) {
        g.x[k] = c[k].x;
        g.y[k] = c[k].y;
        g.z[k] = c[k].z;
        g.inv_w[k] = c[k].inv_w;
    }
    // (the corners lie within the guard band, below 2^23 in magnitude: their differences fit 32
    // bits, and each product is one 32 x 32 -> 64-bit multiply)
    const int ax = g.x[1] - g.x[0], ay = g.y[2] - g.y[0];
    const int bx = g.x[2] - g.x[0], by = g.y[1] - g.y[0];
    long long area = (long long)ax * ay - (long long)bx * by;
    g.front = (area < 0) != ((cull & RXP_CULL_MIRRORED) != 0);
    cull &= ~RXP_CULL_MIRRORED;
    bool keep = area != 0 && (cull == 0 || (cull == 1 && g.front) || (cull == 2 && !g.front));
    if (!keep) return 1;
    g.swapped = area < 0;
    g.area = area;
    if (g.swapped) {
        int t = g.x[1]; g.x[1] = g.x[2]; g.x[2] = t;
        t = g.y[1]; g.y[1] = g.y[2]; g.y[2] = t;
        float f = g.z[1]; g.z[1] = g.z[2]; g.z[2] = f;
        f = g.inv_w[1]; g.inv_w[1] = g.inv_w[2]; g.inv_w[2] = f;
        g.area = -area;
    }
    // the pixel centres' box: the corners lie within the guard band (below 2^23 in magnitude),
    // so 32 bits hold it, and an arithmetic shift is the floor of a division by RXP_ONE
    const int xmin = min(g.x[0], min(g.x[1], g.x[2])), xmax = max(g.x[0], max(g.x[1], g.x[2]));
    const int ymin = min(g.y[0], min(g.y[1], g.y[2])), ymax = max(g.y[0], max(g.y[1], g.y[2]));
    constexpr int up = (int)(RXP_ONE - 1 - RXP_HALF), down = (int)RXP_HALF;
    const int px0 = max((xmin + up) >> RXP_SHIFT, 0);
    const int px1 = min((xmax - down) >> RXP_SHIFT, p.width - 1);
    const int py0 = max((ymin + up) >> RXP_SHIFT, 0);
    const int py1 = min((ymax - down) >> RXP_SHIFT, p.height - 1);
    if (px0 > px1 || py0 > py1) return 2;
    g.bbox[0] = (unsigned short)px0;
    g.bbox[1] = (unsigned short)py0;
    g.bbox[2] = (unsigned short)px1;
    g.bbox[3] = (unsigned short)py1;
    return 0;
}

// rxp_emit_snapped from the corners' clip positions; a corner at w <= 0 (the clip-space origin
// survives every clip plane) has no projection: rejected.
__device__ int rxp_emit_geo(const float4 v[3], const RasterParams& p, unsigned cull, SetupGeo& g) {
    g.area = 0;
    g.swapped = false;
    if (!(v[0].w > 0.0f && v[1].w > 0.0f && v[2].w > 0.0f)) return 2;
    const SnapCorner c[3] = {rxp_snap_corner(v[0], p), rxp_snap_corner(v[1], p),
                             rxp_snap_corner(v[2], p)};
    return rxp_emit_snapped(c, p, cull, g);
}

// What the corners' clip positions decide: 0 dead (culled: *culled set, or rejected), 1 kept
// whole, 2 to be clipped. `g` is the kept triangle's geometry.
__device__ __forceinline__ int rxp_classify(const float4 v[3], bool finite, const RasterParams& p,
                                            unsigned cull, SetupGeo& g, bool* culled) {
    *culled = false;
    for (int k = 0; k < 3; k++)
        finite = finite && isfinite(v[k].x) && isfinite(v[k].y) && isfinite(v[k].z) &&
                 isfinite(v[k].w);
    if (rxp_outside_one_plane(v) || !finite) return 0;
    const float gx = RXP_GUARD_PX / (float)p.width, gy = RXP_GUARD_PX / (float)p.height;
    bool inside = true;
    for (int k = 0; k < 3; k++)
        inside = inside && v[k].z >= 0.0f && fabsf(v[k].x) <= gx * v[k].w &&
                 fabsf(v[k].y) <= gy * v[k].w;
    if (!inside) return 2;
    const int status = rxp_emit_geo(v, p, cull, g);
    *culled = status == 1;
    return status == 0 ? 1 : 0;
}

// What rxp_classify tests of one corner, for a caller that shares corners between triangles
// (the fused geometry stage tests each vertex once): its outcode (bits 0-5: x < -w, x > w,
// y < -w, y > w, z < 0, z > w), whether it is finite, inside the guard band, and at w > 0.
#define RXP_V_OUTSIDE 63u
#define RXP_V_FINITE (1u << 6)
#define RXP_V_GUARD (1u << 7)
#define RXP_V_W (1u << 8)
__device__ __forceinline__ unsigned rxp_corner_flags(float4 v, const RasterParams& p) {
    const float gx = RXP_GUARD_PX / (float)p.width, gy = RXP_GUARD_PX / (float)p.height;
    unsigned f = (unsigned)(v.x < -v.w) | (unsigned)(v.x > v.w) << 1 |
                 (unsigned)(v.y < -v.w) << 2 | (unsigned)(v.y > v.w) << 3 |
                 (unsigned)(v.z < 0.0f) << 4 | (unsigned)(v.z > v.w) << 5;
    if (isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w)) f |= RXP_V_FINITE;
    if (v.z >= 0.0f && fabsf(v.x) <= gx * v.w && fabsf(v.y) <= gy * v.w) f |= RXP_V_GUARD;
    if (v.w > 0.0f) f |= RXP_V_W;
    return f;
}

// rxp_classify from the corners' flags (rxp_corner_flags) and snapped positions
// (rxp_snap_corner, used where every corner has w > 0): the same tests in the same order.
__device__ __forceinline__ int rxp_classify_corners(const unsigned f[3], const SnapCorner c[3],
                                                    const RasterParams& p, unsigned cull,
                                                    SetupGeo& g, bool* culled) {
    *culled = false;
    const unsigned all = f[0] & f[1] & f[2];
    if ((all & RXP_V_OUTSIDE) || !(all & RXP_V_FINITE)) return 0;
    if (!(all & RXP_V_GUARD)) return 2;
    if (!(all & RXP_V_W)) return 0;
    const int status = rxp_emit_snapped(c, p, cull, g);
    *culled = status == 1;
    return status == 0 ? 1 : 0;
}

// Depth as an unsigned integer with the same order as the float (negative zero below zero).
__device__ __forceinline__ unsigned rxp_ordered(float z) {
    unsigned b = __float_as_uint(z);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float rxp_unordered(unsigned b) {
    return __uint_as_float((b & 0x80000000u) ? (b & 0x7fffffffu) : ~b);
}

// The edge function of edge k (opposite corner k, from corner k+1 to corner k+2) at a pixel
// centre, with the fill rule's bias: covered when all three are >= 0 (the CPU's values exactly).
__device__ __forceinline__ void rxp_edges(const SetupTri& t, long long px, long long py,
                                          long long e[3]) {
    for (int k = 0; k < 3; k++) {
        int a = (k + 1) % 3, b = (k + 2) % 3;
        long long dx = (long long)t.x[b] - t.x[a], dy = (long long)t.y[b] - t.y[a];
        bool top_left = dy < 0 || (dy == 0 && dx > 0);
        e[k] = dx * (py - t.y[a]) - dy * (px - t.x[a]) + (top_left ? 0 : -1);
    }
}

// How the edge functions change from one pixel to the next to the right (dx) and below (dy).
__device__ __forceinline__ void rxp_edge_steps(const SetupTri& t, long long dx[3],
                                               long long dy[3]) {
    for (int k = 0; k < 3; k++) {
        int a = (k + 1) % 3, b = (k + 2) % 3;
        dx[k] = -((long long)t.y[b] - t.y[a]) * RXP_ONE;
        dy[k] = ((long long)t.x[b] - t.x[a]) * RXP_ONE;
    }
}

// Depth at a covered pixel (the CPU's expression; `I` holds the edge values exactly).
template <typename I>
__device__ __forceinline__ float rxp_depth(const SetupTri& t, const I e[3], float inv_area) {
    float l1 = (float)e[1] * inv_area;
    float l2 = (float)e[2] * inv_area;
    return t.z[0] + (t.z[1] - t.z[0]) * l1 + (t.z[2] - t.z[0]) * l2;
}

// Adds the block's sums of `v[0..n)` to counters[c[0..n)], once per block: a warp sum, a
// shared atomic per warp, one global atomic per counter. Every thread of the block must call it.
template <int N>
__device__ __forceinline__ void rxp_block_counts(unsigned long long* counters, const int (&c)[N],
                                                 const unsigned (&v)[N]) {
    __shared__ unsigned sums[N];
    if (threadIdx.x < N) sums[threadIdx.x] = 0;
    __syncthreads();
    for (int i = 0; i < N; i++) {
        const unsigned w = __reduce_add_sync(0xffffffffu, v[i]);
        if ((threadIdx.x & 31) == 0 && w) atomicAdd(&sums[i], w);
    }
    __syncthreads();
    if (threadIdx.x < N && sums[threadIdx.x])
        atomicAdd(&counters[c[threadIdx.x]], (unsigned long long)sums[threadIdx.x]);
}

