// The test program behind the programmatic-dependent launch measurements (the earlier report
// h100-sponza-frame.md, benches/results/README.md): ten dependent kernels of 256-thread blocks
// in a row, launched plain, as programmatic dependents (with and without an early trigger),
// with event records and with joins of another stream between them; each chain enqueued
// behind a 1-block spin kernel (as the stream gate holds a frame), timed by CUDA events;
// medians of 50 chains after 10. Build on the device:
// nvcc -O2 -arch=sm_90 -o pdl dependent_launch.cu && ./pdl
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
template <int TRIG>
__global__ void k(float* a, int n, int iters) {
    if (TRIG) asm volatile("griddepcontrol.launch_dependents;");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = a[i]; for (int j = 0; j < iters; ++j) v = v * 1.0001f + 0.5f; a[i] = v; }
}
__global__ void spin(long long c) { long long t = clock64(); while (clock64() - t < c) {} }
int main() {
    int n = 1 << 20; float* a; cudaMalloc(&a, n * 4 * 16); cudaMemset(a, 0, n*4*16);
    cudaStream_t s, s2; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t e0, e1, mid; cudaEventCreate(&e0); cudaEventCreate(&e1); cudaEventCreateWithFlags(&mid, cudaEventDisableTiming);
    int sizes[] = {65536};
    for (int sz : sizes) for (int iters : {10, 200}) for (int mode = 0; mode < 6; ++mode) {
        std::vector<float> t;
        for (int rep = 0; rep < 60; ++rep) {
            spin<<<1, 32, 0, s>>>(400000LL);
            cudaEventRecord(e0, s);
            for (int q = 0; q < 10; ++q) {
                cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3((sz + 255) / 256); cfg.blockDim = dim3(256); cfg.stream = s;
                cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
                cfg.attrs = at; cfg.numAttrs = mode ? 1 : 0;
                if (mode == 3 && q % 3 == 0) cudaEventRecord(mid, s);
                if (mode >= 4 && q % 3 == 0) { spin<<<1, 32, 0, s2>>>(mode == 4 ? 10LL : 0LL); cudaEventRecord(mid, s2); cudaStreamWaitEvent(s, mid, 0); }
                if (mode >= 2 && mode < 4) cudaLaunchKernelEx(&cfg, k<1>, a + (q % 16) * 0, sz, iters);
                else cudaLaunchKernelEx(&cfg, k<0>, a, sz, iters);
            }
            cudaEventRecord(e1, s); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (rep >= 10) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("threads %8d iters %3d mode %d (%s): 10 kernels %.4f ms, %.2f us/kernel\n", sz, iters, mode,
               mode==0?"plain":mode==1?"pdl wait":mode==2?"pdl trig+wait":mode==3?"pdl trig+wait, events":mode==4?"pdl wait, side-stream joins":"pdl wait, side joins (0)", t[t.size()/2], t[t.size()/2]*100);
    }
    printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
