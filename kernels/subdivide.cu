// Loop subdivision on the GPU (src/passes/subdivide; the CPU reference is its cpu.rs).
//
// The input's edges, numbered in the order the index buffer first names them (Edges::build):
//
//   rxsd_edge_keys     per corner: its edge's key (smaller vertex, larger) into a hash table
//                      (linear probing), the table keeping each edge's first corner
//   rxsd_edge_first    per corner: whether it is its edge's first (then an exclusive scan of
//                      these flags numbers the edges)
//   rxsd_edge_ids      per corner: its triangle's edge id, and the first corner writes the edge
//
// Then one level is five launches, a thread per corner, edge, vertex or triangle:
//
//   rxsd_edge_faces    per corner: its edge's triangle count, and the first two opposite corners
//   rxsd_rings         per edge: each end's edge count and neighbour sums (positions, uvs), its
//                      crease edges and their far ends
//   rxsd_points        per new vertex: an old vertex by its rule (smooth, crease or corner), or an
//                      edge's new vertex; positions and texture coordinates alike
//   rxsd_split         per triangle: its four triangles, their edges, its three inside edges
//   rxsd_halves        per edge: its two halves
//
// On the geometry stage's strategies, rxsd_rings and rxsd_points give way to the rings below and
// the Loop program (kernels/programs/loop.cu) run through the strategy.
//
// Positions are computed in double precision with the CPU's operations in its order (NVRTC runs
// with --fmad=false) and rounded to float once. The neighbour sums are added by atomics in any
// order: exact in double precision for float inputs of similar size, so the result is the CPU's.

#define RXSD_NONE 0xffffffffu

// corner c's edge's key: the smaller vertex above the larger, plus one (0 is an empty slot)
__device__ __forceinline__ unsigned long long rxsd_key(const unsigned* idx, unsigned c,
                                                       unsigned* lo, unsigned* hi) {
    const unsigned t = c / 3, k = c - 3 * t;
    const unsigned a = idx[c], b = idx[3 * t + (k + 1) % 3];
    *lo = min(a, b);
    *hi = max(a, b);
    return ((unsigned long long)*lo << 32 | *hi) + 1ull;
}

// first_plus[slot] = corners - (the edge's first corner), the largest such value winning
extern "C" __global__ void rxsd_edge_keys(const unsigned* __restrict__ idx, unsigned corners,
                                          unsigned long long* __restrict__ keys, unsigned mask,
                                          unsigned* __restrict__ first_plus,
                                          unsigned* __restrict__ slot_of) {
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= corners) return;
    unsigned lo, hi;
    const unsigned long long key = rxsd_key(idx, c, &lo, &hi);
    unsigned h = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    for (;;) {
        const unsigned long long prev = atomicCAS(&keys[h], 0ull, key);
        if (prev == 0ull || prev == key) break;
        h = (h + 1) & mask;
    }
    atomicMax(&first_plus[h], corners - c);
    slot_of[c] = h;
}

extern "C" __global__ void rxsd_edge_first(const unsigned* __restrict__ slot_of,
                                           const unsigned* __restrict__ first_plus,
                                           unsigned corners, unsigned* __restrict__ flag) {
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= corners) return;
    flag[c] = corners - first_plus[slot_of[c]] == c;
}

// ids: the exclusive scan of the first-corner flags
extern "C" __global__ void rxsd_edge_ids(const unsigned* __restrict__ idx,
                                         const unsigned* __restrict__ slot_of,
                                         const unsigned* __restrict__ first_plus,
                                         const unsigned* __restrict__ ids, unsigned corners,
                                         unsigned* __restrict__ fe, unsigned* __restrict__ ev) {
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= corners) return;
    const unsigned f = corners - first_plus[slot_of[c]];
    const unsigned id = ids[f];
    fe[c] = id;
    if (f == c) {
        unsigned lo, hi;
        rxsd_key(idx, c, &lo, &hi);
        ev[2 * id] = lo;
        ev[2 * id + 1] = hi;
    }
}

// Loop's beta for a vertex of n edges past the host's table (the host computes the same
// expression, with its own cosine)
__device__ __forceinline__ double rxsd_beta(unsigned n) {
    const double c = 0.375 + 0.25 * cos(2.0 * 3.141592653589793 / (double)n);
    return (0.625 - c * c) / (double)n;
}

extern "C" __global__ void rxsd_edge_faces(const unsigned* __restrict__ idx,
                                           const unsigned* __restrict__ fe, unsigned corners,
                                           unsigned* __restrict__ count,
                                           unsigned* __restrict__ opposite) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= corners) return;
    const unsigned t = i / 3, k = i - 3 * t;
    const unsigned x = fe[i];
    const unsigned slot = atomicAdd(&count[x], 1u);
    if (slot < 2) opposite[2 * x + slot] = idx[3 * t + (k + 2) % 3];
}

__device__ __forceinline__ void rxsd_add(double* s, unsigned i, const float* p, unsigned j) {
    atomicAdd(&s[3 * i], (double)p[3 * j]);
    atomicAdd(&s[3 * i + 1], (double)p[3 * j + 1]);
    atomicAdd(&s[3 * i + 2], (double)p[3 * j + 2]);
}

// n[v], sum[3v..]: every edge at v; creases[v], crease_ends[2v..]: the crease edges (not exactly
// two triangles) and the far ends of the first two. An edge from a vertex to itself counts for
// neither. crease_edges[level] counts the level's crease edges.
extern "C" __global__ void rxsd_rings(const unsigned* __restrict__ ev, unsigned edges,
                                      const unsigned* __restrict__ count,
                                      const float* __restrict__ pos, unsigned* __restrict__ n,
                                      double* __restrict__ sum, unsigned* __restrict__ creases,
                                      unsigned* __restrict__ crease_ends,
                                      unsigned* __restrict__ crease_edges, unsigned level,
                                      int uv_dim, const float* __restrict__ uv,
                                      double* __restrict__ uv_sum) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= edges) return;
    if (count[x] != 2) atomicAdd(&crease_edges[level], 1u);
    const unsigned a = ev[2 * x], b = ev[2 * x + 1];
    if (a == b) return;
    atomicAdd(&n[a], 1u);
    atomicAdd(&n[b], 1u);
    rxsd_add(sum, a, pos, b);
    rxsd_add(sum, b, pos, a);
    for (int j = 0; j < uv_dim; ++j) {
        atomicAdd(&uv_sum[uv_dim * a + j], (double)uv[uv_dim * b + j]);
        atomicAdd(&uv_sum[uv_dim * b + j], (double)uv[uv_dim * a + j]);
    }
    if (count[x] != 2) {
        const unsigned sa = atomicAdd(&creases[a], 1u), sb = atomicAdd(&creases[b], 1u);
        if (sa < 2) crease_ends[2 * a + sa] = b;
        if (sb < 2) crease_ends[2 * b + sb] = a;
    }
}

// Attribute x (dim floats a vertex, neighbour sums s) of new vertex i by its rule: for an old
// vertex (i < v) 0 smooth (k edges), 1 crease (ends ea, eb), 2 stay; for an edge's vertex (its
// ends a, b, opposite corners c, d when inner). The CPU's loop_values, operation for operation.
__device__ __forceinline__ void rxsd_value(const float* __restrict__ x,
                                           const double* __restrict__ s, int dim, unsigned i,
                                           unsigned v, int rule, unsigned k, double beta,
                                           unsigned ea, unsigned eb, unsigned a, unsigned b,
                                           bool inner, unsigned c, unsigned d,
                                           float* __restrict__ out) {
    for (int j = 0; j < dim; ++j) {
        double r;
        if (i < v) {
            const double xi = (double)x[dim * i + j];
            if (rule == 0) {
                r = xi * (1.0 - (double)k * beta) + s[dim * i + j] * beta;
            } else if (rule == 1) {
                r = xi * 0.75 + ((double)x[dim * ea + j] + (double)x[dim * eb + j]) * 0.125;
            } else {
                r = xi;
            }
        } else {
            const double ends = (double)x[dim * a + j] + (double)x[dim * b + j];
            r = inner ? ends * 0.375 + ((double)x[dim * c + j] + (double)x[dim * d + j]) * 0.125
                      : ends * 0.5;
        }
        out[dim * i + j] = (float)r;
    }
}

// out[0 .. v): the old vertices moved; out[v .. v + edges): the edges' new vertices; the same
// for the texture coordinates where the mesh has them (uv_dim floats a vertex: 2 for one set, 4
// for two interleaved, 0 for none).
extern "C" __global__ void rxsd_points(const float* __restrict__ pos, unsigned v, unsigned edges,
                                       const unsigned* __restrict__ n,
                                       const double* __restrict__ sum,
                                       const unsigned* __restrict__ creases,
                                       const unsigned* __restrict__ crease_ends,
                                       double cos_corner, const double* __restrict__ betas,
                                       unsigned nbetas,
                                       const unsigned* __restrict__ ev,
                                       const unsigned* __restrict__ count,
                                       const unsigned* __restrict__ opposite,
                                       float* __restrict__ out, int uv_dim,
                                       const float* __restrict__ uv,
                                       const double* __restrict__ uv_sum,
                                       float* __restrict__ uv_out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v + edges) return;
    int rule = 2;
    unsigned k = 0, ea = 0, eb = 0, a = 0, b = 0, c = 0, d = 0;
    double beta = 0.0;
    bool inner = false;
    if (i < v) {
        k = n[i];
        const unsigned cr = creases[i];
        rule = cr == 0 && k > 0 ? 0 : (cr == 2 ? 1 : 2);  // smooth, crease, stay
        ea = crease_ends[2 * i];
        eb = crease_ends[2 * i + 1];
        if (rule == 0) beta = k < nbetas ? betas[k] : rxsd_beta(k);
        if (rule == 1) {
            // a corner where the creases meet at less than the corner angle (cpu.rs's is_corner)
            double uu = 0.0, ww = 0.0, uw = 0.0;
            for (int j = 0; j < 3; ++j) {
                const double x = (double)pos[3 * i + j];
                const double u = (double)pos[3 * ea + j] - x, w = (double)pos[3 * eb + j] - x;
                uu = uu + u * u;
                ww = ww + w * w;
                uw = uw + u * w;
            }
            if (uw > cos_corner * sqrt(uu * ww)) rule = 2;
        }
    } else {
        const unsigned x = i - v;
        a = ev[2 * x];
        b = ev[2 * x + 1];
        inner = count[x] == 2;
        c = opposite[2 * x];
        d = opposite[2 * x + 1];
    }
    rxsd_value(pos, sum, 3, i, v, rule, k, beta, ea, eb, a, b, inner, c, d, out);
    if (uv_dim)
        rxsd_value(uv, uv_sum, uv_dim, i, v, rule, k, beta, ea, eb, a, b, inner, c, d, uv_out);
}

// Triangle t of `idx` (edges fe) becomes triangles 4t to 4t + 3 (as split_triangle in mod.rs).
extern "C" __global__ void rxsd_split(const unsigned* __restrict__ idx,
                                      const unsigned* __restrict__ fe,
                                      const unsigned* __restrict__ ev, unsigned triangles,
                                      unsigned v, unsigned edges, unsigned* __restrict__ idx2,
                                      unsigned* __restrict__ fe2, unsigned* __restrict__ ev2) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= triangles) return;
    const unsigned a = idx[3 * t], b = idx[3 * t + 1], c = idx[3 * t + 2];
    const unsigned e0 = fe[3 * t], e1 = fe[3 * t + 1], e2 = fe[3 * t + 2];
    const unsigned m0 = v + e0, m1 = v + e1, m2 = v + e2;
    // the half of edge x that ends at corner y: the first half starts at the edge's first end
#define RXSD_HALF(x, y) (ev[2 * (x)] == (y) ? 2 * (x) : 2 * (x) + 1)
    const unsigned i0 = 2 * edges + 3 * t, i1 = i0 + 1, i2 = i0 + 2;
    const unsigned tris[12] = {a, m0, m2, m0, b, m1, m2, m1, c, m0, m1, m2};
    const unsigned es[12] = {RXSD_HALF(e0, a), i0, RXSD_HALF(e2, a),
                             RXSD_HALF(e0, b), RXSD_HALF(e1, b), i1,
                             i2, RXSD_HALF(e1, c), RXSD_HALF(e2, c),
                             i1, i2, i0};
#undef RXSD_HALF
    for (int k = 0; k < 12; ++k) {
        idx2[12 * t + k] = tris[k];
        fe2[12 * t + k] = es[k];
    }
    ev2[2 * i0] = m0;
    ev2[2 * i0 + 1] = m2;
    ev2[2 * i1] = m0;
    ev2[2 * i1 + 1] = m1;
    ev2[2 * i2] = m1;
    ev2[2 * i2 + 1] = m2;
}

// Edge x's halves: its first end to its new vertex, then on to its second end.
extern "C" __global__ void rxsd_halves(const unsigned* __restrict__ ev, unsigned edges,
                                       unsigned v, unsigned* __restrict__ ev2) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= edges) return;
    const unsigned a = ev[2 * x], b = ev[2 * x + 1], m = v + x;
    ev2[4 * x] = a;
    ev2[4 * x + 1] = m;
    ev2[4 * x + 2] = m;
    ev2[4 * x + 3] = b;
}

// The rings that Loop's program on the geometry stage's strategies walks
// (kernels/programs/loop.cu): every vertex's edges in edge order, an edge from a vertex to
// itself in none. Four steps:
//
//   rxsd_ring_count    per edge: one more entry at each end; crease_edges[level] counts creases
//   (scan)             the counts' exclusive prefix: each vertex's first entry
//   rxsd_ring_fill     per edge: its id into each end's ring, at a slot an atomic hands out
//   rxsd_ring_order    per vertex: its ring sorted by edge id, so that the program adds the
//                      neighbours in the order the CPU adds them (the same bits), then each
//                      entry turned into the edge's far end, its crease flag beside it
extern "C" __global__ void rxsd_ring_count(const unsigned* __restrict__ ev, unsigned edges,
                                           const unsigned* __restrict__ count,
                                           unsigned* __restrict__ entries,
                                           unsigned* __restrict__ crease_edges, unsigned level) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= edges) return;
    if (count[x] != 2) atomicAdd(&crease_edges[level], 1u);
    const unsigned a = ev[2 * x], b = ev[2 * x + 1];
    if (a == b) return;
    atomicAdd(&entries[a], 1u);
    atomicAdd(&entries[b], 1u);
}

extern "C" __global__ void rxsd_ring_fill(const unsigned* __restrict__ ev, unsigned edges,
                                          const unsigned* __restrict__ offsets,
                                          unsigned* __restrict__ filled,
                                          unsigned* __restrict__ ring) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= edges) return;
    const unsigned a = ev[2 * x], b = ev[2 * x + 1];
    if (a == b) return;
    ring[offsets[a] + atomicAdd(&filled[a], 1u)] = x;
    ring[offsets[b] + atomicAdd(&filled[b], 1u)] = x;
}

// Moves a[root] down the max-heap a[0 .. n).
__device__ __forceinline__ void rxsd_sift(unsigned* a, unsigned root, unsigned n) {
    for (;;) {
        unsigned c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1] > a[c]) ++c;
        if (a[root] >= a[c]) return;
        const unsigned t = a[root];
        a[root] = a[c];
        a[c] = t;
        root = c;
    }
}

// A ring's entries are distinct edge ids: insertion sort for the usual few, heapsort (in place,
// n log n) for a vertex of many edges. The program reads neighbours, not edges: each entry then
// becomes the far end of its edge, and crease[entry] whether the edge is a crease (not exactly
// two triangles).
extern "C" __global__ void rxsd_ring_order(const unsigned* __restrict__ offsets, unsigned v,
                                           const unsigned* __restrict__ ev,
                                           const unsigned* __restrict__ count,
                                           unsigned* __restrict__ ring,
                                           unsigned* __restrict__ crease) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v) return;
    unsigned* a = ring + offsets[i];
    const unsigned n = offsets[i + 1] - offsets[i];
    if (n <= 32) {
        for (unsigned k = 1; k < n; ++k) {
            const unsigned x = a[k];
            unsigned j = k;
            for (; j > 0 && a[j - 1] > x; --j) a[j] = a[j - 1];
            a[j] = x;
        }
    } else {
        for (unsigned r = n / 2; r-- > 0;) rxsd_sift(a, r, n);
        for (unsigned end = n - 1; end > 0; --end) {
            const unsigned t = a[0];
            a[0] = a[end];
            a[end] = t;
            rxsd_sift(a, 0, end);
        }
    }
    for (unsigned k = 0; k < n; ++k) {
        const unsigned e = a[k];
        a[k] = ev[2 * e] ^ ev[2 * e + 1] ^ i;
        crease[offsets[i] + k] = count[e] != 2;
    }
}
