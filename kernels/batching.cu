// The dynamic batching preprocess on the GPU (Kenzel et al. 2018, section 3.4), producing exactly
// the batches of the CPU's front-to-back scan (src/geometry/batching.rs):
//
// 1. rxb_prev: for every index position j, how far back the previous occurrence of the same
//    vertex lies if it lies within the longest batch before j (else 0): distances, not
//    positions, so that they fit 32 bits at any index count. Blocks sort (vertex, position)
//    pairs of their positions plus that look-back window in shared memory.
// 2. rxb_batch_end: for every triangle t, the end of the batch the greedy scan would build if a
//    batch started at t (cut back to whole warps of vertices when the index limit ends it, as the
//    CPU does). Index j = 3t + r of a batch starting at t is a new vertex iff its previous
//    occurrence lies before 3t: back[j] == 0 or back[j] > r.
// 3. rxb_orbit: the batches the scan really builds start at 0, end(0), end(end(0)), ...: the orbit
//    of 0 under `end`, marked by pointer doubling in log2(n) rounds.
// 4. rxb_count / rxb_scan / rxb_compact: the marked triangles, in order, are the batch starts.

#define RXB_SORT 2048
#define RXB_SORT_THREADS 1024
#define RXB_BLOCK 256
// per thread of the compaction kernels
#define RXB_PER 4

extern "C" __global__ void __launch_bounds__(RXB_SORT_THREADS)
    rxb_prev(const unsigned* __restrict__ idx, unsigned n_idx, unsigned lookback, unsigned span,
             int* __restrict__ prev) {
    __shared__ unsigned long long keys[RXB_SORT];
    const long long s0 = (long long)blockIdx.x * span;
    const long long lo = s0 - lookback;
    for (unsigned i = threadIdx.x; i < RXB_SORT; i += RXB_SORT_THREADS) {
        const long long pos = lo + i;
        keys[i] = (pos >= 0 && pos < (long long)n_idx && pos < s0 + span)
                      ? ((unsigned long long)idx[pos] << 32 | (unsigned long long)pos)
                      : ~0ull;
    }
    __syncthreads();
    rxp_bitonic_sort(keys, RXB_SORT, threadIdx.x, RXB_SORT_THREADS);
    for (unsigned i = threadIdx.x; i < RXB_SORT; i += RXB_SORT_THREADS) {
        const unsigned long long key = keys[i];
        if (key == ~0ull) continue;
        const long long pos = (long long)(key & 0xffffffffull);
        if (pos < s0 || pos >= s0 + span) continue;
        int back = 0;
        if (i > 0 && (keys[i - 1] >> 32) == (key >> 32))
            back = (int)(pos - (long long)(keys[i - 1] & 0xffffffffull));
        prev[pos] = back;
    }
}

// end[t] for every triangle t < n_tris (end[n_tris] = n_tris).
extern "C" __global__ void __launch_bounds__(RXB_BLOCK)
    rxb_batch_end(const int* __restrict__ prev, unsigned n_tris, unsigned max_tris,
                  unsigned max_vertices, unsigned warp, unsigned* __restrict__ end) {
    // the prev values of the block's triangles and the longest batch after the last of them
    __shared__ int window[3 * RXB_BLOCK + 3 * 341 + 3];
    const unsigned t0 = blockIdx.x * RXB_BLOCK;
    const unsigned long long first = 3ull * t0;
    const unsigned long long count = 3ull * (RXB_BLOCK + max_tris);
    const unsigned long long n_idx = 3ull * n_tris;
    for (unsigned i = threadIdx.x; i < count; i += RXB_BLOCK) {
        window[i] = first + i < n_idx ? prev[first + i] : 0;
    }
    __syncthreads();
    const unsigned t = t0 + threadIdx.x;
    if (t > n_tris) return;
    if (t == n_tris) {
        end[t] = n_tris;
        return;
    }
    const int* w = &window[3 * threadIdx.x];
    unsigned unique = 0, tris = 0, cross = 0;
    bool index_limited = false;
    for (;;) {
        if (t + tris >= n_tris) break;
        const int* tri = &w[3 * tris];
        // (r: each index's place after the batch's start; fresh where it comes first since)
        const int r = (int)(3 * tris);
        const unsigned fresh =
            (tri[0] == 0 || tri[0] > r) + (tri[1] == 0 || tri[1] > r + 1) + (tri[2] == 0 || tri[2] > r + 2);
        if (tris > 0 && (unique + fresh > max_vertices || tris + 1 > max_tris)) {
            index_limited = unique + fresh <= max_vertices;
            break;
        }
        // where the vertex count last crossed a multiple of the warp width
        if ((unique + warp - 1) / warp < (unique + fresh + warp - 1) / warp) cross = tris;
        unique += fresh;
        tris++;
    }
    // a batch the index limit ends is cut back to whole warps of vertices (`warp` is the CPU's
    // batching::WARP)
    if (index_limited && unique % warp != 0 && cross > 0) tris = cross;
    end[t] = t + tris;
}

// One round of pointer doubling: marks jump(t) for every marked t and squares the jump.
extern "C" __global__ void __launch_bounds__(RXB_BLOCK)
    rxb_orbit(const unsigned* __restrict__ jump, unsigned* __restrict__ next_jump,
              unsigned* mark, unsigned n) {
    const unsigned t = blockIdx.x * RXB_BLOCK + threadIdx.x;
    if (t > n) return;
    const unsigned j = jump[t];
    // only orbit members are ever marked, and the orbit is closed under `jump`, so a mark set by
    // another thread during this round is never wrong
    if (mark[t]) mark[j] = 1;
    next_jump[t] = jump[j];
}

// Marked triangles per block of RXB_BLOCK * RXB_PER.
extern "C" __global__ void __launch_bounds__(RXB_BLOCK)
    rxb_count(const unsigned* __restrict__ mark, unsigned n, unsigned* __restrict__ block_counts) {
    const unsigned base = blockIdx.x * RXB_BLOCK * RXB_PER + threadIdx.x * RXB_PER;
    unsigned c = 0;
    for (unsigned k = 0; k < RXB_PER; k++) c += base + k < n && mark[base + k];
    unsigned total;
    rxp_block_scan(c, &total);
    if (threadIdx.x == 0) block_counts[blockIdx.x] = total;
}

// One block: exclusive scan of the block counts in place; the batch count goes to *batches and
// the final start (n) after the last batch.
extern "C" __global__ void __launch_bounds__(RXB_BLOCK)
    rxb_scan(unsigned* block_counts, unsigned blocks, unsigned n, unsigned* __restrict__ starts,
             unsigned* __restrict__ batches) {
    unsigned carry = 0;
    for (unsigned s = 0; s < blocks; s += RXB_BLOCK) {
        const unsigned k = s + threadIdx.x;
        const unsigned c = k < blocks ? block_counts[k] : 0;
        unsigned total;
        const unsigned before = rxp_block_scan(c, &total);
        if (k < blocks) block_counts[k] = carry + before;
        carry += total;
    }
    if (threadIdx.x == 0) {
        *batches = carry;
        starts[carry] = n;
    }
}

// Writes the marked triangles, in order, to starts.
extern "C" __global__ void __launch_bounds__(RXB_BLOCK)
    rxb_compact(const unsigned* __restrict__ mark, unsigned n,
                const unsigned* __restrict__ block_offsets, unsigned* __restrict__ starts) {
    const unsigned base = blockIdx.x * RXB_BLOCK * RXB_PER + threadIdx.x * RXB_PER;
    unsigned c = 0;
    for (unsigned k = 0; k < RXB_PER; k++) c += base + k < n && mark[base + k];
    unsigned total;
    unsigned at = block_offsets[blockIdx.x] + rxp_block_scan(c, &total);
    for (unsigned k = 0; k < RXB_PER; k++)
        if (base + k < n && mark[base + k]) starts[at++] = base + k;
}
