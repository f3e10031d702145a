// Sort-last compositing on the device (src/sortlast/cuda.rs): the parts of a frame, each a colour
// (RGBA8 words) and depth buffer, reduced per pixel to the nearest part's, a tie going to the
// earlier part, as the CPU's src/sortlast/composite.rs does. A pixel's key is its depth's
// order-preserving bits above the part's index, so the least key over the parts names the
// winner; over the GPUs of a host the same least key is NCCL's all-reduce (minimum) over
// unsigned 64-bit integers.

#define RXC_BLOCK 256

// Depth as an unsigned integer with the same order as the float (kernels/setup.cuh's).
__device__ __forceinline__ unsigned rxc_ordered(float z) {
    const unsigned b = __float_as_uint(z);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float rxc_unordered(unsigned b) {
    return __uint_as_float((b & 0x80000000u) ? (b & 0x7fffffffu) : ~b);
}

// The keys of part `part` (its depths): written (`first`) or taken where less than the keys
// there.
extern "C" __global__ void rxc_keys(const float* __restrict__ depth, unsigned part, int first,
                                    unsigned long long* __restrict__ keys, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * RXC_BLOCK + threadIdx.x;
    if (i >= n) return;
    const unsigned long long k = (unsigned long long)rxc_ordered(depth[i]) << 32 | part;
    if (first || k < keys[i]) keys[i] = k;
}

// The composite's colour and depth at the pixels part `part` won (by the least keys), from its
// colour: with `others`, the other pixels' colour is zero (summed over the parts, each pixel
// then holds its winner's) and every pixel's depth is written from its key.
extern "C" __global__ void rxc_pick(const unsigned long long* __restrict__ keys, unsigned part,
                                    int others, const unsigned* __restrict__ color,
                                    unsigned* __restrict__ out, float* __restrict__ depth,
                                    unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * RXC_BLOCK + threadIdx.x;
    if (i >= n) return;
    const unsigned long long k = keys[i];
    const bool won = (unsigned)k == part;
    if (won || others) {
        out[i] = won ? color[i] : 0u;
        depth[i] = rxc_unordered((unsigned)(k >> 32));
    }
}
