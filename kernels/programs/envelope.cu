// The envelope's per-vertex program in the geometry stage's processing mode (RXP_PROGRAM): vertex
// `id`'s safe offset along its normal and its moved position, operation for operation as the
// CPU's SafeOffset (src/passes/envelope/cpu.rs), built after kernels/triangle.cuh with
// --fmad=false so that both give the same bits. The record: `world` the moved position, `uv.x`
// the offset, `normal` the direction, `extra` what limited it (0 full, 1 blocked, 2 pinned).
// `in` is the host's EnvelopeInput, byte for byte.

struct RxeInput {
    const float* positions;      // 3 a vertex
    const unsigned* indices;     // 3 a triangle
    const unsigned* vf_offsets;  // v + 1
    const unsigned* vf_corners;  // corners 3 t + k of each vertex, in increasing order
    const float* boxes;          // the BVH's boxes, 6 floats a node, breadth first
    const unsigned* order;       // the triangles in the BVH's leaf order
    unsigned triangles;
    unsigned depth;              // the BVH's: 2^depth leaves
    double side;                 // +1 outwards, -1 inwards
    double distance;
};

#define RXE_CAST 3.0
#define RXE_HALVINGS 10

__device__ __forceinline__ rxdi_v rxe_pos(const RxeInput& in, unsigned v) {
    return {(double)in.positions[3 * v], (double)in.positions[3 * v + 1], (double)in.positions[3 * v + 2]};
}

__device__ __forceinline__ void rxe_tri(const RxeInput& in, unsigned t, rxdi_v* c) {
    for (int k = 0; k < 3; ++k) c[k] = rxe_pos(in, in.indices[3 * t + k]);
}

__device__ __forceinline__ rxdi_v rxe_normal(const rxdi_v* c) {
    return rxdi_cross(rxdi_sub(c[1], c[0]), rxdi_sub(c[2], c[0]));
}

// whether triangle t is vertex v's own: a corner is v or lies where v does
__device__ __forceinline__ bool rxe_own(const RxeInput& in, unsigned t, unsigned v) {
    const float px = in.positions[3 * v], py = in.positions[3 * v + 1], pz = in.positions[3 * v + 2];
    for (int k = 0; k < 3; ++k) {
        const unsigned c = in.indices[3 * t + k];
        if (c == v || (in.positions[3 * c] == px && in.positions[3 * c + 1] == py && in.positions[3 * c + 2] == pz))
            return true;
    }
    return false;
}

// the squared distance from p to triangle t (one with no area: its edges), as point_dist2
__device__ double rxe_point_dist2(rxdi_v p, const rxdi_v* t) {
    if (!rxdi_zero(rxe_normal(t))) return rxdi_dist2(rxdi_point_tri(p, t), p);
    double best = 1.0 / 0.0;
    for (int k = 0; k < 3; ++k) best = fmin(best, rxdi_seg_seg(p, p, t[k], t[(k + 1) % 3]));
    return best;
}

// the BVH's leaves whose boxes meet [lo, hi], each triangle of them given to f
template <class F>
__device__ void rxe_visit(const RxeInput& in, const float* lo, const float* hi, F f) {
    const unsigned first_leaf = (1u << in.depth) - 1u;
    unsigned stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const unsigned n = stack[--top];
        const float* b = in.boxes + 6 * (size_t)n;
        if (!(b[0] <= hi[0] && lo[0] <= b[3] && b[1] <= hi[1] && lo[1] <= b[4] && b[2] <= hi[2] && lo[2] <= b[5]))
            continue;
        if (n >= first_leaf) {
            const unsigned i = n - first_leaf;
            const unsigned s = (unsigned)(((unsigned long long)in.triangles * i) >> in.depth);
            const unsigned e = (unsigned)(((unsigned long long)in.triangles * (i + 1)) >> in.depth);
            for (unsigned k = s; k < e; ++k) f(in.order[k]);
        } else {
            stack[top++] = 2 * n + 2;
            stack[top++] = 2 * n + 1;
        }
    }
}

// the float box around a and b widened by r, rounded outwards
__device__ __forceinline__ void rxe_box(rxdi_v a, rxdi_v b, double r, float* lo, float* hi) {
    lo[0] = __double2float_rd(fmin(a.x, b.x) - r);
    lo[1] = __double2float_rd(fmin(a.y, b.y) - r);
    lo[2] = __double2float_rd(fmin(a.z, b.z) - r);
    hi[0] = __double2float_ru(fmax(a.x, b.x) + r);
    hi[1] = __double2float_ru(fmax(a.y, b.y) + r);
    hi[2] = __double2float_ru(fmax(a.z, b.z) + r);
}

__device__ VertexOut rxe_record(const RxeInput& in, unsigned v, rxdi_v dir, float offset, float limit) {
    const rxdi_v p = rxdi_add(rxe_pos(in, v), rxdi_mul(dir, (double)offset));
    VertexOut o;
    o.clip = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
    o.world = make_float3((float)p.x, (float)p.y, (float)p.z);
    o.normal = make_float3((float)dir.x, (float)dir.y, (float)dir.z);
    o.uv = make_float2(offset, 0.0f);
    o.extra = limit;
    return o;
}

__device__ VertexOut rxp_program(const void* table, unsigned id) {
    const RxeInput& in = *reinterpret_cast<const RxeInput*>(table);
    const rxdi_v zero = {0.0, 0.0, 0.0};
    const unsigned cb = in.vf_offsets[id], ce = in.vf_offsets[id + 1];
    // the direction: the area-weighted normal, turned to the side
    rxdi_v n = zero;
    for (unsigned c = cb; c < ce; ++c) {
        rxdi_v t[3];
        rxe_tri(in, in.vf_corners[c] / 3, t);
        n = rxdi_add(n, rxe_normal(t));
    }
    const double len2 = n.x * n.x + n.y * n.y + n.z * n.z;
    if (len2 == 0.0) return rxe_record(in, id, zero, 0.0f, 2.0f);
    const rxdi_v dir = rxdi_mul(n, in.side / sqrt(len2));
    for (unsigned c = cb; c < ce; ++c) {
        rxdi_v t[3];
        rxe_tri(in, in.vf_corners[c] / 3, t);
        const rxdi_v nt = rxdi_mul(rxe_normal(t), in.side);
        if (!rxdi_zero(nt) && dir.x * nt.x + dir.y * nt.y + dir.z * nt.z <= 0.0)
            return rxe_record(in, id, zero, 0.0f, 2.0f);
    }
    const rxdi_v v0 = rxe_pos(in, id);
    // the cast
    const double reach = in.distance * RXE_CAST;
    const rxdi_v q = rxdi_add(v0, rxdi_mul(dir, reach));
    double hit = reach;
    float lo[3], hi[3];
    rxe_box(v0, q, 0.0, lo, hi);
    rxe_visit(in, lo, hi, [&](unsigned t) {
        if (rxe_own(in, t, id)) return;
        rxdi_v c[3], x;
        rxe_tri(in, t, c);
        if (rxdi_crossing(v0, q, c, rxe_normal(c), &x)) {
            const rxdi_v d = rxdi_sub(x, v0);
            hit = fmin(hit, sqrt(d.x * d.x + d.y * d.y + d.z * d.z));
        }
    });
    double offset = hit < reach ? fmin(in.distance, hit / RXE_CAST) : in.distance;
    float limit = offset < in.distance ? 1.0f : 0.0f;
    // the clearance
    for (int k = 0; k <= RXE_HALVINGS; ++k) {
        const rxdi_v p = rxdi_add(v0, rxdi_mul(dir, offset));
        const double r = offset * 0.5;
        const double r2 = r * r;
        bool clear = true;
        rxe_box(p, p, r, lo, hi);
        rxe_visit(in, lo, hi, [&](unsigned t) {
            if (!clear || rxe_own(in, t, id)) return;
            rxdi_v c[3];
            rxe_tri(in, t, c);
            if (rxe_point_dist2(p, c) < r2) clear = false;
        });
        if (clear) return rxe_record(in, id, dir, __double2float_rd(offset), limit);
        offset = offset * 0.5;
        limit = 1.0f;
    }
    return rxe_record(in, id, zero, 0.0f, 2.0f);
}
