// Patching on the GPU (src/patch/cuda.rs drives it; src/patch/cpu.rs is the reference and the
// result is the same patching). Needs blocks.cuh and sort.cu before it (the vertex-face lists'
// prefix sum). One thread per face or vertex throughout; the face graph is stored with a fixed
// stride of RXPT_DEG neighbours per face (two per distinct edge: the faces before and after it
// on that edge).
//
//   rxpt_vf_count, (scan), rxpt_vf_fill  the faces around every vertex
//   rxpt_graph                           each face's neighbours, the non-manifold edges
//   rxpt_hook, rxpt_compress             connected components, labelled by their smallest face
//   rxpt_flood_init, rxpt_flood_seed,
//   rxpt_flood_level                     breadth-first assignment to the nearest seed
//   rxpt_sizes                           faces per patch
//   rxpt_last_init, rxpt_last_level      per patch, the face reached last by a search from
//                                        sources within the patch (centres, farthest faces)

#define RXPT_DEG 6
#define RXPT_NONE 0xffffffffu

// counters[0]: non-manifold edges, [1]: isolated faces, [2]: faces reached by searches,
// [3]: whether the components changed
extern "C" __global__ void rxpt_vf_count(const unsigned* __restrict__ idx, unsigned faces,
                                         unsigned* __restrict__ count) {
    const size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < 3ull * faces) atomicAdd(&count[idx[c]], 1u);
}

// vf[offsets[v] ..] = the faces with a corner at v (once per such corner, in no set order)
extern "C" __global__ void rxpt_vf_fill(const unsigned* __restrict__ idx, unsigned faces,
                                        const unsigned* __restrict__ offsets,
                                        unsigned* __restrict__ cursor, unsigned* __restrict__ vf) {
    const size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= 3ull * faces) return;
    const unsigned v = idx[c];
    vf[offsets[v] + atomicAdd(&cursor[v], 1u)] = (unsigned)(c / 3);
}

// How many edges of face g join a and b (a != b): what g adds to the sorted (edge, face) list of
// the CPU's graph for that edge.
__device__ __forceinline__ unsigned rxpt_edge_count(const unsigned* idx, unsigned g, unsigned a,
                                                    unsigned b) {
    unsigned m = 0;
    for (int k = 0; k < 3; k++) {
        const unsigned x = idx[3 * (size_t)g + k], y = idx[3 * (size_t)g + (k + 1) % 3];
        m += (x == a && y == b) || (x == b && y == a);
    }
    return m;
}

// Face f's neighbours: for each distinct edge of f (both ends different), the largest face
// before f and the smallest after f among the faces sharing that edge (the CPU links a run of
// faces on one edge, sorted, as a chain). The first face of an edge counts it as non-manifold
// when more than two (face, edge) entries share it.
extern "C" __global__ void rxpt_graph(const unsigned* __restrict__ idx, unsigned faces,
                                      const unsigned* __restrict__ offsets,
                                      const unsigned* __restrict__ vf, unsigned* __restrict__ nbr,
                                      unsigned* __restrict__ deg,
                                      unsigned long long* __restrict__ counters) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces) return;
    unsigned v[3];
    for (int k = 0; k < 3; k++) v[k] = idx[3 * (size_t)f + k];
    unsigned d = 0;
    for (int k = 0; k < 3; k++) {
        const unsigned a = v[k], b = v[(k + 1) % 3];
        if (a == b) continue;
        // an edge of f seen at an earlier corner is done
        bool seen = false;
        for (int j = 0; j < k; j++) {
            const unsigned x = v[j], y = v[(j + 1) % 3];
            seen = seen || (x == a && y == b) || (x == b && y == a);
        }
        if (seen) continue;
        // the shorter of the two vertices' face lists
        const unsigned la = offsets[a + 1] - offsets[a], lb = offsets[b + 1] - offsets[b];
        const unsigned w = la <= lb ? a : b;
        unsigned before = RXPT_NONE, after = RXPT_NONE, entries = 0;
        bool first = true;
        for (unsigned i = offsets[w]; i < offsets[w + 1]; i++) {
            const unsigned g = vf[i];
            if (g == f) continue;
            const unsigned m = rxpt_edge_count(idx, g, a, b);
            if (m == 0) continue;
            // (g is listed once per corner at w: count its entries once, at its first listing)
            bool again = false;
            for (unsigned j = offsets[w]; j < i; j++) again = again || vf[j] == g;
            if (!again) entries += m;
            if (g < f) {
                first = false;
                before = before == RXPT_NONE ? g : max(before, g);
            } else {
                after = min(after, g);
            }
        }
        if (before != RXPT_NONE) nbr[(size_t)f * RXPT_DEG + d++] = before;
        if (after != RXPT_NONE) nbr[(size_t)f * RXPT_DEG + d++] = after;
        if (first && entries + rxpt_edge_count(idx, f, a, b) > 2) atomicAdd(&counters[0], 1ull);
    }
    deg[f] = d;
    if (d == 0) atomicAdd(&counters[1], 1ull);
}

// Components: every face's label moves to the smallest label across its edges (an atomic
// minimum on the label's own label, so trees only ever point to smaller faces).
extern "C" __global__ void rxpt_hook(const unsigned* __restrict__ nbr,
                                     const unsigned* __restrict__ deg, unsigned faces,
                                     unsigned* parent, unsigned long long* counters) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces) return;
    const unsigned a = parent[f];
    bool changed = false;
    for (unsigned k = 0; k < deg[f]; k++) {
        const unsigned b = parent[nbr[(size_t)f * RXPT_DEG + k]];
        if (a < b) {
            atomicMin(&parent[b], a);
            changed = true;
        }
    }
    if (changed) counters[3] = 1;
}

// Pointer jumping: every face's label becomes its root.
extern "C" __global__ void rxpt_compress(unsigned faces, unsigned* parent) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces) return;
    unsigned p = parent[f];
    while (parent[p] != p) p = parent[p];
    parent[f] = p;
}

extern "C" __global__ void rxpt_flood_init(unsigned faces, unsigned* __restrict__ patch,
                                           unsigned* __restrict__ dist) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces) return;
    patch[f] = RXPT_NONE;
    dist[f] = RXPT_NONE;
}

// Seed p's face starts patch p (the seeds are distinct faces).
extern "C" __global__ void rxpt_flood_seed(const unsigned* __restrict__ seeds, unsigned count,
                                           unsigned* __restrict__ patch,
                                           unsigned* __restrict__ dist,
                                           unsigned long long* __restrict__ counters) {
    const unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= count) return;
    patch[seeds[p]] = p;
    dist[seeds[p]] = 0;
    atomicAdd(&counters[2], 1ull);
}

// Level `level` of the breadth-first assignment: an unassigned face next to faces assigned at
// the level before takes the smallest of their patches (the CPU's atomic minimum over its
// frontier, pulled instead of pushed). Faces written now hold `level`, never `level - 1`, so
// reading a neighbour while it is written is harmless.
extern "C" __global__ void rxpt_flood_level(const unsigned* __restrict__ nbr,
                                            const unsigned* __restrict__ deg, unsigned faces,
                                            unsigned level, unsigned* patch, unsigned* dist,
                                            unsigned long long* __restrict__ counters) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned got = 0;
    if (f < faces && dist[f] == RXPT_NONE) {
        unsigned m = RXPT_NONE;
        for (unsigned k = 0; k < deg[f]; k++) {
            const unsigned g = nbr[(size_t)f * RXPT_DEG + k];
            if (dist[g] == level - 1) m = min(m, patch[g]);
        }
        if (m != RXPT_NONE) {
            patch[f] = m;
            dist[f] = level;
            got = 1;
        }
    }
    unsigned total;
    rxp_block_scan(got, &total);
    if (threadIdx.x == 0 && total) atomicAdd(&counters[2], (unsigned long long)total);
}

extern "C" __global__ void rxpt_sizes(const unsigned* __restrict__ patch, unsigned faces,
                                      unsigned* __restrict__ sizes) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces) atomicAdd(&sizes[patch[f]], 1u);
}

__device__ __forceinline__ unsigned long long rxpt_key(unsigned d, unsigned f) {
    return ((unsigned long long)(d + 1) << 32) | (unsigned long long)(~f);
}

// The sources of a search within patches (distance 0), and their keys. mode 0: the faces next to
// another patch (re-centring); mode 1: the seed of every patch flagged in `pick` (the farthest
// face of an oversized patch).
extern "C" __global__ void rxpt_last_init(const unsigned* __restrict__ nbr,
                                          const unsigned* __restrict__ deg, unsigned faces,
                                          const unsigned* __restrict__ patch, unsigned mode,
                                          const unsigned* __restrict__ seeds,
                                          const unsigned* __restrict__ pick,
                                          unsigned* __restrict__ dist,
                                          unsigned long long* __restrict__ best,
                                          unsigned long long* __restrict__ counters) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned got = 0;
    if (f < faces) {
        const unsigned p = patch[f];
        bool source = false;
        if (mode == 0) {
            for (unsigned k = 0; k < deg[f]; k++)
                source = source || patch[nbr[(size_t)f * RXPT_DEG + k]] != p;
        } else {
            source = pick[p] != 0 && seeds[p] == f;
        }
        dist[f] = source ? 0 : RXPT_NONE;
        if (source) {
            atomicMax(&best[p], rxpt_key(0, f));
            got = 1;
        }
    }
    unsigned total;
    rxp_block_scan(got, &total);
    if (threadIdx.x == 0 && total) atomicAdd(&counters[2], (unsigned long long)total);
}

// Level `level` of the search: an unreached face next to a face of its own patch reached at the
// level before is reached now, and offers (level, face) as its patch's last.
extern "C" __global__ void rxpt_last_level(const unsigned* __restrict__ nbr,
                                           const unsigned* __restrict__ deg, unsigned faces,
                                           const unsigned* __restrict__ patch, unsigned level,
                                           unsigned* dist, unsigned long long* __restrict__ best,
                                           unsigned long long* __restrict__ counters) {
    const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned got = 0;
    if (f < faces && dist[f] == RXPT_NONE) {
        const unsigned p = patch[f];
        bool reached = false;
        for (unsigned k = 0; k < deg[f]; k++) {
            const unsigned g = nbr[(size_t)f * RXPT_DEG + k];
            reached = reached || (dist[g] == level - 1 && patch[g] == p);
        }
        if (reached) {
            dist[f] = level;
            atomicMax(&best[p], rxpt_key(level, f));
            got = 1;
        }
    }
    unsigned total;
    rxp_block_scan(got, &total);
    if (threadIdx.x == 0 && total) atomicAdd(&counters[2], (unsigned long long)total);
}
