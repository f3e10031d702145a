// The raster stage's tiles (after raster_bin.cu): each tile's records rasterised into 64-bit
// depth keys, and each pixel's visible fragment shaded (the resolve).

// ---- per-tile rasterisation and shading ----------------------------------------------------

// Whether a fragment at pixel (i, j) and depth z passes its draw's alpha test (`masked`: the
// draw, null when its material has none; `m`: its triangle's data). A fragment already behind
// the pixel's key (`key`, which other threads lower meanwhile) would lose the depth test anyway,
// so its texture is not sampled. The key is read by one 64-bit load (single-copy atomic when
// aligned; a stale, larger key only costs a sample): an atomicAdd of 0 was a compare-and-swap
// loop, shared memory having no 64-bit atomics of its own.
__device__ __forceinline__ bool rxp_keep(const RxpMaterials& mt, const RxpDraw* masked,
                                         const RxmMaskTri& m, const RasterParams& p, int i,
                                         int j, float z, unsigned long long* key) {
    if (!masked) return true;
    if ((*reinterpret_cast<volatile unsigned long long*>(key) >> 32) < rxp_ordered(z)) return false;
    return rxm_mask_at(mt, *masked, m, p.width, p.height, i, j);
}

// The draw whose alpha test `t`'s fragments take, or null.
__device__ __forceinline__ const RxpDraw* rxp_masked(const RxpMaterials& mt, const SetupTri& t) {
    return (t.flags & RXP_F_MASK) ? &mt.draws[t.flags >> RXP_F_DRAW_SHIFT] : nullptr;
}

// The pixels first, first + stride, ... of a box of bw pixels per row from (x0, y0): the edge
// values there are e0 plus multiples of the steps, in integers of type I (which the caller made
// sure hold every one of them exactly).
template <typename I>
__device__ __forceinline__ unsigned rxp_box_pixels(const SetupTri& t, int x0, int y0, int bw,
                                                   int n, const I e0[3], const I sx[3],
                                                   const I sy[3], int tx, int ty, int first,
                                                   int stride, unsigned long long* keys,
                                                   const RxpMaterials& mt, const RasterParams& p,
                                                   const RxpDraw* masked, const RxmMaskTri& m) {
    const float inv_area = 1.0f / (float)t.area, inv_bw = __frcp_rn((float)bw);
    unsigned frags = 0;
    for (int q = first; q < n; q += stride) {
        // q / bw by the reciprocal: (q + 0.5) / bw lies at least 1/64 from an integer, far
        // beyond the product's rounding error for q < 1024
        const int dj = (int)(((float)q + 0.5f) * inv_bw), di = q - dj * bw;
        const int i = x0 + di, j = y0 + dj;
        I e[3];
        for (int k = 0; k < 3; k++) e[k] = e0[k] + (I)di * sx[k] + (I)dj * sy[k];
        if ((e[0] | e[1] | e[2]) >= 0) {
            const float z = rxp_depth(t, e, inv_area);
            unsigned long long* k = &keys[(j - ty) * RXP_TILE + (i - tx)];
            if (z < 1.0f && rxp_keep(mt, masked, m, p, i, j, z, k)) {
                const unsigned long long key = (unsigned long long)rxp_ordered(z) << 32 | t.tri;
                const unsigned long long old = atomicMin(k, key);
                frags += key < old;
            }
        }
    }
    return frags;
}

// The lanes of a warp scan the pixels of triangle t's box within the tile (lane, lane + 32, ...;
// `first` the lane, `stride` 32). The edge values are
// 64-bit integers in general; where every value of the box fits 32 bits (triangles up to about
// 180 pixels across), 32-bit arithmetic gives the same integers with fewer instructions.
__device__ __forceinline__ unsigned rxp_raster_box(const SetupTri& t, int tx, int ty, int tw,
                                                   int th, int first, int stride,
                                                   unsigned long long* keys,
                                                   const RxpMaterials& mt, const RasterParams& p) {
    const RxpDraw* masked = rxp_masked(mt, t);
    RxmMaskTri m;
    if (masked) rxm_mask_setup(mt, *masked, t.tri - masked->tri_base, m);
    const int x0 = max((int)t.bbox[0], tx), y0 = max((int)t.bbox[1], ty);
    const int x1 = min((int)t.bbox[2], tx + tw - 1), y1 = min((int)t.bbox[3], ty + th - 1);
    const int bw = x1 - x0 + 1, bh = y1 - y0 + 1, n = bw * bh;
    long long e0[3], sx[3], sy[3];
    rxp_edges(t, (long long)x0 * RXP_ONE + RXP_HALF, (long long)y0 * RXP_ONE + RXP_HALF, e0);
    rxp_edge_steps(t, sx, sy);
    bool narrow = true;
    for (int k = 0; k < 3; k++)
        narrow = narrow && llabs(e0[k]) + bw * llabs(sx[k]) + bh * llabs(sy[k]) < 0x7fffffffll;
    if (narrow) {
        const int e32[3] = {(int)e0[0], (int)e0[1], (int)e0[2]};
        const int sx32[3] = {(int)sx[0], (int)sx[1], (int)sx[2]};
        const int sy32[3] = {(int)sy[0], (int)sy[1], (int)sy[2]};
        return rxp_box_pixels(t, x0, y0, bw, n, e32, sx32, sy32, tx, ty, first, stride, keys, mt,
                              p, masked, m);
    }
    return rxp_box_pixels(t, x0, y0, bw, n, e0, sx, sy, tx, ty, first, stride, keys, mt, p, masked,
                          m);
}

__device__ __forceinline__ float rxp_rsqrt_len(float x, float y, float z) {
    return rsqrtf(fmaxf(x * x + y * y + z * z, 1e-30f));
}

__device__ __forceinline__ unsigned rxp_pack_lut(const unsigned char* lut, float r, float g,
                                                 float b) {
    auto q = [&](float x) {
        return (unsigned)lut[(int)(fminf(fmaxf(x, 0.0f), 1.0f) * 4095.0f + 0.5f)];
    };
    return q(r) | q(g) << 8 | q(b) << 16 | 0xff000000u;
}

// The fragment shader (the CPU's FragmentShader::shade).
__device__ unsigned rxp_shade(const RasterParams& p, const unsigned char* lut, const float a[8],
                              float view_z, bool front, float4 base) {
    float nx = front ? a[3] : -a[3], ny = front ? a[4] : -a[4], nz = front ? a[5] : -a[5];
    float s = rxp_rsqrt_len(nx, ny, nz);
    nx *= s;
    ny *= s;
    nz *= s;
    const float lx = p.to_light[0], ly = p.to_light[1], lz = p.to_light[2];
    switch (p.shading) {
        case 0: {
            float diffuse = fmaxf(nx * lx + ny * ly + nz * lz, 0.0f);
            float vx = p.eye[0] - a[0], vy = p.eye[1] - a[1], vz = p.eye[2] - a[2];
            float vs = rxp_rsqrt_len(vx, vy, vz);
            vx *= vs;
            vy *= vs;
            vz *= vs;
            float hx = lx + vx, hy = ly + vy, hz = lz + vz;
            float hs = rxp_rsqrt_len(hx, hy, hz);
            hx *= hs;
            hy *= hs;
            hz *= hs;
            float spec = fmaxf(nx * hx + ny * hy + nz * hz, 0.0f);
            for (int i = 0; i < 5; i++) spec *= spec;
            spec = diffuse > 0.0f ? 0.25f * spec : 0.0f;
            float r = base.x * (p.ambient + diffuse * p.light_color[0]) + p.light_color[0] * spec;
            float g = base.y * (p.ambient + diffuse * p.light_color[1]) + p.light_color[1] * spec;
            float b = base.z * (p.ambient + diffuse * p.light_color[2]) + p.light_color[2] * spec;
            return rxp_pack_lut(lut, r, g, b);
        }
        case 1: {
            auto q = [](float x) { return (unsigned)(fminf(fmaxf(x, 0.0f), 1.0f) * 255.0f + 0.5f); };
            return q(nx * 0.5f + 0.5f) | q(ny * 0.5f + 0.5f) << 8 | q(nz * 0.5f + 0.5f) << 16 |
                   0xff000000u;
        }
        case 2: {
            float t = 1.0f - fminf(fmaxf((view_z - p.near_z) / (p.far_z - p.near_z), 0.0f), 1.0f);
            unsigned q = (unsigned)(t * 255.0f + 0.5f);
            return q | q << 8 | q << 16 | 0xff000000u;
        }
        case 3: {
            float light = 0.45f + 0.55f * fabsf(nx * lx + ny * ly + nz * lz);
            float c = fminf(fmaxf((a[6] - 1.0f) / 5.0f, 0.0f), 1.0f);
            float r = c < 0.5f ? 2.0f * c : 1.0f, g = c < 0.5f ? 1.0f : 2.0f - 2.0f * c;
            return rxp_pack_lut(lut, r * light, g * light, 0.0f);
        }
        default: {
            // the CPU's patch_value_color: hue, and halfway to white in a ribbon
            float light = 0.45f + 0.55f * fabsf(nx * lx + ny * ly + nz * lz);
            const bool ribbon = a[7] >= 1.5f;
            float h = fminf(fmaxf(ribbon ? a[7] - 2.0f : a[7], 0.0f), 1.0f) * 6.0f;
            const float s = 0.85f, v = 0.9f;
            float i = fminf(floorf(h), 5.0f);
            float f = h - i;
            float pa = v * (1.0f - s), pb = v * (1.0f - s * f), pc = v * (1.0f - s * (1.0f - f));
            float r, g, b;
            switch ((int)i) {
                case 0: r = v; g = pc; b = pa; break;
                case 1: r = pb; g = v; b = pa; break;
                case 2: r = pa; g = v; b = pc; break;
                case 3: r = pa; g = pb; b = v; break;
                case 4: r = pc; g = pa; b = v; break;
                default: r = v; g = pa; b = pb; break;
            }
            if (ribbon) {
                r = (r + 1.0f) * 0.5f;
                g = (g + 1.0f) * 0.5f;
                b = (b + 1.0f) * 0.5f;
            }
            return rxp_pack_lut(lut, r * light, g * light, b * light);
        }
    }
}

// The depth key of a pixel of the target a frame is drawn over (RasterParams::over_target): its
// depth, and the lowest source triangle, so that a fragment at the same depth does not win it.
__device__ __forceinline__ unsigned long long rxp_target_key(float z) {
    return (unsigned long long)rxp_ordered(z) << 32;
}

// The colour and depth of pixel (x, y) from its depth key (the nearest fragment's depth and
// source triangle, or RXP_KEY_EMPTY): the background, the material path at the pixel centre, or
// the fragment shader with the covering piece's interpolated varyings.
__device__ void rxp_resolve_pixel(const SetupTri* __restrict__ records,
                                  const unsigned* __restrict__ first,
                                  const unsigned* __restrict__ tflags,
                                  const float4* __restrict__ draw_colors,
                                  const unsigned char* __restrict__ lut, const RasterParams& p,
                                  const RxpMaterials& mt, unsigned long long key, int x, int y,
                                  unsigned* __restrict__ color, float* __restrict__ depth) {
    const size_t at = (size_t)y * p.width + x;
    // (a key a fragment would share with the target's is the target's: what is there stays)
    if (p.over_target && key == rxp_target_key(depth[at])) return;
    if (key == RXP_KEY_EMPTY) {
        color[at] = p.background;
        depth[at] = 1.0f;
        return;
    }
    const unsigned tri = (unsigned)key;
    const long long px = (long long)x * RXP_ONE + RXP_HALF;
    const long long py = (long long)y * RXP_ONE + RXP_HALF;
    long long e[3] = {-1, -1, -1};
    // the covering record's flags, and the record (r) where the path below needs it
    unsigned flags = 0, r = RXP_NONE;
    // a triangle the fused geometry stage rasterised has no record: set up again from its
    // corners (as rxp_setup would have), unless the material path needs only its flags
    SetupTri fused;
    const SetupTri* rec = nullptr;
    // the triangle's flags, loaded once for both uses below
#if RXP_TFLAGS
    const bool want_tf = p.fused || p.shading == 0;
#else
    const bool want_tf = p.fused;
#endif
    const unsigned tf = want_tf ? tflags[tri] : 0u;
    if (p.fused && (tf & RXP_F_FUSED)) {
        flags = tf;
        const RxpDraw& d = mt.draws[tf >> RXP_F_DRAW_SHIFT];
        if (!(p.shading == 0 && d.material >= 0)) {
            rxp_setup_again(d, tri, p, flags, fused);
            rec = &fused;
            rxp_edges(fused, px, py, e);
        }
    }
#if RXP_TFLAGS
    // a whole triangle of a material draw (most pixels of a lit frame): its draw and side from
    // the triangle's flags, one load after the key instead of two (its first record, then the
    // record's flags), and the record itself unread
    if (p.shading == 0 && !flags) {
        if ((tf & RXP_F_LIVE) && ((tf >> RXP_F_PIECES_SHIFT) & 7u) == 1 &&
            mt.draws[tf >> RXP_F_DRAW_SHIFT].material >= 0)
            flags = tf;
    }
#endif
    if (!flags) {
        const unsigned r0 = first[tri];
        // the source triangle's record, or for a clipped one, the piece that covers the pixel
        // (the material path needs no edge values of a whole triangle)
        const unsigned pieces = (records[r0].flags >> RXP_F_PIECES_SHIFT) & 7u;
        const bool material =
            p.shading == 0 && mt.draws[records[r0].flags >> RXP_F_DRAW_SHIFT].material >= 0;
        r = r0;
        for (unsigned k = 0; k < pieces && !(material && pieces == 1); k++) {
            if (!(records[r0 + k].flags & RXP_F_LIVE)) continue;
            r = r0 + k;
            rxp_edges(records[r], px, py, e);
            if ((e[0] | e[1] | e[2]) >= 0) break;
        }
        flags = records[r].flags;
        rec = &records[r];
    }
    const unsigned draw = flags >> RXP_F_DRAW_SHIFT;
    const bool front = (flags & RXP_F_FRONT) != 0;
    depth[at] = rxp_unordered((unsigned)(key >> 32));
    const RxpDraw& d = mt.draws[draw];
    if (p.shading == 0 && d.material >= 0) {
        // the material path reads the source triangle (the key's) at the pixel centre
        const float4 c = rxm_shade(mt, d, tri - d.tri_base, p.width, p.height, x, y, front,
                                   p.eye, p.ambient, p.light_color);
        color[at] = rxp_pack_lut(lut, c.x, c.y, c.z);
        return;
    }
    // (not a material draw: the record was read, or set up again, above)
    const SetupTri& t = *rec;
    const float inv_area = 1.0f / (float)t.area;
    const float l1 = (float)e[1] * inv_area, l2 = (float)e[2] * inv_area;
    const float w0 = t.inv_w[0], w1 = t.inv_w[1] - t.inv_w[0], w2 = t.inv_w[2] - t.inv_w[0];
    const float view_z = 1.0f / (w0 + w1 * l1 + w2 * l2);
    float a[8];
    for (int c = 0; c < 8; c++) {
        const float v0 = t.var[0][c];
        a[c] = (v0 + (t.var[1][c] - v0) * l1 + (t.var[2][c] - v0) * l2) * view_z;
    }
    color[at] = rxp_shade(p, lut, a, view_z, front, draw_colors[draw]);
}

// The pixels of the tiles rxp_raster left to it (`deferred`), one thread each: their keys in
// `gkeys` resolved as there.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK, RXP_RESOLVE_BLOCKS)
    rxp_resolve(const SetupTri* __restrict__ records, const unsigned* __restrict__ first,
                const unsigned* __restrict__ tflags,
                const unsigned* __restrict__ deferred, const unsigned long long* __restrict__ gkeys,
                const float4* __restrict__ draw_colors, const unsigned char* __restrict__ lut,
                RasterParams p, RxpMaterials mt, unsigned* __restrict__ color,
                float* __restrict__ depth) {
    rxp_after_prior();
#if RXP_RESOLVE_2D
    // four blocks per tile, a quarter (32 x 8 pixels) each, a warp per 4 x 8 pixels: a warp's
    // pixels lie together on the screen, on fewer triangles and closer in their textures than a
    // row's (the squarest warp shape, 4 x 8, resolves fastest)
    const unsigned tile = blockIdx.x >> 2, quarter = blockIdx.x & 3;
    if (tile >= (unsigned)(p.tiles_x * p.tiles_y) || !deferred[tile]) return;
    const unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31, wh = 32 / RXP_RESOLVE_WX;
    const int x = (int)(tile % p.tiles_x) * RXP_TILE +
                  (int)((w % wh) * RXP_RESOLVE_WX + lane % RXP_RESOLVE_WX);
    const int y = (int)(tile / p.tiles_x) * RXP_TILE +
                  (int)(quarter * 8 + (w / wh) * wh + lane / RXP_RESOLVE_WX);
    if (x >= p.width || y >= p.height) return;
    const unsigned long long k = (unsigned long long)y * p.width + x;
#else
    const unsigned long long k = (unsigned long long)blockIdx.x * RXP_RBLOCK + threadIdx.x;
    if (k >= (unsigned long long)p.width * p.height) return;
    const int x = (int)(k % p.width), y = (int)(k / p.width);
    if (!deferred[(y >> RXP_TILE_SHIFT) * p.tiles_x + (x >> RXP_TILE_SHIFT)]) return;
#endif
    rxp_resolve_pixel(records, first, tflags, draw_colors, lut, p, mt, gkeys[k], x, y, color,
                      depth);
}

// Composites the blended triangles of a tile over its shaded opaque pixels (lit mode), one
// triangle at a time in submission order (the source triangle, then its pieces), as the CPU's
// blend pass does: each is rasterised against the opaque depth without writing it, and every
// fragment in front is shaded and blended in linear light. The tile's bins are unordered, so each
// step finds the next record by a block-wide minimum over them (blended triangles are few: the
// pipeline submits them as whole objects after the opaque ones). Returns the fragments composited.
__device__ unsigned rxp_blend_tile(const SetupTri* __restrict__ records,
                                   const unsigned* __restrict__ first,
                                   const unsigned* __restrict__ bins, unsigned start, unsigned end,
                                   const unsigned long long* keys, const RxpMaterials& mt,
                                   const unsigned char* __restrict__ lut, const RasterParams& p,
                                   int tx, int ty, int tw, int th, unsigned* __restrict__ color) {
    __shared__ unsigned long long next;
    unsigned frags = 0;
    unsigned long long after = 0;
    for (;;) {
        if (threadIdx.x == 0) next = RXP_KEY_EMPTY;
        __syncthreads();
        unsigned long long mine = RXP_KEY_EMPTY;
        for (unsigned e = start + threadIdx.x; e < end; e += RXP_RBLOCK) {
            const unsigned r = bins[e];
            const SetupTri& t = records[r];
            if (!(t.flags & RXP_F_BLEND)) continue;
            // submission order: the source triangle, then the piece
            const unsigned long long k = (unsigned long long)t.tri << 32 | (r - first[t.tri]);
            if (k >= after && k < mine) mine = k;
        }
        atomicMin(&next, mine);
        __syncthreads();
        const unsigned long long k = next;
        if (k == RXP_KEY_EMPTY) break;
        after = k + 1;
        const SetupTri& t = records[first[(unsigned)(k >> 32)] + (unsigned)k];
        const RxpDraw& d = mt.draws[t.flags >> RXP_F_DRAW_SHIFT];
        const bool front = (t.flags & RXP_F_FRONT) != 0;
        const int x0 = max((int)t.bbox[0], tx), y0 = max((int)t.bbox[1], ty);
        const int x1 = min((int)t.bbox[2], tx + tw - 1), y1 = min((int)t.bbox[3], ty + th - 1);
        const int bw = x1 - x0 + 1, n = x0 <= x1 && y0 <= y1 ? bw * (y1 - y0 + 1) : 0;
        const float inv_area = 1.0f / (float)t.area;
        for (int q = threadIdx.x; q < n; q += RXP_RBLOCK) {
            const int i = x0 + q % bw, j = y0 + q / bw;
            long long e[3];
            rxp_edges(t, (long long)i * RXP_ONE + RXP_HALF, (long long)j * RXP_ONE + RXP_HALF, e);
            if ((e[0] | e[1] | e[2]) < 0) continue;
            const float z = rxp_depth(t, e, inv_area);
            const unsigned long long key = keys[(j - ty) * RXP_TILE + (i - tx)];
            const float opaque = key == RXP_KEY_EMPTY ? 1.0f : rxp_unordered((unsigned)(key >> 32));
            if (!(z < opaque)) continue;
            const float4 c = rxm_shade(mt, d, t.tri - d.tri_base, p.width, p.height, i, j, front,
                                       p.eye, p.ambient, p.light_color);
            const size_t at = (size_t)j * p.width + i;
            const unsigned dst = color[at];
            const float a = rxm_clamp01(c.w), ia = 1.0f - a;
            color[at] = rxp_pack_lut(lut, c.x * a + mt.to_linear[dst & 0xffu] * ia,
                                     c.y * a + mt.to_linear[(dst >> 8) & 0xffu] * ia,
                                     c.z * a + mt.to_linear[(dst >> 16) & 0xffu] * ia);
            frags++;
        }
        // this triangle's pixels are written before the next one reads them
        __syncthreads();
    }
    return frags;
}

// The warp works through `list` (n records) with the block's other warps: it takes 32 / kLanes
// of them at a time (`next`), kLanes lanes on each, which take its box's pixels in turn.
// (kLanes divides 32: else the warp's last lanes would take a record the next grab takes too.)
template <int kLanes>
__device__ __forceinline__ unsigned rxp_raster_list(const SetupTri* __restrict__ records,
                                                    const unsigned* list, unsigned n,
                                                    unsigned* next, int tx, int ty, int tw, int th,
                                                    unsigned long long* keys,
                                                    const RxpMaterials& mt, const RasterParams& p) {
    static_assert(kLanes >= 1 && kLanes <= 32 && 32 % kLanes == 0, "lanes per record divide 32");
    const unsigned lane = threadIdx.x & 31, g = lane / kLanes;
    unsigned frags = 0;
    for (;;) {
        unsigned b = 0;
        if (lane == 0) b = atomicAdd(next, 32u / kLanes);
        b = __shfl_sync(0xffffffffu, b, 0);
        if (b >= n) break;
        if (b + g < n)
            frags += rxp_raster_box(records[list[b + g]], tx, ty, tw, th, lane % kLanes, kLanes,
                                    keys, mt, p);
    }
    return frags;
}

// One block per tile: rasterise the tile's triangles into shared-memory depth keys (alpha-tested
// ones keep only the fragments that pass; blended ones wait), then shade each pixel's visible
// fragment and write colour and depth, then composite the blended triangles.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK, RXP_MIN_BLOCKS)
    rxp_raster(const SetupTri* __restrict__ records, const unsigned* __restrict__ first,
               const unsigned* __restrict__ tflags,
               const unsigned* __restrict__ offsets, const unsigned* __restrict__ ends,
               const unsigned* __restrict__ bins, const unsigned* __restrict__ order,
               const float4* __restrict__ draw_colors, const unsigned char* __restrict__ lut,
               RasterParams p, RxpMaterials mt, unsigned* __restrict__ color,
               float* __restrict__ depth, unsigned long long* counters,
               unsigned* __restrict__ deferred, unsigned long long* __restrict__ gkeys,
               const unsigned long long* __restrict__ fkeys) {
    rxp_after_prior();
    __shared__ unsigned long long keys[RXP_TILE * RXP_TILE];
    // a chunk's small triangles (RXP_SMALL_LANES lanes each) and bigger ones (a warp each),
    // their counts and the next ones the warps take
    __shared__ unsigned small[RXP_LIST], wide[RXP_LIST];
    __shared__ unsigned nsmall, nwide, next_small, next_wide, nblend, nmasked;
    // the tile (busiest first), and which of its slices of records when it is split
    const unsigned item = RXP_TILE_ORDER ? order[blockIdx.x]
                          : blockIdx.x < (unsigned)(p.tiles_x * p.tiles_y) ? blockIdx.x
                                                                           : RXP_ITEM_NONE;
    if (item == RXP_ITEM_NONE) return;
    const unsigned tile = item & 0xfffffu, slice = (item >> 20) & 63u, slices = (item >> 26) + 1;
    const int tx = (int)(tile % p.tiles_x) * RXP_TILE, ty = (int)(tile / p.tiles_x) * RXP_TILE;
    const int tw = min(RXP_TILE, p.width - tx), th = min(RXP_TILE, p.height - ty);
    // the keys start empty, or in a fused frame (`fkeys`) with those the geometry stage wrote
    // for its small triangles (a split tile's slices start empty: they merge into those keys),
    // or drawn over the target with its depths
    for (int i = threadIdx.x; i < RXP_TILE * RXP_TILE; i += RXP_RBLOCK) {
        const int x = tx + i % RXP_TILE, y = ty + i / RXP_TILE;
        const bool inside = x < p.width && y < p.height;
        keys[i] = fkeys && slices == 1 && inside ? fkeys[(size_t)y * p.width + x]
                  : p.over_target && inside      ? rxp_target_key(depth[(size_t)y * p.width + x])
                                                 : RXP_KEY_EMPTY;
    }
    if (threadIdx.x == 0) nblend = nmasked = 0;
    // (a bin holds what rxp_bin_fill put there: up to its cursor, at most what setup counted)
    unsigned start = offsets[tile], end = ends[tile];
    if (end > p.bin_capacity) end = p.bin_capacity;
    if (start > end) start = end;
    if (slices > 1) {
        const unsigned long long n = end - start;
        end = start + (unsigned)(n * (slice + 1) / slices);
        start += (unsigned)(n * slice / slices);
    }
    unsigned frags = 0;
    // Two passes over the tile's records: the opaque ones, then (when there are any) the
    // alpha-tested ones, whose fragments then mostly find the opaque surface in front already in
    // the keys and skip their texture (rxp_keep). The keys do not depend on the order.
    const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            __syncthreads();
            if (nmasked == 0) break;
        }
        // up to RXP_LIST records at a time: sorted into the small and the bigger triangles
        // (one barrier), then the warps take 32 / RXP_SMALL_LANES small ones and then one bigger
        // one (all lanes) at a time until none is left (one barrier): a warp whose triangles
        // were quick takes more (with the lists made and worked through 256 records at a time,
        // and the small ones by the thread that read them, the warps waited at barriers a
        // fifth of the kernel's time: ncu on Sponza)
        for (unsigned chunk = start; chunk < end; chunk += RXP_LIST) {
            if (threadIdx.x == 0) nsmall = nwide = next_small = next_wide = 0;
            __syncthreads();
            const unsigned stop = min(end, chunk + RXP_LIST);
            for (unsigned base = chunk + warp * 32; base < stop; base += RXP_RBLOCK) {
                unsigned r = 0;
                int kind = 0;  // 1 small, 2 bigger
                if (base + lane < stop) {
                    r = bins[base + lane];
                    const SetupTri& t = records[r];
                    const int x0 = max((int)t.bbox[0], tx), y0 = max((int)t.bbox[1], ty);
                    const int x1 = min((int)t.bbox[2], tx + tw - 1);
                    const int y1 = min((int)t.bbox[3], ty + th - 1);
                    const bool masked = (t.flags & RXP_F_MASK) != 0;
                    if (pass == 0 && masked) atomicAdd(&nmasked, 1u);
                    if (t.flags & RXP_F_BLEND) {
                        if (pass == 0) atomicAdd(&nblend, 1u);
                    } else if (masked != (pass == 1)) {
                        // (the other pass's)
                    } else if (x0 <= x1 && y0 <= y1) {
                        kind = (x1 - x0 + 1) * (y1 - y0 + 1) <= RXP_SMALL ? 1 : 2;
                    }
                }
                // one shared atomic per list and warp
                for (int k = 1; k <= 2; k++) {
                    const unsigned at = rxp_warp_append(k == 1 ? &nsmall : &nwide, kind == k);
                    if (kind == k) (k == 1 ? small : wide)[at] = r;
                }
            }
            __syncthreads();
            frags += rxp_raster_list<RXP_SMALL_LANES>(records, small, nsmall, &next_small, tx, ty,
                                                      tw, th, keys, mt, p);
            // (a warp on each bigger one: half-warps or less were far slower, 0.53 against 0.41
            // ms on Sponza, where big triangles crowd the tiles)
            frags += rxp_raster_list<32>(records, wide, nwide, &next_wide, tx, ty, tw, th, keys, mt,
                                         p);
            // everyone is done with this chunk's lists before they are reset
            __syncthreads();
        }
    }
    __syncthreads();
    // resolve: shade the visible fragment of every pixel, here, or (lit frames with materials,
    // `gkeys` not null, in tiles without blended triangles) in rxp_resolve, at more warps per SM
    // than this kernel's registers allow
    // (a split tile's slices defer: the host splits only frames without blending)
    const bool defer = gkeys != nullptr && p.shading == 0 && nblend == 0;
    if (threadIdx.x == 0) deferred[tile] = defer ? 1u : 0u;
    for (int l = threadIdx.x; l < RXP_TILE * RXP_TILE; l += RXP_RBLOCK) {
        const int i = l % RXP_TILE, j = l / RXP_TILE;
        if (i >= tw || j >= th) continue;
        const size_t at = (size_t)(ty + j) * p.width + (tx + i);
        if (slices > 1) {
            // merged with the other slices' into the keys rxp_bin_fill emptied
            if (keys[l] != RXP_KEY_EMPTY) atomicMin(&gkeys[at], keys[l]);
        } else if (defer)
            gkeys[at] = keys[l];
        else
            rxp_resolve_pixel(records, first, tflags, draw_colors, lut, p, mt, keys[l], tx + i,
                              ty + j,
                              color, depth);
    }
    if (nblend) {
        // (the resolve's colours are visible to the whole block after this barrier)
        __syncthreads();
        frags += rxp_blend_tile(records, first, bins, start, end, keys, mt, lut, p, tx, ty, tw,
                                th, reinterpret_cast<unsigned*>(color));
    }
    rxp_block_count(counters, RXP_C_FRAGMENTS, frags);
}
