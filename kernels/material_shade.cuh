// A pixel's surface and its shading on the GPU material path (after material_texture.cuh), the
// CPU's src/raster/material/ operation for operation.
#pragma once

// ---- a pixel's surface ----------------------------------------------------------------------

// (uv, duv_dx and duv_dy by uv set: RxpTexUse::uv_set indexes them; the second is the first's
// where the draw has one set)
struct RxmSurface {
    float3 world, normal;
    float2 uv[2], duv_dx[2], duv_dy[2];
    float4 color;
    float3 tangent, bitangent;
};

__device__ __forceinline__ float3 rxm_bary(const float3 e[3], float qx, float qy) {
    float3 b = make_float3(qx * e[0].x + qy * e[0].y + e[0].z, qx * e[1].x + qy * e[1].y + e[1].z,
                           qx * e[2].x + qy * e[2].y + e[2].z);
    const float sum = b.x + b.y + b.z;
    if (fabsf(sum) > 1.17549435e-38f && isfinite(sum)) {
        // one division and three products (the CPU's `b * (1.0 / sum)`)
        const float r = 1.0f / sum;
        return make_float3(b.x * r, b.y * r, b.z * r);
    }
    return make_float3(1.0f / 3.0f, 1.0f / 3.0f, 1.0f / 3.0f);
}

__device__ __forceinline__ float2 rxm_mix2(float3 b, const float2 a[3]) {
    return make_float2(a[0].x * b.x + a[1].x * b.y + a[2].x * b.z,
                       a[0].y * b.x + a[1].y * b.y + a[2].y * b.z);
}
__device__ __forceinline__ float3 rxm_mix3(float3 b, const float3 a[3]) {
    return make_float3(a[0].x * b.x + a[1].x * b.y + a[2].x * b.z,
                       a[0].y * b.x + a[1].y * b.y + a[2].y * b.z,
                       a[0].z * b.x + a[1].z * b.y + a[2].z * b.z);
}

// The barycentrics of pixel (px, py)'s centre in the triangle of edge planes `e` (returned), and
// its uv with the differences to the right and lower pixel centres' (the CPU's derivatives).
__device__ __forceinline__ float3 rxm_pixel_uv(const float3 e[3], const float2 uvs[3], int width,
                                               int height, int px, int py, float2& uv,
                                               float2& dx, float2& dy) {
    const float sx = 2.0f / (float)width, sy = -2.0f / (float)height;
    const float nx = ((float)px + 0.5f) * sx - 1.0f, ny = 1.0f + ((float)py + 0.5f) * sy;
    const float3 b = rxm_bary(e, nx, ny);
    const float3 bx = rxm_bary(e, nx + sx, ny + 0.0f);
    const float3 by = rxm_bary(e, nx + 0.0f, ny + sy);
    uv = rxm_mix2(b, uvs);
    const float2 ux = rxm_mix2(bx, uvs), uy = rxm_mix2(by, uvs);
    dx = make_float2(ux.x - uv.x, ux.y - uv.y);
    dy = make_float2(uy.x - uv.x, uy.y - uv.y);
    return b;
}

// Whether the surface reads the meshes' tangents: the raster module is built both ways, and a
// frame with no normal-mapped draw that has tangents runs the one without (the code slows the
// tile and resolve kernels even where it is not taken: its registers).
#ifndef RXM_TANGENTS
#define RXM_TANGENTS 0
#endif

// Whether a material of the frame has a dielectric reflectance other than 0.04 or a specular
// weight other than 1 (KHR_materials_ior, KHR_materials_specular): the module built without it
// keeps the constant 0.04, as most frames need (reading the values costs every fragment; the
// raster module is built for each combination a frame needs)
#ifndef RXM_SPECULAR
#define RXM_SPECULAR 0
#endif
// Whether a material of the frame has a clear coat (KHR_materials_clearcoat): built in only then
#ifndef RXM_CLEARCOAT
#define RXM_CLEARCOAT 0
#endif
// Whether a texture of the frame reads a mesh's second uv set: built in only then
#ifndef RXM_UV1
#define RXM_UV1 0
#endif

// The surface of the draw's triangle `t` (its place in the draw) at pixel (px, py); the tangent
// frame from uv set `frame_set`'s coordinates where it is not the mesh's.
__device__ RxmSurface rxm_surface(const RxpDraw& d, unsigned t, int width, int height, int px,
                                  int py, bool with_tangents, int frame_set) {
    const unsigned src = rxp_source(d, t);
    float3 c[3], world[3], normal[3];
    float2 uvs[3];
    float4 col[3];
    for (int k = 0; k < 3; k++) {
        const VertexOut v = rxm_vertex(d, src, k);
        c[k] = make_float3(v.clip.x, v.clip.y, v.clip.w);
        world[k] = v.world;
        normal[k] = v.normal;
        uvs[k] = v.uv;
        col[k] = rxm_vertex_color(d, src, k);
    }
    const float3 e[3] = {rxm_cross(c[1], c[2]), rxm_cross(c[2], c[0]), rxm_cross(c[0], c[1])};
    RxmSurface f;
    const float3 b =
        rxm_pixel_uv(e, uvs, width, height, px, py, f.uv[0], f.duv_dx[0], f.duv_dy[0]);
    f.uv[1] = f.uv[0];
    f.duv_dx[1] = f.duv_dx[0];
    f.duv_dy[1] = f.duv_dy[0];
#if RXM_UV1
    if (d.uvs1) {
        float2 uvs1[3];
        for (int k = 0; k < 3; k++) uvs1[k] = rxm_vertex_uv1(d, src, k);
        rxm_pixel_uv(e, uvs1, width, height, px, py, f.uv[1], f.duv_dx[1], f.duv_dy[1]);
        if (frame_set == 1)
            for (int k = 0; k < 3; k++) uvs[k] = uvs1[k];
    }
#endif
    f.world = rxm_mix3(b, world);
    f.normal = rxm_mix3(b, normal);
    f.color = d.colors ? make_float4(col[0].x * b.x + col[1].x * b.y + col[2].x * b.z,
                                     col[0].y * b.x + col[1].y * b.y + col[2].y * b.z,
                                     col[0].z * b.x + col[1].z * b.y + col[2].z * b.z,
                                     col[0].w * b.x + col[1].w * b.y + col[2].w * b.z)
                       : make_float4(1.0f, 1.0f, 1.0f, 1.0f);
    f.tangent = make_float3(0.0f, 0.0f, 0.0f);
    f.bitangent = f.tangent;
    // the mesh's tangents where it has them (interpolated, to world space; the bitangent from
    // the interpolated normal and the sign w), else the triangle's frame from its positions and
    // uvs (the CPU's surface)
    bool given = false;
#if RXM_TANGENTS
    if (with_tangents && d.tangents) {
        float4 tk[3];
        for (int k = 0; k < 3; k++) tk[k] = rxm_vertex_tangent(d, src, k);
        const float3 ti = make_float3(tk[0].x * b.x + tk[1].x * b.y + tk[2].x * b.z,
                                      tk[0].y * b.x + tk[1].y * b.y + tk[2].y * b.z,
                                      tk[0].z * b.x + tk[1].z * b.y + tk[2].z * b.z);
        const float tw_ = tk[0].w * b.x + tk[1].w * b.y + tk[2].w * b.z;
        const float* m = d.to_world;
        // (glam's Mat3 * Vec3: the columns scaled and summed in order)
        const float3 tw = make_float3(m[0] * ti.x + m[3] * ti.y + m[6] * ti.z,
                                      m[1] * ti.x + m[4] * ti.y + m[7] * ti.z,
                                      m[2] * ti.x + m[5] * ti.y + m[8] * ti.z);
        const float sign = tw_ < 0.0f ? -d.handedness : d.handedness;
        if (rxm_dot3(tw, tw) > 1e-20f) {
            f.tangent = tw;
            f.bitangent = rxm_scale(rxm_cross(f.normal, tw), sign);
            given = true;
        }
    }
#endif
    if (with_tangents && !given) {
        const float3 dp1 = rxm_sub(world[1], world[0]), dp2 = rxm_sub(world[2], world[0]);
        const float2 dt1 = make_float2(uvs[1].x - uvs[0].x, uvs[1].y - uvs[0].y);
        const float2 dt2 = make_float2(uvs[2].x - uvs[0].x, uvs[2].y - uvs[0].y);
        const float det = dt1.x * dt2.y - dt2.x * dt1.y;
        if (fabsf(det) > 1e-20f) {
            const float r = 1.0f / det;
            f.tangent = rxm_scale(rxm_sub(rxm_scale(dp1, dt2.y), rxm_scale(dp2, dt1.y)), r);
            f.bitangent = rxm_scale(rxm_sub(rxm_scale(dp2, dt1.x), rxm_scale(dp1, dt2.x)), r);
        }
    }
    return f;
}

// The coordinates texture use `u` samples at on the surface: its uv set's (always the first in a
// module built without RXM_UV1; chosen, not indexed, so that the surface stays in registers).
__device__ __forceinline__ void rxm_set_coords(const RxmSurface& f, const RxpTexUse& u, float2& uv,
                                               float2& dx, float2& dy) {
    const bool second = RXM_UV1 && u.uv_set == 1;
    uv = second ? f.uv[1] : f.uv[0];
    dx = second ? f.duv_dx[1] : f.duv_dx[0];
    dy = second ? f.duv_dy[1] : f.duv_dy[0];
}

// A material's use of a texture at the surface (rxm_sample at its uv set's coordinates).
template <bool kAlpha = false>
__device__ __forceinline__ float4 rxm_sample_at(const RxpMaterials& mt, const RxpTexUse& u,
                                                const RxmSurface& f) {
    float2 uv, dx, dy;
    rxm_set_coords(f, u, uv, dx, dy);
    return rxm_sample<kAlpha>(mt, u, uv, dx, dy);
}

// The base colour, metallic-roughness and normal textures of `m` at the surface (those it has;
// the base colour's alone when `only_base`) into out[RXM_BASE, RXM_MR, RXM_NORMAL]: those the
// host marked as sampling alike the first one present (`m.alike`: alike textures, the same
// transform) share its level choice and texel positions (rxm_sample_alike: the same values);
// any other is sampled on its own (the CPU's sample_slots, which groups all five slots by the
// same rule: Material::alike_slots; the values are the same either way).
__device__ __forceinline__ void rxm_sample_main(const RxpMaterials& mt, const RxpMaterial& m,
                                                const RxmSurface& f, bool only_base,
                                                float4 out[3]) {
    const unsigned group = only_base ? m.alike & 1u : m.alike;
    RxmSlots<3> slots;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        const int tex = m.tex[k].texture;
        slots.id[k] = (group >> k) & 1u ? tex : -1;
        if (tex >= 0 && !((group >> k) & 1u) && (k == 0 || !only_base))
            out[k] = rxm_sample_at(mt, m.tex[k], f);
    }
    if (!group) return;
    const RxpTexUse& lead = m.tex[__ffs(group) - 1];
    float2 uv, dx, dy;
    rxm_set_coords(f, lead, uv, dx, dy);
    rxm_coords(lead, uv, dx, dy);
    const RxmTexels<3> got = rxm_sample_alike<3, false>(mt.texels, mt.levels, mt.to_linear,
                                                        mt.textures, slots, uv, dx, dy);
#pragma unroll
    for (int k = 0; k < 3; k++)
        if ((group >> k) & 1u) out[k] = got.v[k];
}

// What the alpha test of a masked material needs of one triangle, read once per triangle (the
// test runs on every fragment before the depth test): the edge planes of its corners'
// homogeneous 2D positions, its uvs and colour alphas, and the material's alpha factor, cutoff
// and base colour texture.
struct RxmMaskTri {
    float3 e[3];
    float2 uv[3];
    float ca[3];
    bool colors;
    float alpha;
    float cutoff;
    int texture;
};

__device__ void rxm_mask_setup(const RxpMaterials& mt, const RxpDraw& d, unsigned t,
                               RxmMaskTri& m) {
    const unsigned src = rxp_source(d, t);
    float3 c[3];
    const RxpMaterial& mat = mt.materials[d.material];
    // (the base colour texture's uv set)
    const bool second = RXM_UV1 && d.uvs1 && mat.tex[RXM_BASE].uv_set == 1;
    for (int k = 0; k < 3; k++) {
        const VertexOut& v = rxm_vertex(d, src, k);
        c[k] = make_float3(v.clip.x, v.clip.y, v.clip.w);
        m.uv[k] = second ? rxm_vertex_uv1(d, src, k) : v.uv;
        m.ca[k] = rxm_vertex_color(d, src, k).w;
    }
    m.e[0] = rxm_cross(c[1], c[2]);
    m.e[1] = rxm_cross(c[2], c[0]);
    m.e[2] = rxm_cross(c[0], c[1]);
    m.colors = d.colors != nullptr;
    m.alpha = mat.base[3];
    m.cutoff = mat.cutoff;
    m.texture = mat.tex[RXM_BASE].texture;
}

// Whether a fragment at pixel (px, py) survives the alpha test: the base colour's alpha (factor,
// vertex colour, texture) at least the cutoff, as the full surface (rxm_surface, rxm_shade) would
// compute it.
__device__ bool rxm_mask_at(const RxpMaterials& mt, const RxpDraw& d, const RxmMaskTri& m,
                            int width, int height, int px, int py) {
    float2 uv, dx, dy;
    const float3 b = rxm_pixel_uv(m.e, m.uv, width, height, px, py, uv, dx, dy);
    const float ca = m.colors ? m.ca[0] * b.x + m.ca[1] * b.y + m.ca[2] * b.z : 1.0f;
    float a = m.alpha * ca;
    if (m.texture >= 0)
        a *= rxm_sample<true>(mt, mt.materials[d.material].tex[RXM_BASE], uv, dx, dy).w;
    return a >= m.cutoff;
}

// Khronos PBR Neutral (the CPU's pbr_neutral).
__device__ float3 rxm_pbr_neutral(float3 c) {
    const float start = 0.8f - 0.04f, desaturation = 0.15f;
    const float x = fminf(c.x, fminf(c.y, c.z));
    const float offset = x < 0.08f ? x - 6.25f * x * x : 0.04f;
    c = make_float3(c.x - offset, c.y - offset, c.z - offset);
    const float peak = c.x > (c.y > c.z ? c.y : c.z) ? c.x : (c.y > c.z ? c.y : c.z);
    if (peak < start) return c;
    const float d = 1.0f - start;
    const float new_peak = 1.0f - d * d / (peak + d - start);
    c = rxm_scale(c, new_peak / peak);
    const float g = 1.0f - 1.0f / (desaturation * (peak - new_peak) + 1.0f);
    const float h = 1.0f - g;
    return make_float3(c.x * h + new_peak * g, c.y * h + new_peak * g, c.z * h + new_peak * g);
}

__device__ __forceinline__ float rxm_pow5(float x) {
    const float x2 = x * x;
    return x2 * x2 * x;
}

// The sum of the scene's lights as a surface reflects them (the CPU's Lit::light over the
// lights): Lambertian diffuse of c_diff and GGX specular of reflectance f0 (its Fresnel term
// weighed by `weight` where RXM_SPECULAR is on), roughness^4 a2, shading normal n, towards the
// eye `view` with nv = max(|n . view|, 1e-4).
__device__ __forceinline__ float3 rxm_lights(const RxpMaterials& mt, float3 world, float3 n,
                                             float3 view, float nv, float3 c_diff, float3 f0,
                                             float weight, float a2) {
#if RXM_SPECULAR
#define RXM_WEIGH(x) ((x) * weight)
#else
#define RXM_WEIGH(x) (x)
#endif
    float3 light = make_float3(0.0f, 0.0f, 0.0f);
    for (unsigned i = 0; i < mt.nlights; i++) {
        const RxpLight& l = mt.lights[i];
        float3 dir, radiance;
        if (l.kind == 0) {
            dir = make_float3(l.direction[0], l.direction[1], l.direction[2]);
            radiance = make_float3(l.color[0], l.color[1], l.color[2]);
        } else {
            const float3 dd = make_float3(l.position[0] - world.x, l.position[1] - world.y,
                                          l.position[2] - world.z);
            const float dist2 = fmaxf(rxm_dot3(dd, dd), 1e-8f);
            const float dist = sqrtf(dist2);
            dir = make_float3(dd.x / dist, dd.y / dist, dd.z / dist);
            float window = 1.0f;
            if (l.range > 0.0f) {
                const float x = dist2 / (l.range * l.range);
                const float w = rxm_clamp01(1.0f - x * x);
                window = w * w;
            }
            float cone = 1.0f;
            if (l.kind == 2) {
                const float cd = rxm_dot3(make_float3(l.direction[0], l.direction[1], l.direction[2]),
                                          rxm_scale(dir, -1.0f));
                const float k = rxm_clamp01((cd - l.cos_outer) / fmaxf(l.cos_inner - l.cos_outer, 1e-4f));
                cone = k * k;
            }
            const float s = l.intensity * window * cone / dist2;
            radiance = make_float3(l.color[0] * s, l.color[1] * s, l.color[2] * s);
        }
        const float nl = rxm_dot3(n, dir);
        if (nl <= 0.0f || rxm_is_zero(radiance)) continue;
        const float3 h = rxm_normalize(rxm_add(dir, view));
        const float nh = fmaxf(rxm_dot3(n, h), 0.0f);
        const float vh = fmaxf(rxm_dot3(view, h), 0.0f);
        const float p5 = rxm_pow5(1.0f - vh);
        const float3 fresnel = make_float3(RXM_WEIGH(f0.x + (1.0f - f0.x) * p5),
                                           RXM_WEIGH(f0.y + (1.0f - f0.y) * p5),
                                           RXM_WEIGH(f0.z + (1.0f - f0.z) * p5));
        const float dd = nh * nh * (a2 - 1.0f) + 1.0f;
        const float distribution = a2 / (3.14159274f * dd * dd);
        const float visibility =
            0.5f / fmaxf(nl * sqrtf(nv * nv * (1.0f - a2) + a2) + nv * sqrtf(nl * nl * (1.0f - a2) + a2),
                         1e-8f);
        const float inv_pi = 0.318309873f;
        const float3 diffuse = make_float3((1.0f - fresnel.x) * c_diff.x * inv_pi,
                                           (1.0f - fresnel.y) * c_diff.y * inv_pi,
                                           (1.0f - fresnel.z) * c_diff.z * inv_pi);
        const float dv = distribution * visibility;
        const float3 specular = rxm_scale(fresnel, dv);
        light = rxm_add(light, rxm_scale(rxm_mul(rxm_add(diffuse, specular), radiance), nl));
    }
#undef RXM_WEIGH
    return light;
}

// The colour (linear, tone-mapped) and alpha of the draw's material at pixel (px, py) of its
// triangle `t`, seen from the front or the back (the CPU's MaterialShader::shade).
__device__ float4 rxm_shade(const RxpMaterials& mt, const RxpDraw& d, unsigned t, int width,
                            int height, int px, int py, bool front, const float eye[3],
                            float ambient, const float light_color[3]) {
    const RxpMaterial& m = mt.materials[d.material];
    const bool normal_map = m.tex[RXM_NORMAL].texture >= 0;
    const RxmSurface f =
        rxm_surface(d, t, width, height, px, py, normal_map, m.tex[RXM_NORMAL].uv_set);
    const bool unlit = (m.flags & RXM_UNLIT) != 0;
    const float4 white = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
    float4 main[3] = {white, white, white};
    rxm_sample_main(mt, m, f, unlit, main);
    float4 base = make_float4(m.base[0] * f.color.x, m.base[1] * f.color.y, m.base[2] * f.color.z,
                              m.base[3] * f.color.w);
    if (m.tex[RXM_BASE].texture >= 0)
        base = make_float4(base.x * main[RXM_BASE].x, base.y * main[RXM_BASE].y,
                           base.z * main[RXM_BASE].z, base.w * main[RXM_BASE].w);
    if (unlit) return base;
    const float side = front ? 1.0f : -1.0f;
    float3 n = rxm_normalize(rxm_scale(f.normal, side));
    if (normal_map) {
        const RxpTexUse& u = m.tex[RXM_NORMAL];
        const float4 tex = main[RXM_NORMAL];
        const float3 tn = make_float3((tex.x * 2.0f - 1.0f) * u.scale, (tex.y * 2.0f - 1.0f) * u.scale,
                                      tex.z * 2.0f - 1.0f);
        const float3 ts = rxm_scale(f.tangent, side);
        const float3 tg = rxm_normalize(rxm_sub(ts, rxm_scale(n, rxm_dot3(n, ts))));
        if (!rxm_is_zero(tg)) {
            float3 bt = rxm_cross(n, tg);
            if (rxm_dot3(bt, rxm_scale(f.bitangent, side)) < 0.0f) bt = rxm_scale(bt, -1.0f);
            const float3 mapped = rxm_normalize(
                rxm_add(rxm_add(rxm_scale(tg, tn.x), rxm_scale(bt, tn.y)), rxm_scale(n, tn.z)));
            if (!rxm_is_zero(mapped)) n = mapped;
        }
    }
    float metallic = m.metallic, roughness = m.roughness;
    if (m.tex[RXM_MR].texture >= 0) {
        const float4 mr = main[RXM_MR];
        roughness *= mr.y;
        metallic *= mr.z;
    }
    metallic = rxm_clamp01(metallic);
    roughness = rxm_clamp01(roughness);
    float occlusion = 1.0f;
    if (m.tex[RXM_OCCLUSION].texture >= 0) {
        const RxpTexUse& u = m.tex[RXM_OCCLUSION];
        occlusion = 1.0f + u.scale * (rxm_sample_at(mt, u, f).x - 1.0f);
    }
    float3 emissive = make_float3(m.emissive[0], m.emissive[1], m.emissive[2]);
    if (m.tex[RXM_EMISSIVE].texture >= 0) {
        const float4 e = rxm_sample_at(mt, m.tex[RXM_EMISSIVE], f);
        emissive = rxm_mul(emissive, make_float3(e.x, e.y, e.z));
    }
    const float3 rgb = make_float3(base.x, base.y, base.z);
    const float3 c_diff = rxm_scale(rgb, 1.0f - metallic);
    // Xyz::splat(specular_f0).lerp(rgb, metallic), and the dielectric part's Fresnel weight
    // (exactly one without KHR_materials_specular)
    const float km = 1.0f - metallic;
#if RXM_SPECULAR
    const float3 f0 = make_float3(m.specular_f0[0] * km + rgb.x * metallic,
                                  m.specular_f0[1] * km + rgb.y * metallic,
                                  m.specular_f0[2] * km + rgb.z * metallic);
    const float weight =
        m.specular_weight == 1.0f ? 1.0f : m.specular_weight * (1.0f - metallic) + metallic;
#define RXM_WEIGH(x) ((x) * weight)
#define RXM_LIGHT_WEIGHT weight
#else
    const float3 f0 = make_float3(0.04f * km + rgb.x * metallic, 0.04f * km + rgb.y * metallic,
                                  0.04f * km + rgb.z * metallic);
#define RXM_WEIGH(x) (x)
#define RXM_LIGHT_WEIGHT 1.0f
#endif
    const float alpha = fmaxf(roughness * roughness, 1e-3f);
    const float a2 = alpha * alpha;
    const float3 view = rxm_normalize(make_float3(eye[0] - f.world.x, eye[1] - f.world.y,
                                                  eye[2] - f.world.z));
    const float nv = fmaxf(fabsf(rxm_dot3(n, view)), 1e-4f);
    const float3 light = rxm_lights(mt, f.world, n, view, nv, c_diff, f0, RXM_LIGHT_WEIGHT, a2);
    const float amb = ambient * occlusion;
    const float3 ambient_light = make_float3((c_diff.x + RXM_WEIGH(f0.x)) * amb * light_color[0],
                                             (c_diff.y + RXM_WEIGH(f0.y)) * amb * light_color[1],
                                             (c_diff.z + RXM_WEIGH(f0.z)) * amb * light_color[2]);
#undef RXM_WEIGH
#undef RXM_LIGHT_WEIGHT
    float3 under = rxm_add(rxm_add(light, ambient_light), emissive);
#if RXM_CLEARCOAT
    // KHR_materials_clearcoat (the CPU's MaterialShader::coat): a dielectric coat of
    // reflectance 0.04 about the interpolated normal over what lies under it, dimmed by its
    // Fresnel term towards the eye
    if (m.clearcoat > 0.0f) {
        const float3 cn = rxm_normalize(rxm_scale(f.normal, side));
        const float calpha = fmaxf(m.clearcoat_roughness * m.clearcoat_roughness, 1e-3f);
        const float cnv = fmaxf(fabsf(rxm_dot3(cn, view)), 1e-4f);
        const float3 coat = rxm_lights(mt, f.world, cn, view, cnv, make_float3(0.0f, 0.0f, 0.0f),
                                       make_float3(0.04f, 0.04f, 0.04f), 1.0f, calpha * calpha);
        const float ca = 0.04f * amb;
        const float cc = m.clearcoat;
        const float keep = 1.0f - cc * (0.04f + 0.96f * rxm_pow5(1.0f - cnv));
        under = make_float3(under.x * keep + (coat.x + light_color[0] * ca) * cc,
                            under.y * keep + (coat.y + light_color[1] * ca) * cc,
                            under.z * keep + (coat.z + light_color[2] * ca) * cc);
    }
#endif
    const float3 c = rxm_pbr_neutral(under);
    return make_float4(c.x, c.y, c.z, base.w);
}
