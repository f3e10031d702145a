// The standard transform.
__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {
    return rxp_transform(v, u);
}
