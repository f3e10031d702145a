// The paper's synthetic shader loads: the standard transform plus FMA_N dependent multiply-adds
// (FMA_N is defined by the host: 256, 512 or 1024), written to `extra` so they are not optimised
// away. The CPU's `FmaLoad` computes the same chain.
__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {
    VertexOut o = rxp_transform(v, u);
    float a = v.position.x + v.position.y;
#pragma unroll 16
    for (int i = 0; i < FMA_N; ++i) {
        a = fmaf(a, 0.9999f, 0.0001f);
    }
    o.extra = a;
    return o;
}
