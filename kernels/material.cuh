// The material path of the raster stage on the GPU, the CPU's src/raster/material/ and
// crates/core/src/material/ operation for operation: a pixel's surface from the perspective-correct
// barycentrics of its centre in the draw's source triangle (homogeneous 2D), texture sampling
// (wrap modes, filters, trilinear mipmapping, the level from the uvs' screen-space derivatives),
// glTF's metallic-roughness BRDF under the frame's punctual lights, and PBR Neutral tone mapping.
//
// Textures are sampled by this code from one buffer of RGBA8 texels (every level of every
// texture of the frame's materials, uploaded once and kept), not by CUDA texture objects: the
// hardware filters with 8-bit fractional weights and decodes sRGB after its own rounding, so its
// values would differ from the CPU reference by more than a rounding step, and one buffer with a
// table of levels needs one allocation instead of an array object per texture.
//
// This file holds the tables the host lays out (textures, materials, draws, lights) and small
// vector helpers; texture sampling follows in material_texture.cuh, a pixel's surface and its
// shading in material_shade.cuh, one translation unit in that order.
#pragma once

// sampler bits of RxpTexture::sampler
#define RXM_WRAP_S(s) ((s) & 3u)
#define RXM_WRAP_T(s) (((s) >> 2) & 3u)
#define RXM_MAG_LINEAR 16u
#define RXM_MIN_LINEAR 32u
// mipmap filter: 0 none (level 0 only), 1 nearest, 2 linear
#define RXM_MIPMAP(s) (((s) >> 6) & 3u)
// flags of RxpMaterial
#define RXM_UNLIT 1u
#define RXM_ALPHA_MASK 2u
#define RXM_ALPHA_BLEND 4u
// texture uses of a material
#define RXM_BASE 0
#define RXM_MR 1
#define RXM_NORMAL 2
#define RXM_OCCLUSION 3
#define RXM_EMISSIVE 4

// One level of a texture: its texels start at `offset` in the texel buffer.
struct RxpLevel {
    unsigned long long offset;
    unsigned width;
    unsigned height;
};

struct RxpTexture {
    unsigned first_level;
    unsigned levels;
    unsigned srgb;
    unsigned sampler;
};

// A material's use of a texture (texture < 0: none) with its KHR_texture_transform (a 2x3
// matrix), scale (normal scale, occlusion strength) and the mesh's uv set it reads (0, 1).
struct RxpTexUse {
    int texture;
    float scale;
    int transformed;
    float m[6];
    int uv_set;
};

struct RxpMaterial {
    float base[4];
    float emissive[3];
    float metallic;
    float roughness;
    float cutoff;
    unsigned flags;
    // which of the base colour, metallic-roughness and normal textures (bits 0, 1, 2) sample
    // alike the first of them present, with the same transform (rxm_sample_main)
    unsigned alike;
    RxpTexUse tex[5];
    // the dielectric reflectance at normal incidence and the Fresnel term's weight
    // (KHR_materials_ior, KHR_materials_specular; the CPU's Material::specular_f0, _weight)
    float specular_f0[3];
    float specular_weight;
    // KHR_materials_clearcoat's strength (0: none) and roughness (Material::clearcoat, _roughness)
    float clearcoat;
    float clearcoat_roughness;
};

// A draw of the frame, as setup and the material path read it: its queue and where each
// triangle's corners are in it (null: flat), its runs when it is a view, the mesh's indices (each
// corner's source vertex) with the vertex colours (null: none) and the shading-rate mode's
// per-vertex counts (null: not that mode), the patch mode's triangle values (null: none), its
// triangles' place in the frame (tri_base ..), its material (< 0: none), its cull mode (0 none,
// 1 back, 2 front: a double-sided material's is 0) and its alpha class (RXP_F_MASK/BLEND >> 5).
struct RxpDraw {
    const VertexOut* queue;
    const unsigned* corners;
    const unsigned* runs;
    const unsigned* indices;
    const float4* colors;
    const unsigned* counts;
    const unsigned* faces;
    unsigned long long nverts;
    unsigned long long ncolors;
    unsigned nruns;
    unsigned tri_base;
    int material;
    unsigned cull;  // 0 none, 1 back, 2 front, | RXP_CULL_MIRRORED (raster_setup.cu)
    unsigned alpha;
    unsigned pad;
    // the mesh's tangents (xyz and the bitangent's sign per vertex; null: none), the model
    // matrix's linear part by columns and -1 where it mirrors, else 1
    const float4* tangents;
    unsigned long long ntangents;
    float to_world[9];
    float handedness;
    // the mesh's second uv set per vertex (null: none), for textures that read it
    const float2* uvs1;
    unsigned long long nuvs1;
};

// Where corner k of the draw's source triangle t lies in its queue (flat: 3t + k); setup
// rejects a triangle with a corner at or past `nverts`.
__device__ __forceinline__ unsigned long long rxp_corner(const unsigned* tri_corners, unsigned t,
                                                         int k) {
    return tri_corners ? __ldg(&tri_corners[3 * (size_t)t + k]) : 3ull * t + k;
}

// The source triangle (in the draw's mesh) of the draw's triangle t.
__device__ __forceinline__ unsigned rxp_source(const RxpDraw& d, unsigned t) {
    return d.runs ? rxp_run_source(d.runs, d.nruns, t) : t;
}

// Corner k of the draw's source triangle `src`: its shaded vertex and its vertex colour (white
// without colours, as the CPU's).
__device__ __forceinline__ const VertexOut& rxm_vertex(const RxpDraw& d, unsigned src, int k) {
    const unsigned long long q = rxp_corner(d.corners, src, k);
    // (a corner outside the queue never made a record)
    return d.queue[q < d.nverts ? q : 0];
}
__device__ __forceinline__ float4 rxm_vertex_color(const RxpDraw& d, unsigned src, int k) {
    if (d.colors) {
        const unsigned i = d.indices[3 * (size_t)src + k];
        if (i < d.ncolors) return d.colors[i];
    }
    return make_float4(1.0f, 1.0f, 1.0f, 1.0f);
}
__device__ __forceinline__ float4 rxm_vertex_tangent(const RxpDraw& d, unsigned src, int k) {
    const unsigned i = d.indices[3 * (size_t)src + k];
    return i < d.ntangents ? d.tangents[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
__device__ __forceinline__ float2 rxm_vertex_uv1(const RxpDraw& d, unsigned src, int k) {
    const unsigned i = d.indices[3 * (size_t)src + k];
    return i < d.nuvs1 ? d.uvs1[i] : make_float2(0.0f, 0.0f);
}

// A punctual light; directional ones carry the unit vector towards the light in `direction` and
// their radiance in `color` (intensity 1), spot lights their unit axis and cone cosines.
struct RxpLight {
    unsigned kind;  // 0 directional, 1 point, 2 spot
    float color[3];
    float intensity;
    float position[3];
    float direction[3];
    float range;  // <= 0: none
    float cos_inner;
    float cos_outer;
};

// The frame's material tables.
struct RxpMaterials {
    const RxpDraw* draws;
    const RxpMaterial* materials;
    const RxpTexture* textures;
    const RxpLevel* levels;
    const unsigned* texels;
    const RxpLight* lights;
    // byte to float: [0, 256) sRGB to linear (the CPU's srgb_to_linear_lut), [256, 512) the
    // unsigned normalised value i / 255 (a table read instead of four IEEE divisions a texel)
    const float* to_linear;
    unsigned nlights;
    unsigned pad;
};

static_assert(sizeof(RxpLevel) == 16 && sizeof(RxpTexture) == 16 && sizeof(RxpTexUse) == 40,
              "texture tables as the host lays them out (src/raster/cuda/material.rs)");
static_assert(sizeof(RxpMaterial) == 272 && sizeof(RxpDraw) == 168 && sizeof(RxpLight) == 56 &&
                  sizeof(RxpMaterials) == 64,
              "material tables as the host lays them out (src/raster/cuda/material.rs)");

// ---- small vector helpers with glam's operation order ---------------------------------------

__device__ __forceinline__ float rxm_dot3(float3 a, float3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
__device__ __forceinline__ float3 rxm_cross(float3 a, float3 b) {
    return make_float3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}
__device__ __forceinline__ float3 rxm_scale(float3 a, float s) {
    return make_float3(a.x * s, a.y * s, a.z * s);
}
__device__ __forceinline__ float3 rxm_add(float3 a, float3 b) {
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
}
__device__ __forceinline__ float3 rxm_sub(float3 a, float3 b) {
    return make_float3(a.x - b.x, a.y - b.y, a.z - b.z);
}
__device__ __forceinline__ float3 rxm_mul(float3 a, float3 b) {
    return make_float3(a.x * b.x, a.y * b.y, a.z * b.z);
}
// glam's normalize_or_zero: times the reciprocal of the length, zero unless that is finite > 0
__device__ __forceinline__ float3 rxm_normalize(float3 a) {
    const float rcp = 1.0f / sqrtf(rxm_dot3(a, a));
    return (isfinite(rcp) && rcp > 0.0f) ? rxm_scale(a, rcp) : make_float3(0.0f, 0.0f, 0.0f);
}
__device__ __forceinline__ bool rxm_is_zero(float3 a) {
    return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f;
}
__device__ __forceinline__ float4 rxm_lerp4(float4 a, float4 b, float s) {
    const float t = 1.0f - s;
    return make_float4(a.x * t + b.x * s, a.y * t + b.y * s, a.z * t + b.z * s, a.w * t + b.w * s);
}
__device__ __forceinline__ float rxm_clamp01(float x) {
    return fminf(fmaxf(x, 0.0f), 1.0f);
}
