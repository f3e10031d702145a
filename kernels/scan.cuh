// Block-wide exclusive prefix sum, shared by the geometry, raster, batching and sort kernels.
#pragma once

// Exclusive prefix sum of every thread's `v` over the block (blockDim.x a multiple of 32, at most
// 1024); `total` receives the block's sum. Every thread of the block must call it.
__device__ __forceinline__ unsigned rxp_block_scan(unsigned v, unsigned* total) {
    __shared__ unsigned sums[32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    unsigned x = v;
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= (unsigned)d) x += y;
    }
    if (lane == 31) sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned s = lane < warps ? sums[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned y = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= (unsigned)d) s += y;
        }
        if (lane < warps) sums[lane] = s;
    }
    __syncthreads();
    const unsigned before = warp == 0 ? 0 : sums[warp - 1];
    *total = sums[warps - 1];
    __syncthreads();
    return before + x - v;
}
