// Texture sampling of the GPU material path (after material.cuh), the CPU's
// crates/core/src/material/texture/ operation for operation.
#pragma once

// ---- textures ---------------------------------------------------------------------------------

// The CPU's `floor`: rounds down through a saturating cast to 64 bits (NaN gives 0). Within
// 32 bits (every coordinate but absurd ones) floorf and a 32-bit conversion give the same.
__device__ __forceinline__ long long rxm_floor(float x) {
    if (fabsf(x) < 2147483520.0f) return (long long)(int)floorf(x);
    const long long t = (long long)x;
    return t - (long long)((float)t > x);
}

// rxm_mod for a size that is no power of two: a 32-bit remainder where `i` fits (a 64-bit
// remainder is a long software routine on the GPU), else the 64-bit one. Out of line, so that
// the sampling code of power-of-two textures (most) does not carry it: inlined four times per
// bilinear lookup, its instructions were fetched and stepped over (ncu: 6% of the tile
// kernel's samples stalled on instruction fetch in these lines).
__device__ __noinline__ unsigned rxm_mod_any(long long i, unsigned n) {
    if (i >= -0x40000000ll && i < 0x40000000ll) {
        const int k = (int)i % (int)n;
        return (unsigned)(k < 0 ? k + (int)n : k);
    }
    long long k = i % (long long)n;
    return (unsigned)(k < 0 ? k + n : k);
}

// `i` rem_euclid `n` (n > 0): a mask for powers of two, else rxm_mod_any.
__device__ __forceinline__ unsigned rxm_mod(long long i, unsigned n) {
    if ((n & (n - 1)) == 0) return (unsigned)i & (n - 1);
    return rxm_mod_any(i, n);
}

// Texel index `i` wrapped into 0..n (the CPU's `wrap`): 0 repeat, 1 clamp to edge, 2 mirrored
// repeat.
__device__ __forceinline__ unsigned rxm_wrap(long long i, unsigned n, unsigned mode) {
    if (mode == 1) return (unsigned)(i < 0 ? 0 : (i > (long long)n - 1 ? (long long)n - 1 : i));
    if (mode == 2) {
        const unsigned k = rxm_mod(i, 2 * n);
        return k >= n ? 2 * n - 1 - k : k;
    }
    return rxm_mod(i, n);
}

// rxm_mod for a 32-bit index and a size of at most 2^16 (the sampling's fast path): a mask for
// powers of two, else a 32-bit remainder out of line (as rxm_mod_any).
__device__ __noinline__ unsigned rxm_mod_any32(int i, unsigned n) {
    const int k = i % (int)n;
    return (unsigned)(k < 0 ? k + (int)n : k);
}
__device__ __forceinline__ unsigned rxm_mod32(int i, unsigned n) {
    if ((n & (n - 1)) == 0) return (unsigned)i & (n - 1);
    return rxm_mod_any32(i, n);
}

// rxm_wrap for |i| < 2^30 and n <= 2^16, in 32-bit integers (the same texel).
__device__ __forceinline__ unsigned rxm_wrap32(int i, unsigned n, unsigned mode) {
    if (mode == 1) return (unsigned)(i < 0 ? 0 : (i > (int)n - 1 ? (int)n - 1 : i));
    if (mode == 2) {
        const unsigned k = rxm_mod32(i, 2 * n);
        return k >= n ? 2 * n - 1 - k : k;
    }
    return rxm_mod32(i, n);
}

// A texel's value as floats; with kAlpha only its alpha (the alpha test's), the rest zero: each
// channel is filtered on its own, so the alpha is the same either way.
template <bool kAlpha>
__device__ __forceinline__ float4 rxm_unpack(unsigned v, const float* __restrict__ lut, bool srgb) {
    if (kAlpha) return make_float4(0.0f, 0.0f, 0.0f, lut[256 + (v >> 24)]);
    const float* rgb = srgb ? lut : lut + 256;
    return make_float4(rgb[v & 0xffu], rgb[(v >> 8) & 0xffu], rgb[(v >> 16) & 0xffu],
                       lut[256 + (v >> 24)]);
}

// Up to N textures that sample alike (the same level sizes and sampler: the CPU's
// Texture::alike), by their index in the texture table; a slot < 0 has none, and the first
// present one leads. Their filtered values, one per slot.
template <int N>
struct RxmSlots {
    int id[N];
    __device__ __forceinline__ int lead() const {
        int l = id[0];
#pragma unroll
        for (int k = 1; k < N; k++) l = l >= 0 ? l : id[k];
        return l;
    }
};
template <int N>
struct RxmTexels {
    float4 v[N];
};

// Level `level` of the textures of `slots` filtered at (u, v): the texel positions and weights
// are worked out once, from the lead, and read in each texture (the CPU's Texture::filtered over
// several textures: the same values as one by one). Sampling is called from many places of the
// raster kernels (alpha tests, the surface's textures, blending); kept out of line, its code
// exists once: inlined, the tile kernel grew to 88,000 instructions and its warps stalled on
// instruction fetch 40% of the time (ncu, Sponza).
template <int N, bool kAlpha>
__device__ __noinline__ RxmTexels<N> rxm_filtered(const unsigned* __restrict__ texels,
                                                  const RxpLevel* __restrict__ levels,
                                                  const float* __restrict__ lut,
                                                  const RxpTexture* __restrict__ textures,
                                                  RxmSlots<N> slots, unsigned level, float u,
                                                  float v, bool linear) {
    const RxpTexture t = textures[slots.lead()];
    const RxpLevel l = levels[t.first_level + level];
    if (!(isfinite(u) && isfinite(v))) {
        u = 0.0f;
        v = 0.0f;
    }
    const float x = u * (float)l.width, y = v * (float)l.height;
    const unsigned ws = RXM_WRAP_S(t.sampler), wt = RXM_WRAP_T(t.sampler);
    // the texels read, as offsets in the level: a, or a b over c d with weights fx, fy
    unsigned long long a, b = 0, c = 0, d = 0;
    float fx = 0.0f, fy = 0.0f;
    if (!linear) {
        a = (unsigned long long)rxm_wrap(rxm_floor(y), l.height, wt) * l.width +
            rxm_wrap(rxm_floor(x), l.width, ws);
    } else {
        const float xs = x - 0.5f, ys = y - 0.5f;
        unsigned xa, xb, ya, yb;
        if (fabsf(xs) < 1073741824.0f && fabsf(ys) < 1073741824.0f && l.width <= 0x10000u &&
            l.height <= 0x10000u) {
            // (nearly always) 32-bit texel coordinates: the same texels as the 64-bit path below
            // in half the integer instructions
            const int x0 = (int)floorf(xs), y0 = (int)floorf(ys);
            fx = xs - (float)x0;
            fy = ys - (float)y0;
            xa = rxm_wrap32(x0, l.width, ws);
            xb = rxm_wrap32(x0 + 1, l.width, ws);
            ya = rxm_wrap32(y0, l.height, wt);
            yb = rxm_wrap32(y0 + 1, l.height, wt);
        } else {
            const long long x0 = rxm_floor(xs), y0 = rxm_floor(ys);
            fx = xs - (float)x0;
            fy = ys - (float)y0;
            xa = rxm_wrap(x0, l.width, ws);
            xb = rxm_wrap(x0 + 1, l.width, ws);
            ya = rxm_wrap(y0, l.height, wt);
            yb = rxm_wrap(y0 + 1, l.height, wt);
        }
        const unsigned long long ra = (unsigned long long)ya * l.width;
        const unsigned long long rb = (unsigned long long)yb * l.width;
        a = ra + xa;
        b = ra + xb;
        c = rb + xa;
        d = rb + xb;
    }
    RxmTexels<N> out;
#pragma unroll
    for (int k = 0; k < N; k++) {
        out.v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (slots.id[k] < 0) continue;
        const RxpTexture tk = textures[slots.id[k]];
        const unsigned* __restrict__ p = texels + levels[tk.first_level + level].offset;
        const bool srgb = tk.srgb != 0;
        if (!linear) {
            out.v[k] = rxm_unpack<kAlpha>(__ldg(p + a), lut, srgb);
            continue;
        }
        const float4 top = rxm_lerp4(rxm_unpack<kAlpha>(__ldg(p + a), lut, srgb),
                                     rxm_unpack<kAlpha>(__ldg(p + b), lut, srgb), fx);
        const float4 bottom = rxm_lerp4(rxm_unpack<kAlpha>(__ldg(p + c), lut, srgb),
                                        rxm_unpack<kAlpha>(__ldg(p + d), lut, srgb), fx);
        out.v[k] = rxm_lerp4(top, bottom, fy);
    }
    return out;
}

// The CPU's Texture::sample_alike: the textures of `slots` (alike; kAlpha: their alphas only)
// sampled at uv, the level of detail log2 of the longer screen step in texels of the lead's
// level 0; the level choice is made once for all of them.
template <int N, bool kAlpha>
__device__ __forceinline__ RxmTexels<N> rxm_sample_alike(const unsigned* __restrict__ texels,
                                                      const RxpLevel* __restrict__ levels,
                                                      const float* __restrict__ lut,
                                                      const RxpTexture* __restrict__ textures,
                                                      RxmSlots<N> slots, float2 uv, float2 dx,
                                                      float2 dy) {
    const RxpTexture t = textures[slots.lead()];
    const RxpLevel base = levels[t.first_level];
    const float sw = (float)base.width, sh = (float)base.height;
    const float ax = dx.x * sw, ay = dx.y * sh, bx = dy.x * sw, by = dy.y * sh;
    const float rho = fmaxf(sqrtf(ax * ax + ay * ay), sqrtf(bx * bx + by * by));
    // (-infinity without a footprint; NVRTC has no INFINITY macro)
    const float lod = rho > 0.0f ? log2f(rho) : __int_as_float(0xff800000);
    const unsigned s = t.sampler;
    // the levels read and the second one's weight (0: the first alone)
    unsigned l0 = 0, l1 = 0;
    float f = 0.0f;
    bool linear = s & RXM_MIN_LINEAR;
    if (isnan(lod) || lod <= 0.0f) {
        linear = s & RXM_MAG_LINEAR;
    } else if (RXM_MIPMAP(s) == 1) {
        l0 = (unsigned)fminf(floorf(lod + 0.5f), (float)(t.levels - 1));
    } else if (RXM_MIPMAP(s) != 0) {
        const float lc = fminf(lod, (float)(t.levels - 1));
        const float lf = floorf(lc);
        f = lc - lf;
        l0 = (unsigned)lf;
        l1 = min(l0 + 1u, t.levels - 1u);
    }
    // (the levels worked out first and two calls after, not a call in each case: one copy of
    // the filter's code in the kernel instead of two)
    RxmTexels<N> a = rxm_filtered<N, kAlpha>(texels, levels, lut, textures, slots, l0, uv.x, uv.y,
                                             linear);
    if (f == 0.0f) return a;
    const RxmTexels<N> b = rxm_filtered<N, kAlpha>(texels, levels, lut, textures, slots, l1, uv.x,
                                                   uv.y, linear);
#pragma unroll
    for (int k = 0; k < N; k++) {
        // the CPU's a + (b - a) * f
        const float4 p = a.v[k], q = b.v[k];
        a.v[k] = make_float4(p.x + (q.x - p.x) * f, p.y + (q.y - p.y) * f, p.z + (q.z - p.z) * f,
                             p.w + (q.w - p.w) * f);
    }
    return a;
}

// The coordinates a material's use of a texture samples at, and their derivatives, transformed
// (the CPU's TextureRef::coords).
__device__ __forceinline__ void rxm_coords(const RxpTexUse& u, float2& uv, float2& dx,
                                           float2& dy) {
    if (u.transformed) {
        const float* m = u.m;
        uv = make_float2(m[0] * uv.x + m[2] * uv.y + m[4], m[1] * uv.x + m[3] * uv.y + m[5]);
        dx = make_float2(m[0] * dx.x + m[2] * dx.y, m[1] * dx.x + m[3] * dx.y);
        dy = make_float2(m[0] * dy.x + m[2] * dy.y, m[1] * dy.x + m[3] * dy.y);
    }
}

// A material's use of a texture (TextureRef::sample): transformed coordinates, then the texture
// (kAlpha: its alpha only). Inlined, the level choice with it: the alpha test's sampling sits
// in the tile kernel's inner loop, where a call costs.
template <bool kAlpha = false>
__device__ __forceinline__ float4 rxm_sample(const RxpMaterials& mt, const RxpTexUse& u,
                                             float2 uv, float2 dx, float2 dy) {
    rxm_coords(u, uv, dx, dy);
    return rxm_sample_alike<1, kAlpha>(mt.texels, mt.levels, mt.to_linear, mt.textures,
                                       RxmSlots<1>{{u.texture}}, uv, dx, dy)
        .v[0];
}
