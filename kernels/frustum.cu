// The frustum stage (src/passes/frustum): one thread per object tests the eight corners of its
// bounding box, transformed by its model-view-projection matrix, against the six clip planes
// the raster stage's trivial rejection uses (x and y within [-w, w], z within [0, w]). An object
// all of whose corners lie outside one plane, by more than a relative margin, is culled: every
// triangle inside the box would be rejected by setup. The CPU reference is cpu.rs beside it.

struct FrustumObject {
    float mvp[16];  // column-major
    float lo[3];
    float hi[3];
};

extern "C" __global__ void rxf_cull(const FrustumObject* __restrict__ objects, unsigned count,
                                    float margin, unsigned* __restrict__ visible) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const FrustumObject o = objects[i];
    unsigned all_out = 0x3f;
    for (int c = 0; c < 8; ++c) {
        const float x = (c & 1) ? o.hi[0] : o.lo[0];
        const float y = (c & 2) ? o.hi[1] : o.lo[1];
        const float z = (c & 4) ? o.hi[2] : o.lo[2];
        const float* m = o.mvp;
        const float cx = m[0] * x + m[4] * y + m[8] * z + m[12];
        const float cy = m[1] * x + m[5] * y + m[9] * z + m[13];
        const float cz = m[2] * x + m[6] * y + m[10] * z + m[14];
        const float cw = m[3] * x + m[7] * y + m[11] * z + m[15];
        const float slack = margin * (fabsf(cx) + fabsf(cy) + fabsf(cz) + fabsf(cw));
        const unsigned out = (unsigned)(-cx - cw > slack) | (unsigned)(cx - cw > slack) << 1 |
                             (unsigned)(-cy - cw > slack) << 2 | (unsigned)(cy - cw > slack) << 3 |
                             (unsigned)(-cz > slack) << 4 | (unsigned)(cz - cw > slack) << 5;
        all_out &= out;
    }
    visible[i] = all_out == 0;
}
