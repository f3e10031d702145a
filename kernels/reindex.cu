// Re-indexing (Wald): the small kernels around sort.cu's scan and radix sort, and a hash-table
// variant with no sort. Vertices are `floats` consecutive floats each (position, then normal and
// uv where the mesh has them); every float is one 32-bit key word, mapped to an order-preserving
// integer with -0.0 taken as +0.0, or for positions with a weld cell (cell > 0) the rounded grid
// coordinate. The CPU twin of every word is src/reindex/mod.rs (`ordered_bits`, `weld_bits`).

#define RXR_BLOCK 256

__device__ __forceinline__ unsigned rxr_ordered(float f) {
    const unsigned b = f == 0.0f ? 0u : __float_as_uint(f);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ unsigned rxr_word(const float* __restrict__ vert, unsigned floats,
                                             float cell, size_t v, unsigned w) {
    const float f = vert[v * floats + w];
    if (cell > 0.0f && w < 3) return ((unsigned)(int)roundf(f / cell)) ^ 0x80000000u;
    return rxr_ordered(f);
}

// ---- the paper's method -------------------------------------------------------------------------

// step 1 and the sort's input: the keys of every vertex, an unused one replaced by vertex `first`
// (the first triangle's first vertex), and the original ids as the payload
extern "C" __global__ void rxr_keys(const float* __restrict__ vert, unsigned floats, float cell,
                                    unsigned n, const unsigned* __restrict__ used, unsigned first,
                                    unsigned* __restrict__ keys, unsigned* __restrict__ ids) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const size_t src = used[i] ? i : first;
    for (unsigned w = 0; w < floats; ++w) keys[w * (size_t)n + i] = rxr_word(vert, floats, cell, src, w);
    ids[i] = (unsigned)i;
}

// nodup[i]: the sorted key i differs from key i - 1 (or i is 0)
extern "C" __global__ void rxr_heads(const unsigned* __restrict__ keys, unsigned n, unsigned words,
                                     unsigned* __restrict__ nodup) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned head = i == 0;
    for (unsigned w = 0; w < words && !head; ++w)
        head = keys[w * (size_t)n + i] != keys[w * (size_t)n + i - 1];
    nodup[i] = head;
}

// step 3: newVtx[newIdx[i]] = vtx[orgID[i]] for first occurrences (an unused vertex's value is
// vertex `first`'s, as step 1 overwrote it); step 4's inverse permutation perm[orgID[i]] = i
extern "C" __global__ void rxr_scatter(const float* __restrict__ vert, unsigned floats, unsigned n,
                                       const unsigned* __restrict__ ids,
                                       const unsigned* __restrict__ nodup,
                                       const unsigned* __restrict__ new_idx,
                                       const unsigned* __restrict__ used, unsigned first,
                                       float* __restrict__ out, unsigned* __restrict__ perm) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned id = ids[i];
    perm[id] = (unsigned)i;
    if (nodup[i]) {
        const size_t src = used[id] ? id : first;
        const size_t dst = new_idx[i];
        for (unsigned w = 0; w < floats; ++w) out[dst * floats + w] = vert[src * floats + w];
    }
}

// step 4: every index becomes newIdx[map[i]]; map is the inverse permutation perm (the paper's
// method) or each vertex's representative (the hash variant)
extern "C" __global__ void rxr_remap(const unsigned* __restrict__ idx, unsigned m,
                                     const unsigned* __restrict__ map,
                                     const unsigned* __restrict__ new_idx,
                                     unsigned* __restrict__ out) {
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) out[k] = new_idx[map[idx[k]]];
}

// ---- the hash variant ---------------------------------------------------------------------------
// A table of `mask + 1` slots holds vertex id + 1 (0: empty). Every used vertex probes linearly
// from its key's hash: an empty slot is claimed with atomicCAS; a slot holding an equal vertex
// is its class, and atomicMin keeps the lowest id there (all ids a slot ever holds have equal
// keys, so later comparisons stay valid). The lowest id of a class is its representative; the
// representatives, in id order, are the new vertices.

__device__ __forceinline__ unsigned rxr_hash(const float* __restrict__ vert, unsigned floats,
                                             float cell, size_t v) {
    unsigned h = 0x9e3779b9u;
    for (unsigned w = 0; w < floats; ++w) {
        unsigned k = rxr_word(vert, floats, cell, v, w) * 0xcc9e2d51u;
        k = (k << 15) | (k >> 17);
        h ^= k * 0x1b873593u;
        h = ((h << 13) | (h >> 19)) * 5u + 0xe6546b64u;
    }
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

__device__ __forceinline__ bool rxr_equal(const float* __restrict__ vert, unsigned floats,
                                          float cell, size_t a, size_t b) {
    for (unsigned w = 0; w < floats; ++w)
        if (rxr_word(vert, floats, cell, a, w) != rxr_word(vert, floats, cell, b, w)) return false;
    return true;
}

// slot[i]: the table slot of vertex i's class (unused vertices: untouched)
extern "C" __global__ void rxr_hash_insert(const float* __restrict__ vert, unsigned floats,
                                           float cell, unsigned n,
                                           const unsigned* __restrict__ used,
                                           unsigned* __restrict__ table, unsigned mask,
                                           unsigned* __restrict__ slot) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !used[i]) return;
    unsigned h = rxr_hash(vert, floats, cell, i) & mask;
    for (;;) {
        unsigned cur = table[h];
        if (cur == 0u) {
            cur = atomicCAS(&table[h], 0u, (unsigned)i + 1u);
            if (cur == 0u) break;
        }
        if (rxr_equal(vert, floats, cell, cur - 1u, i)) {
            atomicMin(&table[h], (unsigned)i + 1u);
            break;
        }
        h = (h + 1u) & mask;
    }
    slot[i] = h;
}

// rep[i] = the lowest id of vertex i's class (in place over slot); is_rep[i] = i is that id
extern "C" __global__ void rxr_hash_rep(unsigned n, const unsigned* __restrict__ used,
                                        const unsigned* __restrict__ table,
                                        unsigned* __restrict__ rep, unsigned* __restrict__ is_rep) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned r = 0xffffffffu;
    if (used[i]) {
        r = table[rep[i]] - 1u;
        rep[i] = r;
    }
    is_rep[i] = r == (unsigned)i;
}

// the representatives, in id order, at their exclusive-scan positions
extern "C" __global__ void rxr_hash_scatter(const float* __restrict__ vert, unsigned floats,
                                            unsigned n, const unsigned* __restrict__ is_rep,
                                            const unsigned* __restrict__ new_idx,
                                            float* __restrict__ out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !is_rep[i]) return;
    const size_t dst = new_idx[i];
    for (unsigned w = 0; w < floats; ++w) out[dst * floats + w] = vert[i * floats + w];
}

// ---- the result left on the device ------------------------------------------------------------

// The re-indexed vertices (`floats` each: position, then normal and uv where the mesh has them)
// split into a mesh's arrays (nrm and uv null where absent), and the positions' bounds as
// order-preserving words: box[0..3] the minimum (atomicMin, starting at ~0u), box[3..6] the
// maximum (atomicMax, starting at 0).
extern "C" __global__ void rxr_split(const float* __restrict__ vert, unsigned floats, unsigned n,
                                     float* __restrict__ pos, float* __restrict__ nrm,
                                     float* __restrict__ uv, unsigned* __restrict__ box) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lo[3] = {~0u, ~0u, ~0u}, hi[3] = {0u, 0u, 0u};
    if (i < n) {
        const float* v = vert + i * floats;
        for (unsigned w = 0; w < 3; ++w) {
            pos[i * 3 + w] = v[w];
            lo[w] = hi[w] = rxr_ordered(v[w]);
        }
        unsigned w = 3;
        if (nrm) {
            for (unsigned k = 0; k < 3; ++k) nrm[i * 3 + k] = v[w + k];
            w += 3;
        }
        if (uv)
            for (unsigned k = 0; k < 2; ++k) uv[i * 2 + k] = v[w + k];
    }
    // (every lane takes part: the ones past n carry the identities)
    for (int off = 16; off > 0; off >>= 1)
        for (unsigned k = 0; k < 3; ++k) {
            lo[k] = min(lo[k], __shfl_xor_sync(0xffffffffu, lo[k], off));
            hi[k] = max(hi[k], __shfl_xor_sync(0xffffffffu, hi[k], off));
        }
    if ((threadIdx.x & 31) == 0 && hi[0] != 0u)
        for (unsigned k = 0; k < 3; ++k) {
            atomicMin(&box[k], lo[k]);
            atomicMax(&box[3 + k], hi[k]);
        }
}
