// The raster stage on the GPU, side by side with the CPU reference (src/raster/): triangle setup
// (near-plane and guard-band clipping, back-face culling, 8-bit sub-pixel fixed point), binning of
// triangles to 32x32-pixel tiles, per-tile rasterisation with the top-left fill rule and a depth
// test, and deferred shading of the one visible fragment per pixel.
//
// Depth test. Within a tile, a pixel's nearest fragment is kept as one 64-bit key: the depth's
// bits (ordered as an unsigned integer) above the source triangle's submission index. atomicMin
// on the key keeps the nearest fragment and, among equally near ones, the earliest submitted, the
// CPU's `z < zbuf` in submission order, whatever order the tile's triangles arrive in. So binning
// needs no ordering and the image does not depend on scheduling.
//
// Every computation that decides coverage, depth or interpolation repeats the CPU's operations in
// the CPU's order (the program is compiled with --fmad=false), so coverage and depth are bit-exact
// and colours differ only where the shading's reciprocal square roots round differently.
//
// Buffers (sized by the host, which grows them and renders again when a count exceeds them):
// records (SetupTri), first (per input triangle: its first record), the setup lists (per draw:
// the triangles that survive classification, with their two counts), tile counts, offsets and
// cursors, bins (record ids per tile), counters (RXP_C_*).

#define RXP_TILE 32
#define RXP_TILE_SHIFT 5
#define RXP_ONE 256LL
#define RXP_HALF 128LL
#define RXP_GUARD_PX 32768.0f
#define RXP_NONE 0xffffffffu
#define RXP_KEY_EMPTY 0xffffffffffffffffull
// threads per block of every raster kernel
#define RXP_RBLOCK 256
// triangles covering at most RXP_SMALL pixels of a tile (their box within it) are rasterised by
// RXP_SMALL_LANES lanes each, which take the box's pixels in turn, larger ones by a warp (a few
// lanes share a small box's work without leaving most of a warp idle; giving the whole block
// to the largest boxes was slower)
#ifndef RXP_SMALL
#define RXP_SMALL 32
#endif
#ifndef RXP_SMALL_LANES
#define RXP_SMALL_LANES 2
#endif
// the tile kernel takes the tiles busiest first (1, rxp_bin_scan's order) or in screen order (0)
#ifndef RXP_TILE_ORDER
#define RXP_TILE_ORDER 1
#endif
// A tile with more than RXP_SPLIT_RECORDS records in a frame that allows it (lit with
// materials, nothing blended: RasterParams::split) is rasterised by several blocks, a slice of
// its records each (at most RXP_MAX_SLICES, RXP_MAX_EXTRA more blocks in the frame), which merge
// their depth keys into the frame's by atomicMin: one block on the frame's densest tile ran
// through most of the kernel while the other SMs idled (ncu on Sponza: the last SM active 20%
// longer than the average one).
#ifndef RXP_SPLIT_RECORDS
#define RXP_SPLIT_RECORDS 512
#endif
#define RXP_MAX_SLICES 16
#define RXP_MAX_EXTRA 1024
// an item of the tile kernel's order: the tile, its slice and its number of slices less one
#define RXP_ITEM(tile, s, n) ((tile) | (unsigned)(s) << 20 | (unsigned)((n) - 1) << 26)
#define RXP_ITEM_NONE 0xffffffffu
// records of a tile the tile kernel sorts into its lists at a time
#ifndef RXP_LIST
#define RXP_LIST 2048
#endif
// the resolve kernel's threads by tile quarters, a warp per RXP_RESOLVE_WX x (32 / that)
// pixels (1: 4, 8 or 16 wide), or by rows of the frame (0)
#ifndef RXP_RESOLVE_2D
#define RXP_RESOLVE_2D 1
#endif
#ifndef RXP_RESOLVE_WX
#define RXP_RESOLVE_WX 4
#endif
// the resolve's path for whole triangles of material draws through `tflags` (0: through their
// records, for measurement)
#ifndef RXP_TFLAGS
#define RXP_TFLAGS 1
#endif
// blocks of the resolve kernel per SM the compiler must fit (64 registers: it waits on texel
// loads, and more warps hide more of that than the few spills cost)
#ifndef RXP_RESOLVE_BLOCKS
#define RXP_RESOLVE_BLOCKS 4
#endif
// blocks of the tile kernel per SM the compiler must fit (its registers follow)
#ifndef RXP_MIN_BLOCKS
#define RXP_MIN_BLOCKS 2
#endif

// counters
#define RXP_C_CULLED 0
#define RXP_C_REJECTED 1
#define RXP_C_CLIPPED 2
#define RXP_C_RECORDS 3
#define RXP_C_BINNED 4
#define RXP_C_FRAGMENTS 5
#define RXP_C_RASTERIZED 6
// records whose boxes rxp_bin_fill left to rxp_bin_big
#define RXP_C_BIG 7
#define RXP_COUNTERS 8

// flags of a record
#define RXP_F_FRONT 1u
#define RXP_F_LIVE 2u
// pieces of the source triangle (on its first record): bits 2..4
#define RXP_F_PIECES_SHIFT 2
// the draw's material is alpha-tested (bit 5) or blended (bit 6: composited after the opaque
// triangles; the lit mode only): the host's `alpha_class`
#define RXP_F_ALPHA_SHIFT 5
#define RXP_F_MASK (1u << 5)
#define RXP_F_BLEND (1u << 6)
// the draw: bits 8..31
#define RXP_F_DRAW_SHIFT 8

// The frame's constants (the Rust `RasterParams`, byte for byte).
struct RasterParams {
    int width;
    int height;
    int tiles_x;
    int tiles_y;
    // 0 lit, 1 normals, 2 depth, 3 shading rate, 4 patches
    int shading;
    float to_light[3];
    float ambient;
    float light_color[3];
    float eye[3];
    float near_z;
    float far_z;
    unsigned background;
    unsigned record_capacity;
    unsigned bin_capacity;
    // whether dense tiles may be split over several blocks (RXP_SPLIT_RECORDS): only in lit
    // frames whose tiles all leave their keys to rxp_resolve (nothing blended)
    unsigned split;
};

// A triangle ready for rasterisation (the CPU's SetupTri): corners ordered so that area > 0.
// RXP_RECORD_WORDS 8-byte words (the host's RECORD_WORDS).
#define RXP_RECORD_WORDS 21
struct SetupTri {
    int x[3];
    int y[3];
    float z[3];
    float inv_w[3];
    long long area;
    unsigned short bbox[4];
    // submission index of the source triangle, over all draws of the frame
    unsigned tri;
    unsigned flags;
    // world position, normal, extra, padding; premultiplied by inv_w
    float var[3][8];
};
static_assert(sizeof(SetupTri) == RXP_RECORD_WORDS * 8, "a record is RXP_RECORD_WORDS words");

// ---- block-wide helpers (rxp_block_scan is in kernels/blocks.cuh) ----------------------------

// Adds each thread's `v` to counters[c] with one atomic per block.
__device__ __forceinline__ void rxp_block_count(unsigned long long* counters, int c, unsigned v) {
    unsigned total;
    rxp_block_scan(v, &total);
    if (threadIdx.x == 0 && total) atomicAdd(&counters[c], (unsigned long long)total);
}

// ---- triangle setup ------------------------------------------------------------------------

__device__ __forceinline__ unsigned rxp_outcode(float4 p) {
    return (unsigned)(p.x < -p.w) | (unsigned)(p.x > p.w) << 1 | (unsigned)(p.y < -p.w) << 2 |
           (unsigned)(p.y > p.w) << 3 | (unsigned)(p.z < 0.0f) << 4 | (unsigned)(p.z > p.w) << 5;
}

__device__ __forceinline__ int rxp_snap(float v) {
    return (int)(v + copysignf(0.5f, v));
}

__device__ __forceinline__ long long rxp_floor_div(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The geometric part of a setup record: snapped corners, depth, 1/w, area, bounding box.
struct SetupGeo {
    int x[3], y[3];
    float z[3], inv_w[3];
    long long area;
    unsigned short bbox[4];
    bool front;
    // whether corners 1 and 2 were swapped to make the area positive
    bool swapped;
};

// The CPU's `emit` up to the varyings: 0 kept, 1 culled, 2 rejected (covers no pixel centre).
// `cull` is the draw's: 0 none, 1 back, 2 front, with RXP_CULL_MIRRORED where the draw's model
// matrix mirrors, so that its front faces are those that wind clockwise on screen (the CPU's
// `Draw::mirrored`).
#define RXP_CULL_MIRRORED 4u
__device__ int rxp_emit_geo(const float4 v[3], const RasterParams& p, unsigned cull, SetupGeo& g) {
    const float w = (float)p.width, h = (float)p.height, scale = (float)RXP_ONE;
    g.area = 0;
    g.swapped = false;
    // a corner at w = 0 (the clip-space origin survives every clip plane) has no projection
    if (!(v[0].w > 0.0f && v[1].w > 0.0f && v[2].w > 0.0f)) return 2;
    for (int k = 0; k < 3; k++) {
        float iw = 1.0f / v[k].w;
        g.inv_w[k] = iw;
        g.x[k] = rxp_snap((v[k].x * iw * 0.5f + 0.5f) * w * scale);
        g.y[k] = rxp_snap((0.5f - v[k].y * iw * 0.5f) * h * scale);
        g.z[k] = v[k].z * iw;
    }
    long long area = ((long long)g.x[1] - g.x[0]) * ((long long)g.y[2] - g.y[0]) -
                     ((long long)g.x[2] - g.x[0]) * ((long long)g.y[1] - g.y[0]);
    g.front = (area < 0) != ((cull & RXP_CULL_MIRRORED) != 0);
    cull &= ~RXP_CULL_MIRRORED;
    bool keep = area != 0 && (cull == 0 || (cull == 1 && g.front) || (cull == 2 && !g.front));
    if (!keep) return 1;
    g.swapped = area < 0;
    g.area = area;
    if (g.swapped) {
        int t = g.x[1]; g.x[1] = g.x[2]; g.x[2] = t;
        t = g.y[1]; g.y[1] = g.y[2]; g.y[2] = t;
        float f = g.z[1]; g.z[1] = g.z[2]; g.z[2] = f;
        f = g.inv_w[1]; g.inv_w[1] = g.inv_w[2]; g.inv_w[2] = f;
        g.area = -area;
    }
    long long xmin = min(g.x[0], min(g.x[1], g.x[2])), xmax = max(g.x[0], max(g.x[1], g.x[2]));
    long long ymin = min(g.y[0], min(g.y[1], g.y[2])), ymax = max(g.y[0], max(g.y[1], g.y[2]));
    long long px0 = max(rxp_floor_div(xmin - RXP_HALF + RXP_ONE - 1, RXP_ONE), 0LL);
    long long px1 = min(rxp_floor_div(xmax - RXP_HALF, RXP_ONE), (long long)p.width - 1);
    long long py0 = max(rxp_floor_div(ymin - RXP_HALF + RXP_ONE - 1, RXP_ONE), 0LL);
    long long py1 = min(rxp_floor_div(ymax - RXP_HALF, RXP_ONE), (long long)p.height - 1);
    if (px0 > px1 || py0 > py1) return 2;
    g.bbox[0] = (unsigned short)px0;
    g.bbox[1] = (unsigned short)py0;
    g.bbox[2] = (unsigned short)px1;
    g.bbox[3] = (unsigned short)py1;
    return 0;
}

// Writes a record; `var` are the corners' varyings (not yet divided by w), in source order.
__device__ void rxp_write_record(SetupTri* r, const SetupGeo& g, int status, unsigned tri,
                                 unsigned flags, const float var[3][8]) {
    SetupTri t;
    for (int k = 0; k < 3; k++) {
        t.x[k] = g.x[k];
        t.y[k] = g.y[k];
        t.z[k] = g.z[k];
        t.inv_w[k] = g.inv_w[k];
    }
    t.area = g.area;
    t.tri = tri;
    if (status != 0) {
        // a dead piece of a clipped triangle: an empty box, never binned
        t.bbox[0] = 1;
        t.bbox[1] = 1;
        t.bbox[2] = 0;
        t.bbox[3] = 0;
        t.flags = flags;
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 8; i++) t.var[k][i] = 0.0f;
    } else {
        for (int i = 0; i < 4; i++) t.bbox[i] = g.bbox[i];
        t.flags = flags | RXP_F_LIVE | (g.front ? RXP_F_FRONT : 0u);
        // the CPU multiplies each source corner by its 1/w (in source order), then swaps
        for (int k = 0; k < 3; k++) {
            int src = g.swapped ? (k == 1 ? 2 : (k == 2 ? 1 : 0)) : k;
            // inv_w was swapped with the corners: the source corner's 1/w is g.inv_w[k]
            for (int i = 0; i < 8; i++) t.var[k][i] = var[src][i] * g.inv_w[k];
        }
    }
    *r = t;
}

__device__ __forceinline__ bool rxp_canonical_less(float4 a, float4 b) {
    if (a.x != b.x) return a.x < b.x;
    if (a.y != b.y) return a.y < b.y;
    if (a.z != b.z) return a.z < b.z;
    if (a.w != b.w) return a.w < b.w;
    return false;
}

// Sutherland-Hodgman against the near plane and the four guard-band planes (the CPU's clipper,
// operation for operation). Returns the polygon's corner count (below 3: nothing left).
__device__ int rxp_clip(const float4 v[3], float gx, float gy, float4 poly[9], float3 bary[9]) {
    float4 next_p[9];
    float3 next_b[9];
    int n = 3;
    poly[0] = v[0];
    poly[1] = v[1];
    poly[2] = v[2];
    bary[0] = make_float3(1, 0, 0);
    bary[1] = make_float3(0, 1, 0);
    bary[2] = make_float3(0, 0, 1);
    for (int pl = 0; pl < 5; pl++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            float4 a = poly[i], b = poly[(i + 1) % n];
            float3 ab = bary[i], bb = bary[(i + 1) % n];
            // glam's dot: (x*x' + z*z') + (y*y' + w*w'); with the planes' zeros this is:
            float da, db;
            switch (pl) {
                case 0: da = a.z; db = b.z; break;
                case 1: da = -a.x + gx * a.w; db = -b.x + gx * b.w; break;
                case 2: da = a.x + gx * a.w; db = b.x + gx * b.w; break;
                case 3: da = -a.y + gy * a.w; db = -b.y + gy * b.w; break;
                default: da = a.y + gy * a.w; db = b.y + gy * b.w; break;
            }
            if (da >= 0.0f) {
                next_p[m] = a;
                next_b[m] = ab;
                m++;
            }
            if ((da >= 0.0f) != (db >= 0.0f)) {
                bool ca = rxp_canonical_less(a, b);
                float4 pp = ca ? a : b, qp = ca ? b : a;
                float3 pb = ca ? ab : bb, qb = ca ? bb : ab;
                float dp = ca ? da : db, dq = ca ? db : da;
                float t = dp / (dp - dq);
                next_p[m] = make_float4(pp.x + (qp.x - pp.x) * t, pp.y + (qp.y - pp.y) * t,
                                        pp.z + (qp.z - pp.z) * t, pp.w + (qp.w - pp.w) * t);
                next_b[m] = make_float3(pb.x + (qb.x - pb.x) * t, pb.y + (qb.y - pb.y) * t,
                                        pb.z + (qb.z - pb.z) * t);
                m++;
            }
        }
        n = m;
        for (int i = 0; i < n; i++) {
            poly[i] = next_p[i];
            bary[i] = next_b[i];
        }
        if (n < 3) return n;
    }
    return n;
}

__device__ __forceinline__ void rxp_load_vertex(const VertexOut* q, float4& clip, float var[8]) {
    const float4* f = reinterpret_cast<const float4*>(q);
    float4 a = f[0], b = f[1], c = f[2], d = f[3];
    clip = a;
    // world (b.xyz), normal (b.w, c.x, c.y), uv (c.z, c.w), extra (d.x)
    var[0] = b.x;
    var[1] = b.y;
    var[2] = b.z;
    var[3] = b.w;
    var[4] = c.x;
    var[5] = c.y;
    var[6] = d.x;
    var[7] = 0.0f;
}

// The tile of a box that lies within one tile, or RXP_NONE.
__device__ __forceinline__ unsigned rxp_single_tile(const unsigned short bbox[4],
                                                    const RasterParams& p) {
    const unsigned x0 = bbox[0] >> RXP_TILE_SHIFT, y0 = bbox[1] >> RXP_TILE_SHIFT;
    const unsigned x1 = bbox[2] >> RXP_TILE_SHIFT, y1 = bbox[3] >> RXP_TILE_SHIFT;
    return x0 == x1 && y0 == y1 ? y0 * p.tiles_x + x0 : RXP_NONE;
}

// Adds `tile`'s lane to tiles[tile] (skipping RXP_NONE) with one atomic per distinct tile of the
// warp, and returns the value the lane's own atomic would have returned. Most records of a big
// mesh are small and neighbours on the screen, so a warp's records mostly share one tile, whose
// counter would otherwise take 32 atomics in a row. Every lane of the warp must call it.
__device__ __forceinline__ unsigned rxp_tile_add(unsigned* tiles, unsigned tile) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned group = __match_any_sync(0xffffffffu, tile);
    const unsigned leader = __ffs(group) - 1;
    unsigned at = 0;
    if (tile != RXP_NONE && lane == leader) at = atomicAdd(&tiles[tile], (unsigned)__popc(group));
    at = __shfl_sync(0xffffffffu, at, leader);
    return at + __popc(group & ((1u << lane) - 1));
}

// Boxes over more tiles than this are counted and binned by rxp_bin_big, RXP_BIG_SLICES warps
// each
#define RXP_FEW_TILES 8
#define RXP_BIG_SLICES 8

// How many tiles a box spans.
__device__ __forceinline__ unsigned rxp_box_tiles(const unsigned short bbox[4]) {
    return ((bbox[2] >> RXP_TILE_SHIFT) - (bbox[0] >> RXP_TILE_SHIFT) + 1) *
           ((bbox[3] >> RXP_TILE_SHIFT) - (bbox[1] >> RXP_TILE_SHIFT) + 1);
}

// Adds one to the count of every tile a live record's box touches; returns how many. Setup
// counts boxes: an upper bound of what rxp_bin_fill puts in each tile's bin (every tile of a box
// within one tile, only the tiles the triangle may cover of a bigger one: rxp_tile_touched), so
// a tile's bin is filled from its offset to its cursor's end, which the raster kernel reads.
__device__ __forceinline__ unsigned rxp_count_tiles(const unsigned short bbox[4],
                                                    const RasterParams& p, unsigned* tile_counts) {
    unsigned x0 = bbox[0] >> RXP_TILE_SHIFT, y0 = bbox[1] >> RXP_TILE_SHIFT;
    unsigned x1 = bbox[2] >> RXP_TILE_SHIFT, y1 = bbox[3] >> RXP_TILE_SHIFT;
    for (unsigned ty = y0; ty <= y1; ty++)
        for (unsigned tx = x0; tx <= x1; tx++) atomicAdd(&tile_counts[ty * p.tiles_x + tx], 1u);
    return (x1 - x0 + 1) * (y1 - y0 + 1);
}

// Setup's count of live record r's tiles: a box of at most RXP_FEW_TILES tiles adds one to each
// (rxp_count_tiles); a bigger one goes to the big-box list, whose records rxp_bin_big counts and
// later bins a warp each, in the tiles the triangle may cover (counted here, one thread added to
// hundreds of tiles in a row: the clipped pieces of a near wall held the clipping kernel).
// Returns the box's tiles, an upper bound of the record's bin entries.
__device__ __forceinline__ unsigned rxp_count_record(const unsigned short bbox[4], unsigned r,
                                                     const RasterParams& p,
                                                     unsigned* tile_counts,
                                                     unsigned long long* counters,
                                                     unsigned* big) {
    const unsigned n = rxp_box_tiles(bbox);
    if (n <= RXP_FEW_TILES) return rxp_count_tiles(bbox, p, tile_counts);
    const unsigned long long k = atomicAdd(&counters[RXP_C_BIG], 1ull);
    if (k < p.record_capacity) big[k] = r;
    return n;
}

// Whether the triangle of snapped corners (x, y) and box `bbox` may cover a pixel centre of tile
// (tx, ty): no edge function is negative at every pixel centre of the tile's part of the box.
// Exact, not a guess: an edge function is linear, so its largest value over those centres is at
// the corner the edge faces, where it is computed as rxp_edges computes it (with the fill rule's
// bias). A big triangle's box covers many tiles it never touches (a diagonal wall's, half of
// them); binning by this test spares the raster kernel scanning them pixel by pixel.
__device__ __forceinline__ bool rxp_tile_touched(const int x[3], const int y[3],
                                                 const unsigned short bbox[4], unsigned tx,
                                                 unsigned ty) {
    const int x0 = max((int)(tx << RXP_TILE_SHIFT), (int)bbox[0]);
    const int y0 = max((int)(ty << RXP_TILE_SHIFT), (int)bbox[1]);
    const int x1 = min((int)(tx << RXP_TILE_SHIFT) + RXP_TILE - 1, (int)bbox[2]);
    const int y1 = min((int)(ty << RXP_TILE_SHIFT) + RXP_TILE - 1, (int)bbox[3]);
    for (int k = 0; k < 3; k++) {
        const int a = (k + 1) % 3, b = (k + 2) % 3;
        const long long dx = (long long)x[b] - x[a], dy = (long long)y[b] - y[a];
        const bool top_left = dy < 0 || (dy == 0 && dx > 0);
        const long long px = (long long)(dy < 0 ? x1 : x0) * RXP_ONE + RXP_HALF;
        const long long py = (long long)(dx > 0 ? y1 : y0) * RXP_ONE + RXP_HALF;
        if (dx * (py - y[a]) - dy * (px - x[a]) + (top_left ? 0 : -1) < 0) return false;
    }
    return true;
}

// The tiles of a live record that rxp_bin_fill bins it in: the one tile of a box within one tile
// (always, whatever it covers), else every tile of the box the triangle may cover
// (rxp_tile_touched). Each gets one added to tiles[tile] (the cursors) and the record `r` at the
// place that returned; returns how many. One thread.
__device__ __forceinline__ unsigned rxp_add_tiles(const int x[3], const int y[3],
                                                  const unsigned short bbox[4], unsigned r,
                                                  const RasterParams& p, unsigned* tiles,
                                                  unsigned* bins) {
    const unsigned x0 = bbox[0] >> RXP_TILE_SHIFT, y0 = bbox[1] >> RXP_TILE_SHIFT;
    const unsigned x1 = bbox[2] >> RXP_TILE_SHIFT, y1 = bbox[3] >> RXP_TILE_SHIFT;
    const bool single = x0 == x1 && y0 == y1;
    unsigned n = 0;
    for (unsigned ty = y0; ty <= y1; ty++)
        for (unsigned tx = x0; tx <= x1; tx++)
            if (single || rxp_tile_touched(x, y, bbox, tx, ty)) {
                const unsigned a = atomicAdd(&tiles[ty * p.tiles_x + tx], 1u);
                if (bins && a < p.bin_capacity) bins[a] = r;
                n++;
            }
    return n;
}

// Adds the block's sums of `v[0..n)` to counters[c[0..n)], once per block: a warp sum, a
// shared atomic per warp, one global atomic per counter. Every thread of the block must call it.
template <int N>
__device__ __forceinline__ void rxp_block_counts(unsigned long long* counters, const int (&c)[N],
                                                 const unsigned (&v)[N]) {
    __shared__ unsigned sums[N];
    if (threadIdx.x < N) sums[threadIdx.x] = 0;
    __syncthreads();
    for (int i = 0; i < N; i++) {
        const unsigned w = __reduce_add_sync(0xffffffffu, v[i]);
        if ((threadIdx.x & 31) == 0 && w) atomicAdd(&sums[i], w);
    }
    __syncthreads();
    if (threadIdx.x < N && sums[threadIdx.x])
        atomicAdd(&counters[c[threadIdx.x]], (unsigned long long)sums[threadIdx.x]);
}

// Setup runs in three kernels, each over every draw of the frame at once (a draw's triangles are
// the frame's triangles tri_base .. tri_base + ntris of the draw table; a thread finds its draw
// by binary search, so a frame of many small objects takes three launches, not three per
// object). Most triangles of a big mesh die on their corners' clip positions (outside the view,
// facing away, or covering no pixel centre: 95% of the bunny grid's), so rxp_setup_classify
// reads only those (16 of each vertex's 64 bytes) with few registers and full occupancy, and
// lists the survivors: those kept whole, and those the near plane or the guard band clip.
// rxp_setup writes the records of the first with their varyings; rxp_setup_clip clips the others
// (rare; the clipper's polygons need many registers, which in one kernel with the rest held every
// triangle's setup at a quarter of the SM's warps).
//
// A draw's queue holds the shaded vertices (nverts of them) and, per triangle, the positions of
// its three corners (`corners`; null: the queue is flat, corner k of triangle t is queue[3t + k];
// see kernels/geometry.cu). A corner outside the queue rejects the triangle. A draw that is a
// view of a mesh's triangles (a frame stage kept some patches) gives the kept triangles as
// `runs` (rxp_run_of in blocks.cuh; null: every triangle): the draw's triangle t is then the
// mesh's triangle rxp_run_source(runs, nruns, t), whose corners, triangle value and indices are
// read, while the frame's triangle stays its place in the submission order.
//
// The lists share one buffer of `cap` entries (the frame's triangles, by their frame index): kept
// triangles from the front (lists[0] of them), clipped ones from the back (lists[1]).

// The draw that frame triangle `f` belongs to: the last with tri_base <= f (draws without
// triangles share their successor's base and are never found).
__device__ __forceinline__ unsigned rxp_draw_of(const RxpDraw* draws, unsigned ndraws, unsigned f) {
    return rxp_last_at_most(ndraws, f, [&](unsigned d) { return __ldg(&draws[d].tri_base); });
}

// What the corners' clip positions decide: 0 dead (culled: *culled set, or rejected), 1 kept
// whole, 2 to be clipped. `g` is the kept triangle's geometry.
__device__ __forceinline__ int rxp_classify(const float4 v[3], bool finite, const RasterParams& p,
                                            unsigned cull, SetupGeo& g, bool* culled) {
    *culled = false;
    const unsigned oc0 = rxp_outcode(v[0]), oc1 = rxp_outcode(v[1]), oc2 = rxp_outcode(v[2]);
    for (int k = 0; k < 3; k++)
        finite = finite && isfinite(v[k].x) && isfinite(v[k].y) && isfinite(v[k].z) &&
                 isfinite(v[k].w);
    if ((oc0 & oc1 & oc2) != 0 || !finite) return 0;
    const float gx = RXP_GUARD_PX / (float)p.width, gy = RXP_GUARD_PX / (float)p.height;
    bool inside = true;
    for (int k = 0; k < 3; k++)
        inside = inside && v[k].z >= 0.0f && fabsf(v[k].x) <= gx * v[k].w &&
                 fabsf(v[k].y) <= gy * v[k].w;
    if (!inside) return 2;
    const int status = rxp_emit_geo(v, p, cull, g);
    *culled = status == 1;
    return status == 0 ? 1 : 0;
}

// A triangle's corners: clip positions and varyings (the draw's `counts`: the shading-rate
// mode's invocation counts become the varying `extra`; its `faces`: the patch mode's triangle
// value becomes the last lane). Returns whether all three lie in the queue.
__device__ __forceinline__ bool rxp_load_corners(const RxpDraw& d, unsigned src, float4 v[3],
                                                 float var[3][8]) {
    bool finite = true;
    for (int k = 0; k < 3; k++) {
        const unsigned long long c = rxp_corner(d.corners, src, k);
        if (c < d.nverts) {
            rxp_load_vertex(&d.queue[c], v[k], var[k]);
        } else {
            finite = false;
            v[k] = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
            for (int i = 0; i < 8; i++) var[k][i] = 0.0f;
        }
        if (d.counts) var[k][6] = (float)d.counts[d.indices[3 * (size_t)src + k]];
        var[k][7] = d.faces ? __uint_as_float(d.faces[src]) : 0.0f;
    }
    return finite;
}

// Reserves `n` consecutive records for each thread of the block (one atomic per block); returns
// the thread's first, and whether they fit the capacity (records beyond it are not written: the
// host sees the count, grows, renders again). Every thread of the block must call it.
__device__ __forceinline__ unsigned rxp_reserve(unsigned n, const RasterParams& p,
                                                unsigned long long* counters, bool* fits) {
    unsigned total;
    const unsigned offset = rxp_block_scan(n, &total);
    __shared__ unsigned base;
    if (threadIdx.x == 0)
        base = total ? (unsigned)atomicAdd(&counters[RXP_C_RECORDS], (unsigned long long)total) : 0;
    __syncthreads();
    const unsigned r0 = base + offset;
    *fits = r0 + n <= p.record_capacity && r0 + n >= r0;
    return r0;
}

// The flags every record of draw `draw` carries.
__device__ __forceinline__ unsigned rxp_draw_flags(const RxpDraw& d, unsigned draw) {
    return draw << RXP_F_DRAW_SHIFT | d.alpha << RXP_F_ALPHA_SHIFT;
}

// One thread per triangle of the frame: the triangles that survive their clip positions are
// listed, the others get no record (first = NONE) and are counted as culled or rejected.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK)
    rxp_setup_classify(const RxpDraw* __restrict__ draws, unsigned ndraws, unsigned ntris,
                       RasterParams p, unsigned* __restrict__ first, unsigned* __restrict__ list,
                       unsigned cap, unsigned* __restrict__ lists,
                       unsigned long long* counters, unsigned* __restrict__ tile_counts,
                       unsigned ntiles) {
    rxp_after_prior();
    const unsigned f = blockIdx.x * RXP_RBLOCK + threadIdx.x;
    // the tile counts that rxp_setup and rxp_bin_big add to after this kernel, cleared here
    // rather than by a copy engine operation of their own
    for (unsigned k = f; k < ntiles; k += gridDim.x * RXP_RBLOCK) tile_counts[k] = 0;
    unsigned kind = 0, culled = 0;
    if (f < ntris) {
        const RxpDraw& d = draws[rxp_draw_of(draws, ndraws, f)];
        const unsigned src = rxp_source(d, f - d.tri_base);
        float4 v[3];
        bool finite = true;
        for (int k = 0; k < 3; k++) {
            const unsigned long long c = rxp_corner(d.corners, src, k);
            if (c < d.nverts) {
                v[k] = __ldg(reinterpret_cast<const float4*>(&d.queue[c]));
            } else {
                finite = false;
                v[k] = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
            }
        }
        SetupGeo g;
        bool c;
        kind = rxp_classify(v, finite, p, d.cull, g, &c);
        culled = c;
    }
    // one scan for three counts, 9 bits each (at most 256 per block); the rest are rejected
    unsigned total;
    const unsigned before =
        rxp_block_scan((kind == 1 ? 1u : 0u) | (kind == 2 ? 1u : 0u) << 9 | culled << 18, &total);
    __shared__ unsigned base[2];
    if (threadIdx.x == 0) {
        const unsigned nk = total & 511u, nc = (total >> 9) & 511u, ncull = total >> 18;
        const unsigned first_t = blockIdx.x * RXP_RBLOCK;
        const unsigned valid = min(ntris - first_t, (unsigned)RXP_RBLOCK);
        const unsigned nrej = valid - nk - nc - ncull;
        base[0] = nk ? atomicAdd(&lists[0], nk) : 0;
        base[1] = nc ? atomicAdd(&lists[1], nc) : 0;
        if (ncull) atomicAdd(&counters[RXP_C_CULLED], (unsigned long long)ncull);
        if (nrej) atomicAdd(&counters[RXP_C_REJECTED], (unsigned long long)nrej);
    }
    __syncthreads();
    if (f < ntris) {
        if (kind == 1) list[base[0] + (before & 511u)] = f;
        else if (kind == 2) list[cap - 1 - (base[1] + ((before >> 9) & 511u))] = f;
        else first[f] = RXP_NONE;
    }
}

// The records of the triangles kept whole: a block takes 256 list entries at a time (the grid
// strides over the list, whose length only the device knows).
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK)
    rxp_setup(const RxpDraw* __restrict__ draws, unsigned ndraws, RasterParams p,
              const unsigned* __restrict__ list, const unsigned* __restrict__ lists,
              SetupTri* __restrict__ records, unsigned* __restrict__ first,
              unsigned* __restrict__ tflags, unsigned* __restrict__ tile_counts,
              unsigned long long* counters, unsigned* __restrict__ big) {
    rxp_after_prior();
    const unsigned nlist = lists[0];
    __shared__ unsigned long long stage[RXP_RBLOCK / 32][32 * RXP_RECORD_WORDS];
    unsigned binned = 0, live = 0;
    // (the loop's condition is the same for every thread of the block)
    for (unsigned start = blockIdx.x * RXP_RBLOCK; start < nlist;
         start += gridDim.x * RXP_RBLOCK) {
        const unsigned e = start + threadIdx.x;
        bool ok = e < nlist;
        const unsigned f = ok ? list[e] : 0;
        float4 v[3];
        float var[3][8];
        SetupGeo g;
        unsigned draw_flags = 0;
        if (ok) {
            const unsigned di = rxp_draw_of(draws, ndraws, f);
            const RxpDraw& d = draws[di];
            draw_flags = rxp_draw_flags(d, di) | 1u << RXP_F_PIECES_SHIFT;
            const bool finite = rxp_load_corners(d, rxp_source(d, f - d.tri_base), v, var);
            bool c;
            // the classification of rxp_setup_classify again, which listed it as kept whole
            ok = rxp_classify(v, finite, p, d.cull, g, &c) == 1;
        }
        bool fits;
        const unsigned r = rxp_reserve(ok ? 1u : 0u, p, counters, &fits);
        ok = ok && fits;
        if (e < nlist) first[f] = ok ? r : RXP_NONE;
        // (the record's flags, as rxp_write_record sets them)
        if (ok) tflags[f] = draw_flags | RXP_F_LIVE | (g.front ? RXP_F_FRONT : 0u);
        const unsigned single = ok ? rxp_single_tile(g.bbox, p) : RXP_NONE;
        rxp_tile_add(tile_counts, single);
        // A warp's records are consecutive (reserved in thread order), so they are staged in
        // shared memory and copied out by the whole warp, 8 bytes a lane: written one record a
        // thread, each store of a warp touched 32 sectors 168 bytes apart.
        const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const unsigned ballot = __ballot_sync(0xffffffffu, ok);
        const unsigned rank = __popc(ballot & ((1u << lane) - 1));
        if (ok) {
            rxp_write_record(reinterpret_cast<SetupTri*>(&stage[warp][rank * RXP_RECORD_WORDS]),
                             g, 0, f, draw_flags, var);
            binned += single != RXP_NONE
                          ? 1u
                          : rxp_count_record(g.bbox, r, p, tile_counts, counters, big);
            live++;
        }
        __syncwarp();
        if (ballot) {
            const unsigned r_first = __shfl_sync(0xffffffffu, r, __ffs(ballot) - 1);
            unsigned long long* out =
                reinterpret_cast<unsigned long long*>(records) + (size_t)r_first * RXP_RECORD_WORDS;
            const unsigned words = __popc(ballot) * RXP_RECORD_WORDS;
            for (unsigned i = lane; i < words; i += 32) out[i] = stage[warp][i];
        }
        __syncwarp();
    }
    const int c[2] = {RXP_C_BINNED, RXP_C_RASTERIZED};
    const unsigned v[2] = {binned, live};
    rxp_block_counts(counters, c, v);
}

// The triangles to clip against the near plane and the guard band: a record per piece of the
// clipped polygon (a fan), the first piece's flags counting them; pieces that cull or cover no
// pixel centre are written dead (never binned) so that a triangle's pieces stay consecutive.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK)
    rxp_setup_clip(const RxpDraw* __restrict__ draws, unsigned ndraws, RasterParams p,
                   const unsigned* __restrict__ list, unsigned cap,
                   const unsigned* __restrict__ lists, SetupTri* __restrict__ records,
                   unsigned* __restrict__ first, unsigned* __restrict__ tflags,
                   unsigned* __restrict__ tile_counts, unsigned long long* counters,
                   unsigned* __restrict__ big) {
    rxp_after_prior();
    const unsigned nlist = lists[1];
    unsigned culled = 0, rejected = 0, clipped = 0, binned = 0, live = 0;
    for (unsigned start = blockIdx.x * RXP_RBLOCK; start < nlist;
         start += gridDim.x * RXP_RBLOCK) {
        const unsigned e = start + threadIdx.x;
        const bool have = e < nlist;
        const unsigned f = have ? list[cap - 1 - e] : 0;
        float var[3][8];
        float4 poly[9];
        float3 bary[9];
        int corners = 0;
        unsigned di = 0;
        if (have) {
            di = rxp_draw_of(draws, ndraws, f);
            const RxpDraw& d = draws[di];
            float4 v[3];
            const bool finite = rxp_load_corners(d, rxp_source(d, f - d.tri_base), v, var);
            SetupGeo g;
            bool c;
            // listed as to be clipped by rxp_setup_classify: the same decision again
            if (rxp_classify(v, finite, p, d.cull, g, &c) == 2) {
                clipped++;
                const float gx = RXP_GUARD_PX / (float)p.width;
                const float gy = RXP_GUARD_PX / (float)p.height;
                corners = rxp_clip(v, gx, gy, poly, bary);
                if (corners < 3) {
                    rejected++;
                    corners = 0;
                }
            }
        }
        const unsigned n = corners >= 3 ? (unsigned)(corners - 2) : 0u;
        bool fits;
        const unsigned r0 = rxp_reserve(n, p, counters, &fits);
        if (have) first[f] = (n && fits) ? r0 : RXP_NONE;
        // clipped triangles take the resolve's general path (their pieces' records)
        if (have) tflags[f] = 0;
        if (n && fits) {
            const RxpDraw& d = draws[di];
            const unsigned draw_flags = rxp_draw_flags(d, di);
            for (int k = 1; k + 1 < corners; k++) {
                const int c[3] = {0, k, k + 1};
                float4 pv[3];
                float pvar[3][8];
                for (int j = 0; j < 3; j++) {
                    pv[j] = poly[c[j]];
                    const float b[3] = {bary[c[j]].x, bary[c[j]].y, bary[c[j]].z};
                    for (int i = 0; i < 8; i++) {
                        float r = 0.0f;
                        for (int m = 0; m < 3; m++) r += b[m] * var[m][i];
                        pvar[j][i] = r;
                    }
                }
                SetupGeo pg;
                int st = rxp_emit_geo(pv, p, d.cull, pg);
                unsigned pieces = k == 1 ? (unsigned)(corners - 2) << RXP_F_PIECES_SHIFT : 0u;
                rxp_write_record(&records[r0 + k - 1], pg, st, f, draw_flags | pieces, pvar);
                if (st == 0) {
                    binned += rxp_count_record(pg.bbox, r0 + k - 1, p, tile_counts, counters,
                                               big);
                    live++;
                } else if (st == 1) {
                    culled++;
                } else {
                    rejected++;
                }
            }
        }
    }
    const int c[5] = {RXP_C_CULLED, RXP_C_REJECTED, RXP_C_CLIPPED, RXP_C_BINNED,
                      RXP_C_RASTERIZED};
    const unsigned v[5] = {culled, rejected, clipped, binned, live};
    rxp_block_counts(counters, c, v);
}

// ---- binning -------------------------------------------------------------------------------

// The order class of a tile's count for rxp_bin_scan: 0 for none, else 1 + two per octave.
__device__ __forceinline__ unsigned rxp_count_class(unsigned c) {
    if (c == 0) return 0;
    const unsigned e = 31 - __clz(c);
    return 1 + 2 * e + (e > 0 ? (c >> (e - 1)) & 1u : 0u);
}
#define RXP_CLASSES 65

// One block of RXP_SCAN_THREADS: offsets[k] = sum of counts before tile k (offsets[ntiles] = the
// total), and the fill cursors start at the offsets. Each thread scans RXP_SCAN_ITEMS consecutive
// tiles, so that a 1920x1080 frame (2,040 tiles) is one pass of the block scan (256 threads a
// tile each took 32 passes and two barriers each: 11 us under ncu). Also `order`: the tiles by
// decreasing count (to half an octave; ties in any order), in which the tile kernel takes them:
// the busiest tiles start first, so the kernel does not end with a few SMs finishing a crowded
// tile while the others idle (ncu on Sponza, tiles in screen order: the SMs active 75% of the
// kernel's time).
#define RXP_SCAN_THREADS 1024
#define RXP_SCAN_ITEMS 8

// The blocks a tile of `c` records takes (`split`: whether tiles may be split).
__device__ __forceinline__ unsigned rxp_slices(unsigned c, bool split) {
    if (!split || c <= RXP_SPLIT_RECORDS) return 1;
    return min((c + RXP_SPLIT_RECORDS - 1) / RXP_SPLIT_RECORDS, (unsigned)RXP_MAX_SLICES);
}

// (the order holds ntiles + RXP_MAX_EXTRA items; past the frame's, RXP_ITEM_NONE. `splits`,
// null where no tile may split, gets the number of split tiles and then the tiles, whose pixels
// rxp_bin_fill empties in the frame's depth keys.)
extern "C" __global__ void __launch_bounds__(RXP_SCAN_THREADS)
    rxp_bin_scan(const unsigned* __restrict__ tile_counts, unsigned ntiles,
                 unsigned* __restrict__ offsets, unsigned* __restrict__ cursors,
                 unsigned* __restrict__ order, RasterParams p, unsigned* __restrict__ splits) {
    rxp_after_prior();
    __shared__ unsigned classes[RXP_CLASSES];
    __shared__ unsigned extra, nsplit;
    for (unsigned c = threadIdx.x; c < RXP_CLASSES; c += RXP_SCAN_THREADS) classes[c] = 0;
    if (threadIdx.x == 0) extra = nsplit = 0;
    __syncthreads();
    bool split = p.split != 0 && splits != nullptr && RXP_TILE_ORDER;
    unsigned carry = 0, more = 0;
    for (unsigned start = 0; start < ntiles; start += RXP_SCAN_THREADS * RXP_SCAN_ITEMS) {
        const unsigned k0 = start + threadIdx.x * RXP_SCAN_ITEMS;
        unsigned c[RXP_SCAN_ITEMS], sum = 0;
        for (int i = 0; i < RXP_SCAN_ITEMS; i++) {
            c[i] = k0 + i < ntiles ? tile_counts[k0 + i] : 0;
            sum += c[i];
        }
        unsigned total;
        unsigned at = carry + rxp_block_scan(sum, &total);
        for (int i = 0; i < RXP_SCAN_ITEMS; i++) {
            const unsigned k = k0 + i;
            if (k < ntiles) {
                offsets[k] = at;
                cursors[k] = at;
                more += rxp_slices(c[i], split) - 1;
            }
            at += c[i];
        }
        carry += total;
    }
    if (threadIdx.x == 0) offsets[ntiles] = carry;
    if (more) atomicAdd(&extra, more);
    __syncthreads();
    // (a frame whose dense tiles would need more blocks than the launch has splits none)
    split = split && extra <= RXP_MAX_EXTRA;
    for (unsigned k = threadIdx.x; k < ntiles; k += RXP_SCAN_THREADS) {
        const unsigned c = tile_counts[k], n = rxp_slices(c, split);
        atomicAdd(&classes[rxp_count_class((c + n - 1) / n)], n);
    }
    __syncthreads();
    // each class's first place, the fullest class first
    if (threadIdx.x == 0) {
        unsigned at = 0;
        for (int c = RXP_CLASSES - 1; c >= 0; c--) {
            const unsigned n = classes[c];
            classes[c] = at;
            at += n;
        }
    }
    __syncthreads();
    for (unsigned k = threadIdx.x; k < ntiles; k += RXP_SCAN_THREADS) {
        const unsigned c = tile_counts[k], n = rxp_slices(c, split);
        const unsigned cl = rxp_count_class((c + n - 1) / n);
        for (unsigned s = 0; s < n; s++) order[atomicAdd(&classes[cl], 1u)] = RXP_ITEM(k, s, n);
        if (n > 1) splits[1 + atomicAdd(&nsplit, 1u)] = k;
    }
    const unsigned items = ntiles + (split ? extra : 0);
    for (unsigned i = items + threadIdx.x; i < ntiles + RXP_MAX_EXTRA; i += RXP_SCAN_THREADS)
        order[i] = RXP_ITEM_NONE;
    __syncthreads();
    if (splits && threadIdx.x == 0) splits[0] = nsplit;
}

// Each record's id goes into every tile its box touches. The grid strides over the records
// (their count is on the device) a warp at a time, so that rxp_tile_add can take a warp's
// records within one tile with one atomic.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK)
    rxp_bin_fill(const SetupTri* __restrict__ records, const unsigned long long* counters,
                 RasterParams p, unsigned* __restrict__ cursors, unsigned* __restrict__ bins,
                 const unsigned* __restrict__ splits, unsigned long long* __restrict__ gkeys) {
    rxp_after_prior();
    unsigned long long nrec = counters[RXP_C_RECORDS];
    if (nrec > p.record_capacity) nrec = 0;  // overflowed: nothing was binned consistently
    const unsigned lane = threadIdx.x & 31;
    const unsigned long long stride = (unsigned long long)gridDim.x * RXP_RBLOCK;
    if (splits) {
        // the pixels of the tiles rxp_bin_scan split start empty in the frame's depth keys
        // (their slices merge into them), over the whole grid
        const unsigned long long px = (unsigned long long)splits[0] * RXP_TILE * RXP_TILE;
        for (unsigned long long i = (unsigned long long)blockIdx.x * RXP_RBLOCK + threadIdx.x;
             i < px; i += stride) {
            const unsigned tile = splits[1 + i / (RXP_TILE * RXP_TILE)];
            const unsigned l = (unsigned)(i % (RXP_TILE * RXP_TILE));
            const int x = (int)(tile % p.tiles_x) * RXP_TILE + (int)(l % RXP_TILE);
            const int y = (int)(tile / p.tiles_x) * RXP_TILE + (int)(l / RXP_TILE);
            if (x < p.width && y < p.height) gkeys[(size_t)y * p.width + x] = RXP_KEY_EMPTY;
        }
    }
    for (unsigned long long w = (unsigned long long)blockIdx.x * RXP_RBLOCK + (threadIdx.x - lane);
         w < nrec; w += stride) {
        const unsigned long long r = w + lane;
        bool live = false;
        unsigned short bbox[4] = {0, 0, 0, 0};
        int x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
        if (r < nrec) {
            const SetupTri& t = records[r];
            live = (t.flags & RXP_F_LIVE) != 0;
            for (int i = 0; i < 4; i++) bbox[i] = t.bbox[i];
            for (int i = 0; i < 3; i++) {
                x[i] = t.x[i];
                y[i] = t.y[i];
            }
        }
        const unsigned single = live ? rxp_single_tile(bbox, p) : RXP_NONE;
        const unsigned at = rxp_tile_add(cursors, single);
        if (single != RXP_NONE && at < p.bin_capacity) bins[at] = (unsigned)r;
        // a box of a few tiles by the record's lane (at most the tiles setup counted); bigger
        // ones are on setup's big-box list, which rxp_bin_big spreads over the whole grid (bound
        // to the warp that read them, the consecutive pieces of a big clipped object held it
        // while the other SMs idled: ncu on Sponza, SMs active 15% of this kernel's time)
        if (live && single == RXP_NONE && rxp_box_tiles(bbox) <= RXP_FEW_TILES)
            rxp_add_tiles(x, y, bbox, (unsigned)r, p, cursors, bins);
    }
}

// The big boxes setup listed (rxp_count_record), RXP_BIG_SLICES warps each, the warps of the
// whole grid striding over the list: the lanes share the box's tiles and, in every one the
// triangle may cover (rxp_tile_touched), add one to tiles[tile]; with `bins` (after the scan,
// `tiles` the cursors) they also put the record in the bin at the place that returned.
extern "C" __global__ void __launch_bounds__(RXP_RBLOCK)
    rxp_bin_big(const SetupTri* __restrict__ records, const unsigned long long* counters,
                RasterParams p, const unsigned* __restrict__ big, unsigned* __restrict__ tiles,
                unsigned* __restrict__ bins) {
    rxp_after_prior();
    unsigned long long n = counters[RXP_C_BIG];
    if (n > p.record_capacity) n = p.record_capacity;
    const unsigned lane = threadIdx.x & 31;
    const unsigned long long warps = (unsigned long long)gridDim.x * (RXP_RBLOCK / 32);
    // each box is RXP_BIG_SLICES items, slice s taking every RXP_BIG_SLICES-th group of 32 of
    // its tiles: a box over the whole screen (2040 tiles at 1920x1080) would otherwise keep one
    // warp 64 rounds while the rest of the grid has finished
    for (unsigned long long w = (unsigned long long)blockIdx.x * (RXP_RBLOCK / 32) +
                                (threadIdx.x >> 5);
         w < n * RXP_BIG_SLICES; w += warps) {
        const unsigned r = big[w / RXP_BIG_SLICES], slice = (unsigned)(w % RXP_BIG_SLICES);
        const SetupTri& t = records[r];
        int x[3], y[3];
        unsigned short b[4];
        for (int k = 0; k < 3; k++) {
            x[k] = t.x[k];
            y[k] = t.y[k];
        }
        for (int k = 0; k < 4; k++) b[k] = t.bbox[k];
        const unsigned x0 = b[0] >> RXP_TILE_SHIFT, y0 = b[1] >> RXP_TILE_SHIFT;
        const unsigned nx = (b[2] >> RXP_TILE_SHIFT) - x0 + 1;
        const unsigned count = rxp_box_tiles(b);
        for (unsigned q = slice * 32 + lane; q < count; q += 32 * RXP_BIG_SLICES) {
            const unsigned tx = x0 + q % nx, ty = y0 + q / nx;
            if (!rxp_tile_touched(x, y, b, tx, ty)) continue;
            const unsigned a = atomicAdd(&tiles[ty * p.tiles_x + tx], 1u);
            if (bins && a < p.bin_capacity) bins[a] = r;
        }
    }
}

// ---- per-tile rasterisation and shading ----------------------------------------------------

// Depth as an unsigned integer with the same order as the float (negative zero below zero).
__device__ __forceinline__ unsigned rxp_ordered(float z) {
    unsigned b = __float_as_uint(z);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float rxp_unordered(unsigned b) {
    return __uint_as_float((b & 0x80000000u) ? (b & 0x7fffffffu) : ~b);
}

// The edge function of edge k (opposite corner k, from corner k+1 to corner k+2) at a pixel
// centre, with the fill rule's bias: covered when all three are >= 0 (the CPU's values exactly).
__device__ __forceinline__ void rxp_edges(const SetupTri& t, long long px, long long py,
                                          long long e[3]) {
    for (int k = 0; k < 3; k++) {
        int a = (k + 1) % 3, b = (k + 2) % 3;
        long long dx = (long long)t.x[b] - t.x[a], dy = (long long)t.y[b] - t.y[a];
        bool top_left = dy < 0 || (dy == 0 && dx > 0);
        e[k] = dx * (py - t.y[a]) - dy * (px - t.x[a]) + (top_left ? 0 : -1);
    }
}

// How the edge functions change from one pixel to the next to the right (dx) and below (dy).
__device__ __forceinline__ void rxp_edge_steps(const SetupTri& t, long long dx[3],
                                               long long dy[3]) {
    for (int k = 0; k < 3; k++) {
        int a = (k + 1) % 3, b = (k + 2) % 3;
        dx[k] = -((long long)t.y[b] - t.y[a]) * RXP_ONE;
        dy[k] = ((long long)t.x[b] - t.x[a]) * RXP_ONE;
    }
}

// Depth at a covered pixel (the CPU's expression; `I` holds the edge values exactly).
template <typename I>
__device__ __forceinline__ float rxp_depth(const SetupTri& t, const I e[3], float inv_area) {
    float l1 = (float)e[1] * inv_area;
    float l2 = (float)e[2] * inv_area;
    return t.z[0] + (t.z[1] - t.z[0]) * l1 + (t.z[2] - t.z[0]) * l2;
}

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
#if RXP_TFLAGS
    // a whole triangle of a material draw (most pixels of a lit frame): its draw and side from
    // the triangle's flags, one load after the key instead of two (its first record, then the
    // record's flags), and the record itself unread
    if (p.shading == 0) {
        const unsigned tf = tflags[tri];
        if ((tf & RXP_F_LIVE) && ((tf >> RXP_F_PIECES_SHIFT) & 7u) == 1 &&
            mt.draws[tf >> RXP_F_DRAW_SHIFT].material >= 0)
            flags = tf;
    }
    if (!flags)
#endif
    {
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
    // (not a material draw: the record was read above)
    const SetupTri& t = records[r];
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
               unsigned* __restrict__ deferred, unsigned long long* __restrict__ gkeys) {
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
    for (int i = threadIdx.x; i < RXP_TILE * RXP_TILE; i += RXP_RBLOCK) keys[i] = RXP_KEY_EMPTY;
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
                    const unsigned m = __ballot_sync(0xffffffffu, kind == k);
                    if (!m) continue;
                    unsigned* count = k == 1 ? &nsmall : &nwide;
                    unsigned at = 0;
                    if (lane == 0) at = atomicAdd(count, (unsigned)__popc(m));
                    at = __shfl_sync(0xffffffffu, at, 0);
                    if (kind == k) (k == 1 ? small : wide)[at + __popc(m & ((1u << lane) - 1))] = r;
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
