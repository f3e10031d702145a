// Block-wide exclusive prefix sum, shared by the raster and batching kernels.
#pragma once

// Exclusive prefix sum of every thread's `v` over a block of BLOCK threads (a multiple of 32, at
// most 1024); `total` receives the block's sum. Every thread of the block must call it.
template <unsigned BLOCK>
__device__ __forceinline__ unsigned rxp_block_scan(unsigned v, unsigned* total) {
    __shared__ unsigned sums[BLOCK / 32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned x = v;
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= (unsigned)d) x += y;
    }
    if (lane == 31) sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned s = lane < BLOCK / 32 ? sums[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned y = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= (unsigned)d) s += y;
        }
        if (lane < BLOCK / 32) sums[lane] = s;
    }
    __syncthreads();
    const unsigned before = warp == 0 ? 0 : sums[warp - 1];
    *total = sums[BLOCK / 32 - 1];
    __syncthreads();
    return before + x - v;
}
