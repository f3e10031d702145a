// Building blocks every stage's kernels share, written once: a warp scan, a warp's append to a
// list, a block scan, a
// block-wide bitonic sort in shared memory, staging global memory in shared memory, and two small
// whole-buffer kernels (marking used vertices, summing counts). Device-wide scan and radix sort
// are in sort.cu.
#pragma once

// Inclusive prefix sum of `v` over the lanes of a full warp.
__device__ __forceinline__ unsigned rxp_warp_scan(unsigned v, unsigned lane) {
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += y;
    }
    return v;
}

// A warp's append to a list counted by `*count`: the lanes with `take` set get consecutive
// places after the count's old value, in lane order, by one atomic of the lowest such lane;
// returns this lane's place (meaningful where `take`). Every lane of a full warp must call it.
template <typename T>
__device__ __forceinline__ T rxp_warp_append(T* count, bool take) {
    const unsigned m = __ballot_sync(0xffffffffu, take);
    if (!m) return 0;
    const unsigned lane = threadIdx.x & 31, leader = __ffs(m) - 1;
    T at = 0;
    if (lane == leader) at = atomicAdd(count, (T)__popc(m));
    return __shfl_sync(0xffffffffu, at, leader) + (T)__popc(m & ((1u << lane) - 1));
}

// Exclusive prefix sum of every thread's `v` over the block (blockDim.x a multiple of 32, at most
// 1024); `total` receives the block's sum. Every thread of the block must call it.
__device__ __forceinline__ unsigned rxp_block_scan(unsigned v, unsigned* total) {
    __shared__ unsigned sums[32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const unsigned x = rxp_warp_scan(v, lane);
    if (lane == 31) sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        const unsigned s = rxp_warp_scan(lane < warps ? sums[lane] : 0, lane);
        if (lane < warps) sums[lane] = s;
    }
    __syncthreads();
    const unsigned before = warp == 0 ? 0 : sums[warp - 1];
    *total = sums[warps - 1];
    __syncthreads();
    return before + x - v;
}

// Sorts `n` 64-bit keys in shared memory ascending (n a power of two), thread `t` of `threads`
// taking every threads-th element. Every thread of the block must call it; it ends synchronised.
__device__ __forceinline__ void rxp_bitonic_sort(unsigned long long* keys, unsigned n, unsigned t,
                                                 unsigned threads) {
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            for (unsigned i = t; i < n; i += threads) {
                const unsigned o = i ^ j;
                if (o > i) {
                    const bool up = (i & k) == 0;
                    const unsigned long long a = keys[i], b = keys[o];
                    if ((a > b) == up) {
                        keys[i] = b;
                        keys[o] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// Starts copying bytes [src, src + n) of global memory into shared memory at `dst` (16-byte
// aligned, room for n + 32 bytes), by the whole block, in the 16-byte-aligned pieces that cover
// the range: with sm_80's cp.async the copies hold no registers and are all in flight at once
// (plain loads and stores before sm_80). Up to 15 bytes either side of the range are read too:
// the caller's buffer must start 16-byte aligned and have 16 bytes of padding at its end.
// Returns where src[0] lands; the copy is complete after rxp_stage_wait() and a barrier.
__device__ __forceinline__ const unsigned char* rxp_stage(unsigned char* dst, const void* src,
                                                          unsigned n) {
    // (32-bit arithmetic where it can be: every thread of the block sets up every call)
    const unsigned head = (unsigned)reinterpret_cast<unsigned long long>(src) & 15u;
    const unsigned pieces = (head + n + 15) >> 4;
    const unsigned char* lo = reinterpret_cast<const unsigned char*>(src) - head;
#if __CUDA_ARCH__ >= 800
    const unsigned s0 = (unsigned)__cvta_generic_to_shared(dst);
    for (unsigned i = threadIdx.x; i < pieces; i += blockDim.x) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s0 + 16 * i),
                     "l"(lo + 16 * i)
                     : "memory");
    }
#else
    for (unsigned i = threadIdx.x; i < pieces; i += blockDim.x)
        *reinterpret_cast<uint4*>(dst + 16 * i) = *reinterpret_cast<const uint4*>(lo + 16 * i);
#endif
    return dst + head;
}

// The shared memory rxp_stage takes for n bytes, so that the next staging starts 16-byte aligned
// (the host's twin: stage_room in src/patch/query/cuda.rs).
__device__ __forceinline__ unsigned rxp_stage_room(unsigned n) { return (n + 32 + 15) & ~15u; }

// Waits for this thread's rxp_stage copies (a barrier then makes every thread's visible).
__device__ __forceinline__ void rxp_stage_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// used[idx[k]] = 1 for every one of the m indices
extern "C" __global__ void rxp_mark_used(const unsigned* __restrict__ idx, unsigned m,
                                         unsigned* __restrict__ used) {
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) used[idx[k]] = 1u;
}

// The last i of 0..n (n >= 1) whose base(i) is at most k, the bases ascending and base(0) at
// most k: the run, draw or chunk a place k falls in when each starts where `base` says (one
// without places shares its successor's base and is never found).
template <typename Base>
__device__ __forceinline__ unsigned rxp_last_at_most(unsigned n, unsigned k, Base base) {
    unsigned lo = 0, hi = n;
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) >> 1;
        if (base(mid) <= k) lo = mid;
        else hi = mid;
    }
    return lo;
}

// The run holding entry k of runs laid end to end (three numbers each: first source entry,
// length, how many entries earlier runs hold): the last run whose place is at most k.
__device__ __forceinline__ unsigned rxp_run_of(const unsigned* __restrict__ runs, unsigned nruns,
                                               unsigned k) {
    return rxp_last_at_most(nruns, k, [&](unsigned r) { return __ldg(&runs[3 * r + 2]); });
}

// The source entry of entry k of such runs.
__device__ __forceinline__ unsigned rxp_run_source(const unsigned* __restrict__ runs,
                                                   unsigned nruns, unsigned k) {
    const unsigned r = rxp_run_of(runs, nruns, k);
    return __ldg(&runs[3 * r]) + (k - __ldg(&runs[3 * r + 2]));
}

// The runs holding entries k0 ..= k1 (a block's consecutive entries): [*lo, *hi], found once per
// block, so that each thread searches only those (usually one or two) with rxp_run_source_in
// instead of all of them. Every thread of the block must call it.
__device__ __forceinline__ void rxp_block_runs(const unsigned* __restrict__ runs, unsigned nruns,
                                               unsigned k0, unsigned k1, unsigned* lo,
                                               unsigned* hi) {
    __shared__ unsigned range[2];
    if (threadIdx.x == 0) range[0] = rxp_run_of(runs, nruns, k0);
    if (threadIdx.x == blockDim.x - 1) range[1] = rxp_run_of(runs, nruns, k1);
    __syncthreads();
    *lo = range[0];
    *hi = range[1];
    __syncthreads();
}

// rxp_run_source for an entry of runs lo ..= hi.
__device__ __forceinline__ unsigned rxp_run_source_in(const unsigned* __restrict__ runs,
                                                      unsigned lo, unsigned hi, unsigned k) {
    hi += 1;
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) >> 1;
        if (__ldg(&runs[3 * mid + 2]) <= k) lo = mid;
        else hi = mid;
    }
    return __ldg(&runs[3 * lo]) + (k - __ldg(&runs[3 * lo + 2]));
}

// used[lists[i]] = 1 for every entry i of the runs (`total` entries in all): the vertices of the
// patch lists a view shades.
extern "C" __global__ void rxp_mark_listed(const unsigned* __restrict__ lists,
                                           const unsigned* __restrict__ runs, unsigned nruns,
                                           unsigned total, unsigned* __restrict__ used) {
    const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < total) used[lists[rxp_run_source(runs, nruns, k)]] = 1u;
}

// *total += the sum of the n counts: a grid of any size strides over them, each block adds its
// sum with one atomic (one per warp would queue a hundred thousand atomics on one address).
extern "C" __global__ void rxp_sum_u32(const unsigned* __restrict__ counts, unsigned n,
                                       unsigned long long* total) {
    __shared__ unsigned long long sums[32];
    unsigned long long v = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        v += counts[i];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x + 31) / 32 ? sums[lane] : 0;
        for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
        if (lane == 0 && v) atomicAdd(total, v);
    }
}

// Gathers runs of u32: run r copies src[runs[3r] ..+ runs[3r + 1]) to dst[runs[3r + 2] ..), one
// block per run (a frame stage's kept triangle ranges, in one launch however many there are).
extern "C" __global__ void rxp_gather_runs(const unsigned* __restrict__ src,
                                           const unsigned* __restrict__ runs, unsigned nruns,
                                           unsigned* __restrict__ dst) {
    if (blockIdx.x >= nruns) return;
    const unsigned from = runs[3 * blockIdx.x], len = runs[3 * blockIdx.x + 1],
                   to = runs[3 * blockIdx.x + 2];
    for (unsigned i = threadIdx.x; i < len; i += blockDim.x) dst[to + i] = src[from + i];
}
