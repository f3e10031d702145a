// A deliberately broken vertex shader: `amplitude` is never declared. The custom_shader example
// run with this file shows the error NVRTC reports, with this file's name and line.
__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {
    VertexOut o = rxp_transform(v, u);
    o.extra = amplitude * sinf(u.time);
    return o;
}
