// Device-wide building blocks: a reduce-then-scan prefix sum and a stable LSD radix sort of
// multi-word keys with a 32-bit payload. Written once here and reused by the stages that need
// them (the re-indexing stage first). Needs blocks.cuh before it.
//
// Scan of n unsigned values (three launches):
//   rxs_reduce     one partial sum per tile of RXS_TILE values
//   rxs_scan_sums  one block: exclusive scan of the tile sums in place; total[0] = the sum
//   rxs_scan_tiles every tile scanned with its offset: exclusive, or inclusive minus one (Wald)
//
// Radix sort, one pass per 8-bit digit, least significant first; keys are `words` 32-bit words
// per element, stored word-major (word w of element i at keys[w * n + i]), word 0 the most
// significant. Per pass:
//   rxs_upsweep    per-tile digit counts, stored digit-major (count[d * tiles + tile])
//   (scan)         the counts' exclusive prefix: where each tile's run of each digit goes
//   rxs_downsweep  stable ranks within the tile (warp match + per-warp counters), then a scatter
//                  of every key word and the payload
// rxs_or_diff marks which bits of a word vary at all, so that passes whose digit is the same for
// every element can be skipped.

#define RXS_THREADS 256
#define RXS_ITEMS 16
#define RXS_TILE (RXS_THREADS * RXS_ITEMS)
#define RXS_WARPS (RXS_THREADS / 32)

extern "C" __global__ void __launch_bounds__(RXS_THREADS)
    rxs_reduce(const unsigned* __restrict__ in, unsigned n, unsigned* __restrict__ sums) {
    const size_t base = (size_t)blockIdx.x * RXS_TILE;
    unsigned s = 0;
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        const size_t i = base + k * RXS_THREADS + threadIdx.x;
        if (i < n) s += in[i];
    }
    unsigned total;
    rxp_block_scan(s, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(1024)
    rxs_scan_sums(unsigned* sums, unsigned count, unsigned* __restrict__ total_out) {
    unsigned carry = 0;
    for (unsigned s = 0; s < count; s += 1024) {
        const unsigned k = s + threadIdx.x;
        const unsigned v = k < count ? sums[k] : 0;
        unsigned total;
        const unsigned before = rxp_block_scan(v, &total);
        if (k < count) sums[k] = carry + before;
        carry += total;
    }
    if (threadIdx.x == 0) total_out[0] = carry;
}

// mode 0: exclusive prefix; mode 1: inclusive prefix minus one
extern "C" __global__ void __launch_bounds__(RXS_THREADS)
    rxs_scan_tiles(const unsigned* __restrict__ in, unsigned n, const unsigned* __restrict__ offsets,
                   unsigned mode, unsigned* __restrict__ out) {
    __shared__ unsigned tile[RXS_TILE];
    const size_t base = (size_t)blockIdx.x * RXS_TILE;
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        const unsigned j = k * RXS_THREADS + threadIdx.x;
        tile[j] = base + j < n ? in[base + j] : 0;
    }
    __syncthreads();
    // each thread scans its own RXS_ITEMS consecutive values
    unsigned v[RXS_ITEMS], s = 0;
#pragma unroll
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        v[k] = tile[threadIdx.x * RXS_ITEMS + k];
        s += v[k];
    }
    unsigned total;
    unsigned run = offsets[blockIdx.x] + rxp_block_scan(s, &total);
#pragma unroll
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        tile[threadIdx.x * RXS_ITEMS + k] = mode == 0 ? run : run + v[k] - 1;
        run += v[k];
    }
    __syncthreads();
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        const unsigned j = k * RXS_THREADS + threadIdx.x;
        if (base + j < n) out[base + j] = tile[j];
    }
}

// diff[0] |= word ^ word of element 0, over all elements: the bits that vary
extern "C" __global__ void __launch_bounds__(RXS_THREADS)
    rxs_or_diff(const unsigned* __restrict__ word, unsigned n, unsigned* __restrict__ diff) {
    const unsigned first = word[0];
    unsigned d = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d |= word[i] ^ first;
    for (int o = 16; o > 0; o >>= 1) d |= __shfl_xor_sync(0xffffffffu, d, o);
    if ((threadIdx.x & 31) == 0 && d) atomicOr(diff, d);
}

extern "C" __global__ void __launch_bounds__(RXS_THREADS)
    rxs_upsweep(const unsigned* __restrict__ word, unsigned n, unsigned shift,
                unsigned* __restrict__ counts, unsigned tiles) {
    __shared__ unsigned c[256];
    c[threadIdx.x] = 0;
    __syncthreads();
    const size_t base = (size_t)blockIdx.x * RXS_TILE;
    for (unsigned k = 0; k < RXS_ITEMS; ++k) {
        const size_t i = base + k * RXS_THREADS + threadIdx.x;
        if (i < n) atomicAdd(&c[(word[i] >> shift) & 255u], 1u);
    }
    __syncthreads();
    counts[(size_t)threadIdx.x * tiles + blockIdx.x] = c[threadIdx.x];
}

// Element i of the tile is handled by warp i / (32 * RXS_ITEMS) in round (i / 32) % RXS_ITEMS,
// lane i % 32: the warps' ranges and the rounds are in element order, so ranks are stable. Each
// array is staged in shared memory in the tile's digit order and written out from there, so that
// consecutive threads write consecutive addresses of a digit's run (coalesced).
extern "C" __global__ void __launch_bounds__(RXS_THREADS)
    rxs_downsweep(const unsigned* __restrict__ keys, const unsigned* __restrict__ vals,
                  unsigned n, unsigned words, unsigned digit_word, unsigned shift,
                  const unsigned* __restrict__ offsets, unsigned tiles,
                  unsigned* __restrict__ keys_out, unsigned* __restrict__ vals_out) {
    __shared__ unsigned cnt[RXS_WARPS][256];
    __shared__ unsigned gbase[256];
    __shared__ unsigned stage[RXS_TILE];
    __shared__ unsigned char sdigit[RXS_TILE];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (unsigned w = 0; w < RXS_WARPS; ++w) cnt[w][threadIdx.x] = 0;
    __syncthreads();
    const size_t tile0 = (size_t)blockIdx.x * RXS_TILE;
    const size_t rest = (size_t)n - tile0;
    const unsigned in_tile = rest < RXS_TILE ? (unsigned)rest : RXS_TILE;
    const size_t base = tile0 + (size_t)warp * 32 * RXS_ITEMS;
    const unsigned* dw = keys + (size_t)digit_word * n;
    const unsigned lt = (1u << lane) - 1u;
    unsigned pos[RXS_ITEMS], digit[RXS_ITEMS];
#pragma unroll
    for (unsigned r = 0; r < RXS_ITEMS; ++r) {
        const size_t i = base + r * 32 + lane;
        const unsigned d = i < n ? (dw[i] >> shift) & 255u : 256u;
        const unsigned peers = __match_any_sync(0xffffffffu, d);
        digit[r] = d;
        if (d < 256u) pos[r] = cnt[warp][d] + __popc(peers & lt);
        __syncwarp();
        if (d < 256u && (peers & lt) == 0) cnt[warp][d] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    {
        // per digit: exclusive prefix over the warps, then over the digits of the tile
        const unsigned d = threadIdx.x;
        unsigned s = 0;
        for (unsigned w = 0; w < RXS_WARPS; ++w) {
            const unsigned t = cnt[w][d];
            cnt[w][d] = s;
            s += t;
        }
        unsigned total;
        const unsigned start = rxp_block_scan(s, &total);
        for (unsigned w = 0; w < RXS_WARPS; ++w) cnt[w][d] += start;
        // global position of tile position j (of digit d) is gbase[d] + j
        gbase[d] = offsets[(size_t)d * tiles + blockIdx.x] - start;
    }
    __syncthreads();
#pragma unroll
    for (unsigned r = 0; r < RXS_ITEMS; ++r) {
        if (digit[r] < 256u) {
            pos[r] += cnt[warp][digit[r]];
            sdigit[pos[r]] = (unsigned char)digit[r];
        }
    }
    for (unsigned a = 0; a <= words; ++a) {
        const unsigned* src = a < words ? keys + (size_t)a * n : vals;
        unsigned* dst = a < words ? keys_out + (size_t)a * n : vals_out;
        __syncthreads();
#pragma unroll
        for (unsigned r = 0; r < RXS_ITEMS; ++r) {
            const size_t i = base + r * 32 + lane;
            if (digit[r] < 256u) stage[pos[r]] = src[i];
        }
        __syncthreads();
        for (unsigned j = threadIdx.x; j < in_tile; j += RXS_THREADS)
            dst[gbase[sdigit[j]] + j] = stage[j];
    }
}
