// Types every rxpipe kernel and vertex shader shares. They match the Rust structs byte for byte
// (src/geometry/cuda/abi.rs): VertexIn 32 bytes, VertexOut 64 bytes, Uniforms 180 bytes.
#pragma once

// One vertex of the mesh, as the vertex shader reads it.
struct VertexIn {
    float3 position;
    float3 normal;
    float2 uv;
};

// What a vertex shader writes: the clip-space position (depth in [0, w] for visible points) and
// a fixed small set of varyings. `extra` is a free scalar.
struct VertexOut {
    float4 clip;
    float3 world;
    float3 normal;
    float2 uv;
    float extra;
};

// Per-draw constants. Matrices are column-major, as in glam.
struct Uniforms {
    float model[16];
    float view_proj[16];
    // inverse transpose of the model matrix's upper 3x3
    float normal_matrix[9];
    float3 eye;
    // seconds, for animated shaders
    float time;
};

__device__ __forceinline__ float3 rxp_transform_point(const float* m, float3 p) {
    return make_float3(m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12],
                       m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13],
                       m[2] * p.x + m[6] * p.y + m[10] * p.z + m[14]);
}

__device__ __forceinline__ float4 rxp_mul4(const float* m, float4 p) {
    return make_float4(m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12] * p.w,
                       m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13] * p.w,
                       m[2] * p.x + m[6] * p.y + m[10] * p.z + m[14] * p.w,
                       m[3] * p.x + m[7] * p.y + m[11] * p.z + m[15] * p.w);
}

__device__ __forceinline__ float3 rxp_mul3(const float* m, float3 v) {
    return make_float3(m[0] * v.x + m[3] * v.y + m[6] * v.z,
                       m[1] * v.x + m[4] * v.y + m[7] * v.z,
                       m[2] * v.x + m[5] * v.y + m[8] * v.z);
}

// The standard transform (the CPU's `Transform`): model-view-projection, world position, normal
// and uv. Custom shaders may call it.
__device__ __forceinline__ VertexOut rxp_transform(const VertexIn& v, const Uniforms& u) {
    VertexOut o;
    o.world = rxp_transform_point(u.model, v.position);
    o.clip = rxp_mul4(u.view_proj, make_float4(o.world.x, o.world.y, o.world.z, 1.0f));
    o.normal = rxp_mul3(u.normal_matrix, v.normal);
    o.uv = v.uv;
    o.extra = 0.0f;
    return o;
}

// The first statement of a kernel that the host may launch as a programmatic dependent
// (crates/gpu/src/dependent.rs): waits until the kernel before it on the stream has completed and its
// memory is visible. Without such a launch (or before sm_90) it returns at once.
__device__ __forceinline__ void rxp_after_prior() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
