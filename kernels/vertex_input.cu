// The geometry stage's input from a mesh the passes left on the device: positions, normals and
// texture coordinates (flat arrays; normals and uvs may be null, read as zero) packed into the
// VertexIn records every strategy reads (common.cuh).
extern "C" __global__ void rxv_pack(const float* __restrict__ pos, const float* __restrict__ nrm,
                                    const float* __restrict__ uv, unsigned n,
                                    VertexIn* __restrict__ out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    VertexIn v;
    v.position = make_float3(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    v.normal = nrm ? make_float3(nrm[3 * i], nrm[3 * i + 1], nrm[3 * i + 2]) : make_float3(0, 0, 0);
    v.uv = uv ? make_float2(uv[2 * i], uv[2 * i + 1]) : make_float2(0, 0);
    out[i] = v;
}
