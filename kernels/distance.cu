// The least and the greatest distance between two meshes (gDist): the front of BVH node pairs
// expanded breadth first, then the surviving leaf pairs' triangles. src/distance/ is the
// reference; the triangle and box functions here are its src/distance/triangle.rs operation for
// operation (built with --fmad=false), so both give the same bits. The search kernels are
// written once for both goals (MAX: the greatest distance) and kept bounds as keys that order
// the better distance first (src/distance/cpu.rs: Goal::key).

// (the vector type and the point, segment and crossing functions: kernels/triangle.cuh, built
// before this file)

// the squared distance between two triangles (src/distance/triangle.rs: tri_tri)
__device__ double rxdi_tri_tri(const rxdi_v* a, const rxdi_v* b) {
    rxdi_v na = rxdi_cross(rxdi_sub(a[1], a[0]), rxdi_sub(a[2], a[0]));
    rxdi_v nb = rxdi_cross(rxdi_sub(b[1], b[0]), rxdi_sub(b[2], b[0]));
    rxdi_v x;
    for (int i = 0; i < 3; i++)
        if (rxdi_crossing(a[i], a[(i + 1) % 3], b, nb, &x)) return 0.0;
    for (int j = 0; j < 3; j++)
        if (rxdi_crossing(b[j], b[(j + 1) % 3], a, na, &x)) return 0.0;
    double best = __longlong_as_double(0x7ff0000000000000ll);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = rxdi_seg_seg(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3]);
            if (d < best) best = d;
        }
    if (!rxdi_zero(nb))
        for (int i = 0; i < 3; i++) {
            double d = rxdi_dist2(a[i], rxdi_point_tri(a[i], b));
            if (d < best) best = d;
        }
    if (!rxdi_zero(na))
        for (int j = 0; j < 3; j++) {
            double d = rxdi_dist2(rxdi_point_tri(b[j], a), b[j]);
            if (d < best) best = d;
        }
    return best;
}

// the squared greatest distance between two triangles: the farthest of the nine corner pairs
// (src/distance/triangle.rs: tri_far2)
__device__ double rxdi_tri_far2(const rxdi_v* a, const rxdi_v* b) {
    double best = rxdi_dist2(a[0], b[0]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = rxdi_dist2(a[i], b[j]);
            if (d > best) best = d;
        }
    return best;
}

// a node's box: least corner, greatest corner
struct rxdi_box { float lo[3], hi[3]; };

__device__ __forceinline__ double rxdi_box_lower2(const rxdi_box& a, const rxdi_box& b) {
    double s = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax((double)b.lo[k] - (double)a.hi[k], (double)a.lo[k] - (double)b.hi[k]);
        if (g > 0.0) s += g * g;
    }
    return s;
}

// the farthest two points of boxes a and b whose axes are given by (lo, hi) pairs
__device__ __forceinline__ double rxdi_box_far2(const float* alo, const float* ahi, const float* blo, const float* bhi) {
    double s = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(fabs((double)ahi[k] - (double)blo[k]), fabs((double)alo[k] - (double)bhi[k]));
        s += g * g;
    }
    return s;
}

// gDist's enhanced upper bound of tight boxes: the least over the 36 face pairs of their
// farthest points (src/distance/triangle.rs: box_upper2)
__device__ double rxdi_box_upper2(const rxdi_box& a, const rxdi_box& b) {
    double best = __longlong_as_double(0x7ff0000000000000ll);
    for (int i = 0; i < 6; i++) {
        float alo[3] = {a.lo[0], a.lo[1], a.lo[2]}, ahi[3] = {a.hi[0], a.hi[1], a.hi[2]};
        float av = (i % 2 == 0) ? a.lo[i / 2] : a.hi[i / 2];
        alo[i / 2] = av; ahi[i / 2] = av;
        for (int j = 0; j < 6; j++) {
            float blo[3] = {b.lo[0], b.lo[1], b.lo[2]}, bhi[3] = {b.hi[0], b.hi[1], b.hi[2]};
            float bv = (j % 2 == 0) ? b.lo[j / 2] : b.hi[j / 2];
            blo[j / 2] = bv; bhi[j / 2] = bv;
            double d = rxdi_box_far2(alo, ahi, blo, bhi);
            if (d < best) best = d;
        }
    }
    return best;
}

// gDist's enhanced lower bound of the greatest distance of tight boxes: the greatest over the 36
// face pairs of their gaps (src/distance/triangle.rs: box_near_far2)
__device__ double rxdi_box_near_far2(const rxdi_box& a, const rxdi_box& b) {
    double best = 0.0;
    for (int i = 0; i < 6; i++) {
        rxdi_box fa = a;
        float av = (i % 2 == 0) ? a.lo[i / 2] : a.hi[i / 2];
        fa.lo[i / 2] = av; fa.hi[i / 2] = av;
        for (int j = 0; j < 6; j++) {
            rxdi_box fb = b;
            float bv = (j % 2 == 0) ? b.lo[j / 2] : b.hi[j / 2];
            fb.lo[j / 2] = bv; fb.hi[j / 2] = bv;
            double d = rxdi_box_lower2(fa, fb);
            if (d > best) best = d;
        }
    }
    return best;
}

// A squared distance as a key that orders the better distance first: its bits for the least,
// their complement for the greatest.
template <bool MAX> __device__ __forceinline__ unsigned long long rxdi_key(double d) {
    unsigned long long k = (unsigned long long)__double_as_longlong(d);
    return MAX ? ~k : k;
}
template <bool MAX> __device__ __forceinline__ double rxdi_unkey(unsigned long long k) {
    return __longlong_as_double((long long)(MAX ? ~k : k));
}
// the best a pair of boxes could hold (the gap; the farthest corners) and what it surely holds
template <bool MAX> __device__ __forceinline__ double rxdi_hope(const rxdi_box& a, const rxdi_box& b) {
    return MAX ? rxdi_box_far2(a.lo, a.hi, b.lo, b.hi) : rxdi_box_lower2(a, b);
}
template <bool MAX> __device__ __forceinline__ double rxdi_sure(const rxdi_box& a, const rxdi_box& b) {
    return MAX ? rxdi_box_near_far2(a, b) : rxdi_box_upper2(a, b);
}
// whether a pair hoping for `hope` may still hold the best when `bound` is reached (keep: 1 +
// the slack)
template <bool MAX> __device__ __forceinline__ bool rxdi_keep(double hope, double bound, double keep) {
    return MAX ? hope * keep >= bound : hope <= bound * keep;
}
// whether the least distance's search is over: a pair of triangles measured at 0 (the meshes
// touch or cross), which nothing can beat (`best`: the key of the best distance measured). Which
// of several crossing pairs the search answers with then depends on the threads' order.
template <bool MAX> __device__ __forceinline__ bool rxdi_over(const unsigned long long* best) {
    return !MAX && *(const volatile unsigned long long*)best == 0ull;
}
// the worst distance: what an idle thread offers
template <bool MAX> __device__ __forceinline__ double rxdi_worst() {
    return MAX ? 0.0 : __longlong_as_double(0x7ff0000000000000ll);
}

__device__ __forceinline__ rxdi_box rxdi_load_box(const float* boxes, unsigned node) {
    rxdi_box b;
    for (int k = 0; k < 3; k++) { b.lo[k] = boxes[6 * node + k]; b.hi[k] = boxes[6 * node + 3 + k]; }
    return b;
}

// The least of a value over the warp (its bits: positive doubles order as their bits).
__device__ __forceinline__ unsigned long long rxdi_warp_min(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

// The search runs in one cooperative launch (every block resident at once): the front's
// expansions level after level, then the leaf pairs, then the pick, with a barrier of the whole
// grid between them, so that the host neither reads back the front's size after each expansion
// nor launches a kernel for each. Its state on the device, in 32-bit words:
//   [0] 1 when an expansion's pairs would not fit its output (the search then stops)
//   [1] that expansion;  [2], [3] the pairs it needed (low, high word)
//   [4] 1 + the entry whose front holds only leaf pairs: the leaves' front
//   [5], [6] the grid barrier's count of blocks arrived and its generation
//   [7] probes taken (a search within a relative error: rxdi_probe)
//   [RXDI_ENTRIES + 3 i ...] entry i, the front after i expansions: its pairs, its level in A and in B
// Entry 0 (the roots' pair) is set by the host, the others start at zero. A search that stopped
// is resumed by the host from the expansion that stopped it, once its buffer has grown.
#define RXDI_ENTRIES 8u

// A barrier of the whole grid: every block arrives, the last one opens it for the next
// generation. (Valid in a cooperative launch only: all blocks are resident.)
__device__ __forceinline__ void rxdi_grid_sync(unsigned* st) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* gen = st + 6;
        unsigned g = *gen;
        __threadfence();
        if (atomicAdd(st + 5, 1u) == gridDim.x - 1u) {
            atomicExch(st + 5, 0u);
            __threadfence();
            atomicAdd(st + 6, 1u);
        } else {
            while (*gen == g) __nanosleep(64);
        }
        __threadfence();
    }
    __syncthreads();
}

// The levels expansion i takes, from its entry: the most k with n 4^k within `front_max` (each
// tree's k bounded by the levels it has left), at least one; false when there is nothing to
// expand (the front emptied, or every pair is a leaf pair).
__device__ __forceinline__ bool rxdi_plan(const unsigned* st, unsigned i, unsigned depth_a, unsigned depth_b,
                                          unsigned long long front_max, unsigned* n, unsigned* la,
                                          unsigned* lb, unsigned* ka, unsigned* kb) {
    const volatile unsigned* e = st + RXDI_ENTRIES + 3u * i;
    *n = e[0]; *la = e[1]; *lb = e[2];
    if (*n == 0u || (*la == depth_a && *lb == depth_b)) return false;
    unsigned most = max(depth_a - *la, depth_b - *lb);
    unsigned k = 1;
    for (unsigned c = most; c >= 1u; c--) {
        unsigned ca = min(depth_a - *la, c), cb = min(depth_b - *lb, c);
        if (((unsigned long long)*n << (ca + cb)) <= front_max) { k = c; break; }
    }
    *ka = min(depth_a - *la, k);
    *kb = min(depth_b - *lb, k);
    return true;
}


// The triangles of leaf i of 2^depth leaves over n triangles: order[start(i) .. start(i + 1)).
__device__ __forceinline__ unsigned rxdi_leaf_start(unsigned n, unsigned depth, unsigned i) {
    return (unsigned)(((unsigned long long)n * i) >> depth);
}

__device__ __forceinline__ void rxdi_corners(const float* pos, const unsigned* idx, unsigned tri, rxdi_v* c) {
    for (int k = 0; k < 3; k++) {
        unsigned v = idx[3 * tri + k];
        c[k] = {(double)pos[3 * v], (double)pos[3 * v + 1], (double)pos[3 * v + 2]};
    }
}

// One mesh as the search reads it: positions, indices, triangle order, triangles, tree depth.
struct rxdi_mesh {
    const float* pos; const unsigned* idx; const unsigned* order; unsigned n, depth;
};

// The first triangle under node `node` (breadth-first index) of a tree of depth `m.depth`.
__device__ __forceinline__ unsigned rxdi_first_triangle(const rxdi_mesh& m, unsigned node) {
    unsigned level = 31u - __clz(node + 1u);
    unsigned leaf = ((node + 1u) << (m.depth - level)) - (1u << m.depth);
    return m.order[rxdi_leaf_start(m.n, m.depth, leaf)];
}

// A probe of a search within a relative error: the node pair (a, b), whose sure bound has just
// tightened the global bound, measured at its first triangles, so that the expansions can cull
// against a distance a pair of triangles reaches (distance::rel_keep says why the boxes' sure
// bound cannot serve). The pair is kept in `probes` (its key, then the pair: triangle of A
// high) for the pick, and its key tightens `best`; a probe beyond the buffer is not taken.
template <bool MAX>
__device__ void rxdi_probe(const rxdi_mesh& ma, const rxdi_mesh& mb, unsigned a, unsigned b, unsigned* st,
                           unsigned long long* probes, unsigned probes_max, unsigned long long* best,
                           unsigned long long* tested) {
    unsigned s = atomicAdd(st + 7, 1u);
    if (s >= probes_max) return;
    unsigned ta = rxdi_first_triangle(ma, a), tb = rxdi_first_triangle(mb, b);
    rxdi_v ca[3], cb[3];
    rxdi_corners(ma.pos, ma.idx, ta, ca);
    rxdi_corners(mb.pos, mb.idx, tb, cb);
    unsigned long long key = rxdi_key<MAX>(MAX ? rxdi_tri_far2(ca, cb) : rxdi_tri_tri(ca, cb));
    probes[2 * s] = key;
    probes[2 * s + 1] = ((unsigned long long)ta << 32) | tb;
    atomicMin(best, key);
    atomicAdd(tested, 1ull);
}

// Expansion i (planned by rxdi_plan: its levels la, lb, ka, kb and `threads`): thread t
// (grid-stride) takes pair t >> (ka + kb) of the front `in` (entry i) and
// its descendants ka levels below in A and kb below in B (the low bits of t choose them). The
// pair's sure bound tightens the global bound (`bound`, a key: an atomic minimum); the pair stays
// (in `out`, counted in entry i + 1) unless its hope misses the global bound by more than the
// slack. A warp tightens the bound once, with its best, and takes its output slots with one
// atomic (blocks are whole warps, and a block's threads run the loop's rounds together). The
// front is read past L1 (__ldcg): other blocks wrote it during this launch. Within a relative
// error (APPROX), a warp whose best sure bound tightened the global bound probes
// that pair (rxdi_probe), and a pair also leaves when its hope misses `best`, the best distance
// measured, by more than keep_rel.
template <bool MAX, bool APPROX>
__device__ void rxdi_expand_as(const float* __restrict__ boxes_a, const float* __restrict__ boxes_b,
                               const rxdi_mesh& ma, const rxdi_mesh& mb, const uint2* in, uint2* out,
                               unsigned* st, unsigned i, unsigned la, unsigned lb, unsigned ka,
                               unsigned kb, unsigned long long threads, unsigned long long* bound,
                               double keep, double keep_rel, unsigned long long* probes,
                               unsigned probes_max, unsigned long long* best_found,
                               unsigned long long* tested) {
    unsigned depth_a = ma.depth, depth_b = mb.depth;
    unsigned* next = st + RXDI_ENTRIES + 3u * (i + 1u);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        next[1] = la + ka;
        next[2] = lb + kb;
        if (la + ka == depth_a && lb + kb == depth_b) st[4] = i + 2u;
    }
    unsigned lane = threadIdx.x & 31u;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x; base < threads; base += stride) {
        unsigned long long t = base + threadIdx.x;
        bool active = t < threads;
        unsigned a = 0, b = 0;
        double sure = rxdi_worst<MAX>(), hope = sure;
        if (active) {
            uint2 e = __ldcg(in + (t >> (ka + kb)));
            unsigned ja = (unsigned)(t >> kb) & ((1u << ka) - 1u);
            unsigned jb = (unsigned)t & ((1u << kb) - 1u);
            a = ((e.x + 1u) << ka) - 1u + ja;
            b = ((e.y + 1u) << kb) - 1u + jb;
            rxdi_box ba = rxdi_load_box(boxes_a, a), bb = rxdi_load_box(boxes_b, b);
            sure = rxdi_sure<MAX>(ba, bb);
            hope = rxdi_hope<MAX>(ba, bb);
        }
        unsigned long long best = rxdi_warp_min(rxdi_key<MAX>(sure));
        unsigned long long was = 0;
        if (lane == 0) was = atomicMin(bound, best);
        if (APPROX && __shfl_sync(0xffffffffu, was, 0) > best) {
            unsigned holder = __ffs(__ballot_sync(0xffffffffu, active && rxdi_key<MAX>(sure) == best)) - 1u;
            if (lane == holder) rxdi_probe<MAX>(ma, mb, a, b, st, probes, probes_max, best_found, tested);
        }
        unsigned long long g = *(volatile unsigned long long*)bound;
        double global = rxdi_unkey<MAX>(g < best ? g : best);
        bool stays = active && rxdi_keep<MAX>(hope, global, keep);
        // (only a probe measures triangles during the expansions)
        if (APPROX && rxdi_over<MAX>(best_found)) stays = false;
        if (APPROX && stays)
            stays = rxdi_keep<MAX>(hope, rxdi_unkey<MAX>(*(volatile unsigned long long*)best_found), keep_rel);
        unsigned mask = __ballot_sync(0xffffffffu, stays);
        if (mask == 0u) continue;
        unsigned leader = __ffs(mask) - 1u, slot = 0;
        if (lane == leader) slot = atomicAdd(next, (unsigned)__popc(mask));
        slot = __shfl_sync(0xffffffffu, slot, leader);
        if (stays) out[slot + __popc(mask & ((1u << lane) - 1u))] = make_uint2(a, b);
    }
}


// The leaf pairs' front (entry st[4] - 1, in fronts0 or fronts1 by its parity) and its size; 0
// pairs where the search stopped or the front emptied (st[4] is then 0: it is set, before a
// barrier, only by the expansion that reaches both trees' leaves).
__device__ __forceinline__ unsigned rxdi_final(const unsigned* st, const uint2* fronts0, const uint2* fronts1,
                                               const uint2** front) {
    const volatile unsigned* v = st;
    unsigned f = v[4];
    if (f == 0u) return 0u;
    *front = ((f - 1u) % 2u == 0u) ? fronts0 : fronts1;
    return v[RXDI_ENTRIES + 3u * (f - 1u)];
}

// Each leaf pair of the final front (grid-stride, entry j): its triangles' exact distances (at
// most four), culled first against the global bound; the best (distance, least pair) of the entry
// in d2[j], pair[j] (triangle of A high, of B low) and the warp's best distance into `best` and
// `bound` (keys; blocks are whole warps). A search within a relative error (APPROX; keep_rel:
// distance::rel_keep) also culls against `best`, the best distance measured, with keep_rel, and
// shares each warp's best into it every round, so that the later rounds are culled against it.
template <bool MAX, bool APPROX>
__device__ void rxdi_leaves_as(const uint2* fronts0, const uint2* fronts1, const unsigned* st,
                               const float* __restrict__ boxes_a, const float* __restrict__ boxes_b,
                               const float* __restrict__ pos_a, const unsigned* __restrict__ idx_a,
                               const unsigned* __restrict__ order_a, unsigned n_a, unsigned depth_a,
                               const float* __restrict__ pos_b, const unsigned* __restrict__ idx_b,
                               const unsigned* __restrict__ order_b, unsigned n_b, unsigned depth_b,
                               unsigned long long* bound, double keep, double keep_rel, double* d2,
                               unsigned long long* pair, unsigned long long* best, unsigned long long* tested) {
    const uint2* front = fronts0;
    unsigned count = rxdi_final(st, fronts0, fronts1, &front);
    double tbest = rxdi_worst<MAX>();
    unsigned n = 0;
    unsigned stride = gridDim.x * blockDim.x;
    unsigned lane = threadIdx.x & 31u;
    // (i - lane is the warp's, so every lane of a warp takes the same rounds)
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i - lane < count; i += stride) {
        double dbest = rxdi_worst<MAX>();
        unsigned long long pbest = ~0ull;
        bool kept = false;
        uint2 e = make_uint2(0u, 0u);
        if (i < count) {
            e = __ldcg(front + i);
            double hope = rxdi_hope<MAX>(rxdi_load_box(boxes_a, e.x), rxdi_load_box(boxes_b, e.y));
            double global = rxdi_unkey<MAX>(*(volatile unsigned long long*)bound);
            kept = rxdi_keep<MAX>(hope, global, keep) && !rxdi_over<MAX>(best);
            if (APPROX && kept) {
                double found = rxdi_unkey<MAX>(*(volatile unsigned long long*)best);
                kept = rxdi_keep<MAX>(hope, found, keep_rel);
            }
        }
        if (kept) {
            unsigned la = e.x + 1u - (1u << depth_a), lb = e.y + 1u - (1u << depth_b);
            unsigned a0 = rxdi_leaf_start(n_a, depth_a, la), a1 = rxdi_leaf_start(n_a, depth_a, la + 1);
            unsigned b0 = rxdi_leaf_start(n_b, depth_b, lb), b1 = rxdi_leaf_start(n_b, depth_b, lb + 1);
            for (unsigned p = a0; p < a1; p++) {
                unsigned ta = order_a[p];
                rxdi_v ca[3];
                rxdi_corners(pos_a, idx_a, ta, ca);
                for (unsigned q = b0; q < b1; q++) {
                    unsigned tb = order_b[q];
                    rxdi_v cb[3];
                    rxdi_corners(pos_b, idx_b, tb, cb);
                    double d = MAX ? rxdi_tri_far2(ca, cb) : rxdi_tri_tri(ca, cb);
                    unsigned long long pr = ((unsigned long long)ta << 32) | tb;
                    n++;
                    bool better = MAX ? d > dbest : d < dbest;
                    if (better || (d == dbest && pr < pbest)) { dbest = d; pbest = pr; }
                }
            }
            // a crossing pair ends the least distance's search: said at once, so that the
            // other threads' next rounds stop (rxdi_over)
            if (!MAX && dbest == 0.0) atomicMin(best, rxdi_key<MAX>(0.0));
        }
        if (i < count) {
            d2[i] = dbest;
            pair[i] = pbest;
        }
        if (rxdi_key<MAX>(dbest) < rxdi_key<MAX>(tbest)) tbest = dbest;
        if (APPROX) {
            unsigned long long w = rxdi_warp_min(rxdi_key<MAX>(dbest));
            if (lane == 0u && w < *(volatile unsigned long long*)best) atomicMin(best, w);
        }
    }
    // a warp's best distance and pairs measured, with one atomic each
    unsigned long long least = rxdi_warp_min(rxdi_key<MAX>(tbest));
    unsigned long long sum = n;
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31u) == 0 && sum) {
        atomicMin(bound, least);
        atomicMin(best, least);
        atomicAdd(tested, sum);
    }
}

// The whole search from expansion `from` (0, or where a stopped search resumes) to the leaves'
// pick: the least pair among the final front's entries at the best distance into `least`.
template <bool MAX, bool APPROX>
__device__ void rxdi_search_as(const float* __restrict__ boxes_a, const float* __restrict__ boxes_b,
                               const float* __restrict__ pos_a, const unsigned* __restrict__ idx_a,
                               const unsigned* __restrict__ order_a, unsigned n_a, unsigned depth_a,
                               const float* __restrict__ pos_b, const unsigned* __restrict__ idx_b,
                               const unsigned* __restrict__ order_b, unsigned n_b, unsigned depth_b,
                               uint2* fronts0, uint2* fronts1, unsigned long long capacity0,
                               unsigned long long capacity1, unsigned long long front_max, unsigned* st,
                               unsigned from, unsigned long long* counters, double keep, double keep_rel,
                               double* d2, unsigned long long* pair, unsigned long long* probes,
                               unsigned probes_max) {
    rxdi_mesh ma = {pos_a, idx_a, order_a, n_a, depth_a}, mb = {pos_b, idx_b, order_b, n_b, depth_b};
    unsigned long long* bound = counters;
    unsigned long long* best = counters + 1;
    unsigned long long* least = counters + 2;
    unsigned long long* tested = counters + 3;
    for (unsigned i = from;; i++) {
        // Every block decides from entry i alone, which the expansion before the last barrier
        // wrote and this one does not touch, so all blocks leave the loop together.
        unsigned n, la, lb, ka, kb;
        if (!rxdi_plan(st, i, depth_a, depth_b, front_max, &n, &la, &lb, &ka, &kb)) break;
        unsigned long long threads = (unsigned long long)n << (ka + kb);
        bool even = i % 2u == 0u;
        if (threads > (even ? capacity1 : capacity0)) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                st[1] = i; st[2] = (unsigned)threads; st[3] = (unsigned)(threads >> 32);
                __threadfence();
                st[0] = 1u;
            }
            break;
        }
        rxdi_expand_as<MAX, APPROX>(boxes_a, boxes_b, ma, mb, even ? fronts0 : fronts1, even ? fronts1 : fronts0,
                            st, i, la, lb, ka, kb, threads, bound, keep, keep_rel, probes, probes_max,
                            best, tested);
        rxdi_grid_sync(st);
    }
    rxdi_leaves_as<MAX, APPROX>(fronts0, fronts1, st, boxes_a, boxes_b, pos_a, idx_a, order_a, n_a, depth_a,
                        pos_b, idx_b, order_b, n_b, depth_b, bound, keep, keep_rel, d2, pair, best, tested);
    rxdi_grid_sync(st);
    const uint2* front = fronts0;
    unsigned count = rxdi_final(st, fronts0, fronts1, &front);
    unsigned long long want = *(volatile unsigned long long*)best;
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        if (rxdi_key<MAX>(__ldcg(d2 + i)) == want) atomicMin(least, __ldcg(pair + i));
    // the probes, which may hold the best distance within a relative error
    unsigned taken = min(((const volatile unsigned*)st)[7], probes_max);
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < taken; i += stride)
        if (__ldcg(probes + 2 * i) == want) atomicMin(least, __ldcg(probes + 2 * i + 1));
}

#define RXDI_SEARCH_ARGS const float* __restrict__ boxes_a, const float* __restrict__ boxes_b, \
    const float* __restrict__ pos_a, const unsigned* __restrict__ idx_a, \
    const unsigned* __restrict__ order_a, unsigned n_a, unsigned depth_a, \
    const float* __restrict__ pos_b, const unsigned* __restrict__ idx_b, \
    const unsigned* __restrict__ order_b, unsigned n_b, unsigned depth_b, \
    uint2* fronts0, uint2* fronts1, unsigned long long capacity0, unsigned long long capacity1, \
    unsigned long long front_max, unsigned* st, unsigned from, unsigned long long* counters, \
    double keep, double keep_rel, double* d2, unsigned long long* pair, \
    unsigned long long* probes, unsigned probes_max
#define RXDI_SEARCH_PASS boxes_a, boxes_b, pos_a, idx_a, order_a, n_a, depth_a, pos_b, idx_b, \
    order_b, n_b, depth_b, fronts0, fronts1, capacity0, capacity1, front_max, st, from, counters, \
    keep, keep_rel, d2, pair, probes, probes_max
// (the least distance's triangle test holds 217 registers a thread, which leaves one block of
// 256 an SM; two a SM measured faster on the nested spheres and the same on the tools)
// (the searches within a relative error are kernels of their own, so that the exact ones carry
// no probe)
extern "C" __global__ void __launch_bounds__(256, 2) rxdi_search(RXDI_SEARCH_ARGS) { rxdi_search_as<false, false>(RXDI_SEARCH_PASS); }
extern "C" __global__ void rxdi_search_max(RXDI_SEARCH_ARGS) { rxdi_search_as<true, false>(RXDI_SEARCH_PASS); }
extern "C" __global__ void __launch_bounds__(256, 2) rxdi_search_rel(RXDI_SEARCH_ARGS) { rxdi_search_as<false, true>(RXDI_SEARCH_PASS); }
extern "C" __global__ void rxdi_search_max_rel(RXDI_SEARCH_ARGS) { rxdi_search_as<true, true>(RXDI_SEARCH_PASS); }

// ---- placing meshes in the world: their positions under transforms, their trees refit ----
//
// Every kernel takes a table of jobs, one mesh each (7 words: object-space positions, world
// positions, indices, triangle order and boxes as addresses; vertices in the low half and
// triangles in the high half; tree depth), and their transforms (16 floats each, column-major;
// the last row is not read). blockIdx.y is the job, so that one launch serves every mesh.

struct rxdi_place {
    const float* object; float* world; const unsigned* idx; const unsigned* order; float* boxes;
    unsigned verts, tris, depth;
};

__device__ __forceinline__ rxdi_place rxdi_job(const unsigned long long* jobs, unsigned j) {
    const unsigned long long* t = jobs + 7 * (size_t)j;
    rxdi_place p;
    p.object = (const float*)t[0];
    p.world = (float*)t[1];
    p.idx = (const unsigned*)t[2];
    p.order = (const unsigned*)t[3];
    p.boxes = (float*)t[4];
    p.verts = (unsigned)t[5];
    p.tris = (unsigned)(t[5] >> 32);
    p.depth = (unsigned)t[6];
    return p;
}

// world = m * object, each coordinate ((c0 x + c4 y) + c8 z) + c12 as distance::placed's
// transform_point computes it (the module is built with --fmad=false: no product is fused into
// a sum, so both give the same bits).
extern "C" __global__ void rxdi_transform(const unsigned long long* __restrict__ jobs,
                                          const float* __restrict__ models) {
    rxdi_place p = rxdi_job(jobs, blockIdx.y);
    const float* m = models + 16 * (size_t)blockIdx.y;
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= p.verts) return;
    float x = p.object[3 * v], y = p.object[3 * v + 1], z = p.object[3 * v + 2];
    for (int r = 0; r < 3; r++) p.world[3 * v + r] = ((m[r] * x + m[4 + r] * y) + m[8 + r] * z) + m[12 + r];
}

// Each leaf's box (thread i, leaf i of 2^depth): the least and greatest corner coordinates of its
// triangles, into the leaves' places of the boxes (6 floats a node, breadth first).
extern "C" __global__ void rxdi_leaf_boxes(const unsigned long long* __restrict__ jobs) {
    rxdi_place p = rxdi_job(jobs, blockIdx.y);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << p.depth)) return;
    const float inf = __int_as_float(0x7f800000);
    float lo[3] = {inf, inf, inf}, hi[3] = {-inf, -inf, -inf};
    for (unsigned q = rxdi_leaf_start(p.tris, p.depth, i); q < rxdi_leaf_start(p.tris, p.depth, i + 1); q++) {
        unsigned t = p.order[q];
        for (int k = 0; k < 3; k++) {
            unsigned v = p.idx[3 * t + k];
            for (int c = 0; c < 3; c++) {
                lo[c] = fminf(lo[c], p.world[3 * v + c]);
                hi[c] = fmaxf(hi[c], p.world[3 * v + c]);
            }
        }
    }
    float* b = p.boxes + 6 * ((size_t)(1u << p.depth) - 1 + i);
    for (int c = 0; c < 3; c++) { b[c] = lo[c]; b[3 + c] = hi[c]; }
}

__device__ __forceinline__ void rxdi_union_children(float* boxes, size_t k) {
    const float* l = boxes + 6 * (2 * k + 1);
    const float* r = boxes + 6 * (2 * k + 2);
    float* b = boxes + 6 * k;
    for (int c = 0; c < 3; c++) {
        b[c] = fminf(l[c], r[c]);
        b[3 + c] = fmaxf(l[3 + c], r[3 + c]);
    }
}

// The boxes of one level (2^level nodes) of each tree deeper than it: each the union of its
// children's.
extern "C" __global__ void rxdi_parent_boxes(const unsigned long long* __restrict__ jobs, unsigned level) {
    rxdi_place p = rxdi_job(jobs, blockIdx.y);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (level >= p.depth || i >= (1u << level)) return;
    rxdi_union_children(p.boxes, (size_t)(1u << level) - 1 + i);
}

// The boxes of levels min(depth, top) - 1 down to 0 of tree blockIdx.x (few nodes), by one block:
// level by level, a barrier between levels (the block's writes to global memory are visible to
// its threads after it). One launch instead of one a level where the levels are too small to
// fill the GPU.
extern "C" __global__ void rxdi_top_boxes(const unsigned long long* __restrict__ jobs, unsigned top) {
    rxdi_place p = rxdi_job(jobs, blockIdx.x);
    int levels = (int)(p.depth < top ? p.depth : top);
    for (int level = levels - 1; level >= 0; level--) {
        for (unsigned i = threadIdx.x; i < (1u << level); i += blockDim.x)
            rxdi_union_children(p.boxes, (size_t)(1u << level) - 1 + i);
        __syncthreads();
    }
}

// ---- many objects at once: is each within a distance of one reference mesh? ----

// One object's mesh and tree on the device: 5 words of a table (boxes, positions, indices,
// triangle order as addresses; then triangles in the low half and tree depth in the high half).
struct rxdi_ref { const float* boxes; const float* pos; const unsigned* idx; const unsigned* order; unsigned n, depth; };

__device__ __forceinline__ rxdi_ref rxdi_table(const unsigned long long* table, unsigned obj) {
    const unsigned long long* t = table + 5 * (size_t)obj;
    rxdi_ref r;
    r.boxes = (const float*)t[0];
    r.pos = (const float*)t[1];
    r.idx = (const unsigned*)t[2];
    r.order = (const unsigned*)t[3];
    r.n = (unsigned)t[4];
    r.depth = (unsigned)(t[4] >> 32);
    return r;
}

__device__ __forceinline__ unsigned rxdi_level(unsigned node) { return 31u - __clz(node + 1u); }

// Appends `e` to `out` where `stays`, a warp's slots taken with one atomic (every thread of the
// warp calls it together).
__device__ __forceinline__ void rxdi_append(bool stays, uint4 e, uint4* out, unsigned* count) {
    unsigned lane = threadIdx.x & 31u;
    unsigned mask = __ballot_sync(0xffffffffu, stays);
    if (mask == 0u) return;
    unsigned leader = __ffs(mask) - 1u, base = 0;
    if (lane == leader) base = atomicAdd(count, (unsigned)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (stays) out[base + __popc(mask & ((1u << lane) - 1u))] = e;
}

// Entry i of the front `in` (n entries; the whole warp calls it together, i past n for none):
// (a node of A, b node of object obj's tree), unless its object is already found within reach,
// goes to `leaves` (counted in `leaf_count`) when both are leaves, else each of its child pairs
// (the children of whichever nodes are not leaves) whose boxes' gap is within reach (squared,
// with the slack: `reach2`) to `out` (counted in `out_count`). Then the warp's nearest child pair
// that stays (the least gap, the lowest lane on a tie) measures its nodes' first triangles: an
// object within reach is then found as its front nears the pair that shows it, not only at the
// leaves, and its pairs leave the search (the verdict is the same: a pair of triangles within
// cap2). The front and the answers are read past L1 (__ldcg): other blocks wrote them during
// this launch.
__device__ __forceinline__ void rxdi_within_expand(const float* __restrict__ boxes_a, const rxdi_mesh& ma,
                                                   const unsigned long long* __restrict__ table,
                                                   const uint4* in, unsigned n, unsigned i,
                                                   unsigned* found, double reach2, double cap2, uint4* out,
                                                   unsigned* out_count, uint4* leaves,
                                                   unsigned* leaf_count) {
    uint4 e = make_uint4(0u, 0u, 0u, 0u);
    bool live = i < n;
    if (live) {
        e = __ldcg(in + i);
        live = __ldcg(found + e.z) == 0u;
    }
    rxdi_ref b = rxdi_table(table, live ? e.z : 0u);
    bool leaf_a = live && rxdi_level(e.x) == ma.depth;
    bool leaf_b = live && rxdi_level(e.y) == b.depth;
    rxdi_append(live && leaf_a && leaf_b, e, leaves, leaf_count);
    bool split = live && !(leaf_a && leaf_b);
    // (the nearest child pair that stays, as its squared gap's bits: gaps are never negative,
    // so their bits order as they do)
    unsigned long long near = ~0ull;
    unsigned near_a = 0u, near_b = 0u;
    for (unsigned j = 0; j < 4; j++) {
        unsigned ja = j & 1u, jb = j >> 1;
        // (a leaf is its own only child: only its first child pair exists)
        bool exists = split && (!leaf_a || ja == 0u) && (!leaf_b || jb == 0u);
        uint4 c = e;
        bool stays = false;
        if (exists) {
            c.x = leaf_a ? e.x : 2u * e.x + 1u + ja;
            c.y = leaf_b ? e.y : 2u * e.y + 1u + jb;
            double gap2 = rxdi_box_lower2(rxdi_load_box(boxes_a, c.x), rxdi_load_box(b.boxes, c.y));
            stays = gap2 <= reach2;
            unsigned long long key = (unsigned long long)__double_as_longlong(gap2);
            if (stays && key < near) { near = key; near_a = c.x; near_b = c.y; }
        }
        rxdi_append(stays, c, out, out_count);
    }
    unsigned long long least = rxdi_warp_min(near);
    if (least == ~0ull) return;
    unsigned holder = __ffs(__ballot_sync(0xffffffffu, near == least)) - 1u;
    if ((threadIdx.x & 31u) != holder) return;
    rxdi_mesh mb = {b.pos, b.idx, b.order, b.n, b.depth};
    rxdi_v ca[3], cb[3];
    rxdi_corners(ma.pos, ma.idx, rxdi_first_triangle(ma, near_a), ca);
    rxdi_corners(mb.pos, mb.idx, rxdi_first_triangle(mb, near_b), cb);
    if (rxdi_tri_tri(ca, cb) <= cap2) found[e.z] = 1u;
}

// Pair `q` (0..4: triangle q & 1 of A's leaf with triangle q >> 1 of the object's) of leaf pair
// e, where both leaves hold it (one or two triangles a leaf): whether it lies within reach
// (squared distance at most cap2); if so its object is marked found. (A thread a pair of
// triangles, not a leaf pair: the threads' work stays even.)
__device__ __forceinline__ void rxdi_within_pair(const rxdi_mesh& ma, const unsigned long long* __restrict__ table,
                                                 uint4 e, unsigned q, double cap2, unsigned* found) {
    if (__ldcg(found + e.z)) return;
    rxdi_ref b = rxdi_table(table, e.z);
    unsigned la = e.x + 1u - (1u << ma.depth), lb = e.y + 1u - (1u << b.depth);
    unsigned p = rxdi_leaf_start(ma.n, ma.depth, la) + (q & 1u);
    unsigned r = rxdi_leaf_start(b.n, b.depth, lb) + (q >> 1);
    if (p >= rxdi_leaf_start(ma.n, ma.depth, la + 1) || r >= rxdi_leaf_start(b.n, b.depth, lb + 1)) return;
    rxdi_v ca[3], cb[3];
    rxdi_corners(ma.pos, ma.idx, ma.order[p], ca);
    rxdi_corners(b.pos, b.idx, b.order[r], cb);
    if (rxdi_tri_tri(ca, cb) <= cap2) found[e.z] = 1u;
}

// For every object of `table`: whether some pair of its triangles and A's lies within reach,
// into found[object]. One cooperative launch for the whole search: level i's front (entries of
// every object, in fronts0 or fronts1 by its parity) is expanded one level down in both trees by
// the whole grid (each warp also measuring its nearest child pair's first triangles), a barrier,
// its leaf pairs' pairs of triangles measured and a barrier (where it has any), the next level;
// an object found within reach drops out of the search. Its state on the device, in 32-bit words:
//   [0] 1 when a level's children might not fit the fronts' `capacity` (4 a pair); [1] that level
//   [5], [6] the grid barrier's count of blocks arrived and its generation (rxdi_grid_sync)
//   [RXDI_ENTRIES + 2 i] front i's pairs; [RXDI_ENTRIES + 2 i + 1] the leaf pairs level i set aside
// The host sets front 0 (the roots' pair of every object) and its count; a search that stopped
// is resumed by the host from the level that stopped it, once the fronts have grown.
extern "C" __global__ void rxdi_within_search(const float* __restrict__ boxes_a, const float* __restrict__ pos_a,
                                              const unsigned* __restrict__ idx_a,
                                              const unsigned* __restrict__ order_a, unsigned n_a,
                                              unsigned depth_a, const unsigned long long* __restrict__ table,
                                              uint4* fronts0, uint4* fronts1, uint4* leaves,
                                              unsigned capacity, unsigned* found, double reach2,
                                              double cap2, unsigned* st, unsigned from) {
    rxdi_mesh ma = {pos_a, idx_a, order_a, n_a, depth_a};
    unsigned stride = gridDim.x * blockDim.x;
    const volatile unsigned* v = st;
    for (unsigned i = from;; i++) {
        // every block decides from word i alone, which the level before the last barrier wrote
        unsigned n = v[RXDI_ENTRIES + 2u * i];
        if (n == 0u) break;
        if ((unsigned long long)n * 4u > capacity) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                st[1] = i;
                __threadfence();
                st[0] = 1u;
            }
            break;
        }
        const uint4* in = i % 2u == 0u ? fronts0 : fronts1;
        uint4* out = i % 2u == 0u ? fronts1 : fronts0;
        unsigned* counts = st + RXDI_ENTRIES + 2u * i;
        // (a block's threads run the rounds together: the appends vote warp-wide)
        for (unsigned base = blockIdx.x * blockDim.x; base < n; base += stride)
            rxdi_within_expand(boxes_a, ma, table, in, n, base + threadIdx.x, found, reach2, cap2, out,
                               counts + 2, leaves, counts + 1);
        rxdi_grid_sync(st);
        // (every block reads the same count after the barrier; a level without leaf pairs needs
        // no second barrier: nothing is measured, and the next level's appends overwrite no leaf
        // pair still being read. A pair's nodes descend together, so it reaches both leaves
        // only at the deeper of its two trees' depths, and most levels have none)
        unsigned m = v[RXDI_ENTRIES + 2u * i + 1u];
        if (m == 0u) continue;
        for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < 4u * m; k += stride)
            rxdi_within_pair(ma, table, __ldcg(leaves + k / 4u), k % 4u, cap2, found);
        rxdi_grid_sync(st);
    }
}
