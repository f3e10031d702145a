// The raster stage's triangle setup (after raster.cuh and setup.cuh): classification, clipping
// and records, with the tiles each record touches counted.

// ---- triangle setup ------------------------------------------------------------------------

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

// A triangle the fused geometry stage rasterised (frame triangle `f` of draw `d`, its triangle
// flags `flags`), set up again into `t` as rxp_setup would have: the geometry stage classified it
// kept whole from the same corners, which it left in the queue.
__device__ void rxp_setup_again(const RxpDraw& d, unsigned f, const RasterParams& p,
                                unsigned flags, SetupTri& t) {
    float4 v[3];
    float var[3][8];
    const bool finite = rxp_load_corners(d, rxp_source(d, f - d.tri_base), v, var);
    SetupGeo g;
    bool culled;
    rxp_classify(v, finite, p, d.cull, g, &culled);
    rxp_write_record(&t, g, 0, f, flags & ~(RXP_F_FUSED | RXP_F_LIVE | RXP_F_FRONT), var);
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
