// A travelling wave: every vertex moves along its normal by d = A sin(k y - w t), so ripples run
// up the mesh over time. The normal is tilted by the wave's slope so that the lighting shows the
// ripples, and `extra` carries the displacement.
__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {
    const float A = 0.04f, k = 14.0f, w = 3.0f;
    float phase = k * v.position.y - w * u.time;
    float d = A * sinf(phase);
    float slope = A * k * cosf(phase);
    VertexIn moved = v;
    moved.position = make_float3(v.position.x + d * v.normal.x,
                                 v.position.y + d * v.normal.y,
                                 v.position.z + d * v.normal.z);
    // n - slope * (the part of +y along the surface)
    float ny = v.normal.y;
    moved.normal = make_float3(v.normal.x + slope * ny * v.normal.x,
                               v.normal.y - slope * (1.0f - ny * ny),
                               v.normal.z + slope * ny * v.normal.z);
    VertexOut o = rxp_transform(moved, u);
    o.extra = d;
    return o;
}
