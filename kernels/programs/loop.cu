// Loop subdivision as a program of the geometry stage's processing mode (RXP_PROGRAM): the record
// of the next level's vertex `id`, operation for operation as the CPU's LoopProgram
// (src/passes/subdivide/streamed.rs), in a VertexOut: `world` the position, `uv` the first uv
// set, `normal.x` and `normal.y` the second. `in` is the level's table (RxlInput; the host's
// LoopInput in src/passes/subdivide/cuda.rs, byte for byte), everything in it made on the device
// (kernels/subdivide.cu). The module is built with --fmad=false, so every sum and product rounds
// as the CPU's do.

struct RxlInput {
    const float* positions;        // 3 a vertex
    const float* uvs;              // uv_dim a vertex (null when uv_dim is 0)
    const unsigned* ev;            // 2 an edge
    const unsigned* count;         // the triangles of each edge
    const unsigned* opposite;      // 2 an edge
    const unsigned* ring_offsets;  // v + 1
    const unsigned* ring;          // each vertex's neighbours in edge order (rxsd_ring_order)
    const unsigned* crease;        // per ring entry: 1 where the edge between is a crease
    const double* betas;           // Loop's weights by edge count
    unsigned nbetas;
    unsigned v;                    // old vertices
    unsigned uv_dim;               // 0, 2 or 4 (both sets, interleaved)
    unsigned pad;
    double cos_corner;
};

__device__ __forceinline__ double rxl_beta(const RxlInput& in, unsigned n) {
    if (n < in.nbetas) return in.betas[n];
    const double c = 0.375 + 0.25 * cos(2.0 * 3.141592653589793 / (double)n);
    return (0.625 - c * c) / (double)n;
}

// Attribute x (dim floats a vertex) of old vertex i by its rule into out[0 .. dim): 0 smooth (n
// neighbours in the ring b .. e), 1 crease (ends ea, eb), 2 stay.
__device__ __forceinline__ void rxl_old(const RxlInput& in, const float* x, unsigned dim,
                                        unsigned i, int rule, unsigned b, unsigned e,
                                        double beta, unsigned ea, unsigned eb, float* out) {
    for (unsigned d = 0; d < dim; ++d) {
        const double xi = (double)x[dim * i + d];
        double r;
        if (rule == 0) {
            double s = 0.0;
            for (unsigned k = b; k < e; ++k) s = s + (double)x[dim * in.ring[k] + d];
            r = xi * (1.0 - (double)(e - b) * beta) + s * beta;
        } else if (rule == 1) {
            r = xi * 0.75 + ((double)x[dim * ea + d] + (double)x[dim * eb + d]) * 0.125;
        } else {
            r = xi;
        }
        out[d] = (float)r;
    }
}

// Attribute x of edge `e`'s new vertex into out[0 .. dim).
__device__ __forceinline__ void rxl_edge(const RxlInput& in, const float* x, unsigned dim,
                                         unsigned e, float* out) {
    const unsigned a = in.ev[2 * e], b = in.ev[2 * e + 1];
    for (unsigned d = 0; d < dim; ++d) {
        const double ends = (double)x[dim * a + d] + (double)x[dim * b + d];
        double r;
        if (in.count[e] == 2) {
            const unsigned c = in.opposite[2 * e], o = in.opposite[2 * e + 1];
            r = ends * 0.375 + ((double)x[dim * c + d] + (double)x[dim * o + d]) * 0.125;
        } else {
            r = ends * 0.5;
        }
        out[d] = (float)r;
    }
}

__device__ VertexOut rxp_program(const void* table, unsigned id) {
    const RxlInput& in = *reinterpret_cast<const RxlInput*>(table);
    float r[7] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (id < in.v) {
        const unsigned b = in.ring_offsets[id], e = in.ring_offsets[id + 1];
        unsigned creases = 0, ends[2] = {0xffffffffu, 0xffffffffu};
        for (unsigned k = b; k < e; ++k) {
            if (in.crease[k]) {
                if (creases < 2) ends[creases] = in.ring[k];
                ++creases;
            }
        }
        int rule = 2;
        double beta = 0.0;
        if (creases == 0 && e > b) {
            rule = 0;
            beta = rxl_beta(in, e - b);
        } else if (creases == 2) {
            // a corner where the creases meet at less than the corner angle: it stays
            double uu = 0.0, ww = 0.0, uw = 0.0;
            for (int j = 0; j < 3; ++j) {
                const double x = (double)in.positions[3 * id + j];
                const double u = (double)in.positions[3 * ends[0] + j] - x;
                const double w = (double)in.positions[3 * ends[1] + j] - x;
                uu = uu + u * u;
                ww = ww + w * w;
                uw = uw + u * w;
            }
            rule = uw > in.cos_corner * sqrt(uu * ww) ? 2 : 1;
        }
        rxl_old(in, in.positions, 3, id, rule, b, e, beta, ends[0], ends[1], r);
        if (in.uv_dim)
            rxl_old(in, in.uvs, in.uv_dim, id, rule, b, e, beta, ends[0], ends[1], r + 3);
    } else {
        rxl_edge(in, in.positions, 3, id - in.v, r);
        if (in.uv_dim) rxl_edge(in, in.uvs, in.uv_dim, id - in.v, r + 3);
    }
    VertexOut o;
    o.clip = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
    o.world = make_float3(r[0], r[1], r[2]);
    o.normal = make_float3(r[5], r[6], 0.0f);
    o.uv = make_float2(r[3], r[4]);
    o.extra = 0.0f;
    return o;
}

// Records to the level's arrays: positions (3 floats a vertex) and uvs (uv_dim a vertex).
extern "C" __global__ void rxl_unpack(const VertexOut* __restrict__ records, unsigned n,
                                      unsigned uv_dim, float* __restrict__ positions,
                                      float* __restrict__ uvs) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const VertexOut r = records[i];
    positions[3 * i] = r.world.x;
    positions[3 * i + 1] = r.world.y;
    positions[3 * i + 2] = r.world.z;
    if (uv_dim >= 2) {
        uvs[uv_dim * i] = r.uv.x;
        uvs[uv_dim * i + 1] = r.uv.y;
    }
    if (uv_dim == 4) {
        uvs[4 * i + 2] = r.normal.x;
        uvs[4 * i + 3] = r.normal.y;
    }
}
