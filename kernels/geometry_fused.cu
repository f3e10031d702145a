// The fused geometry stage (after geometry.cu, raster.cuh and setup.cuh): the hashing kernels
// whose batches, once shaded, set up their own triangles and rasterise the small ones straight
// into the frame's depth keys, so that a big mesh's triangles never pass through the triangle
// queue in device memory.
//
// A batch's shaded vertices stay in shared memory, each with its setup tests and snapped screen
// position (made once per vertex). Each thread takes a triangle of the batch and classifies it
// from its corners' as rxp_setup_classify would (rxp_classify_corners): a dead one (culled, or
// covering no pixel centre) gets no record (first = NONE) and is counted; a small one kept
// whole (a box of at most RXP_FUSED_PIXELS pixels, of a draw that is neither alpha-tested nor
// blended) is rasterised here with setup's edge functions and depth, one 64-bit atomicMin of the
// (depth, frame triangle) key per covered pixel (the tile kernel's test and key exactly, so the
// nearest fragment and the tie between equal depths are the same); the others are listed for
// rxp_setup (kept whole) and rxp_setup_clip as rxp_setup_classify lists them. Only the listed or
// rasterised triangles' vertices are written, into the frame's survivor vertices (not the
// queue's per-batch regions, which a fused frame does not have), and their corners into the
// queue: setup reads the listed ones, and the resolve sets a rasterised one up again from them
// (rxp_setup_again).
//
// Compiled where the batch's vertices fit the shared memory beside the hash table (at most 256:
// 18 KB with their setup tests), and not for processing programs, which draw nothing.
#if !defined(RXP_PROGRAM) && RXP_HASH_VERTICES <= 256

// The raster stage's side of a fused launch (the Rust `FusedTarget`, byte for byte): the frame's
// depth keys (emptied before), each frame triangle's first record and flags, setup's lists (the
// two counts in `lists`, `cap` entries) and counters, the frame's size, the survivors' vertices
// (`vcap` of them), and per draw of the
// launch where its triangles start in the frame, its cull mode, its triangles' flags and whether
// its small triangles are rasterised here.
struct RxpFusedDraw {
    unsigned tri_base;
    unsigned cull;
    unsigned flags;
    unsigned small;
    // whether whole batches may be culled (kernels/batch_cull.cu): not where the frame shows
    // how often each vertex was shaded
    unsigned cull_batches;
};
struct RxpFused {
    unsigned long long* keys;
    unsigned* first;
    unsigned* tflags;
    unsigned* list;
    unsigned* lists;
    unsigned long long* counters;
    const RxpFusedDraw* draws;
    // the batches to draw, when whole batches are culled (fused_batch_list; none: every block
    // of the launch draws its own), as draw << 32 | batch, as many as counter `listed` says
    unsigned long long* batches;
    int width;
    int height;
    unsigned cap;
    unsigned listed;
    // the frame's shaded vertices of surviving triangles (those set up, kept whole or clipped),
    // `vcap` of them in RXP_VERTEX_SLABS equal parts, each warp's taken in one run by an atomic
    // on its part's counter (RXP_C_VERTICES + part * RXP_VERTEX_STRIDE; the counters count
    // those that did not fit too)
    float4* vertices;
    unsigned long long vcap;
};

// Blocks per SM the fused kernels are compiled for (registers capped to fit them, at 72 a
// thread): uncapped, the batch's setup and rasterisation took 96 registers, five 128-thread
// blocks an SM; at eight blocks (64 registers) the spills cost more than the blocks gained.
#ifndef RXP_FUSED_BLOCKS
#define RXP_FUSED_BLOCKS 7
#endif

// The largest box (in pixels) of a triangle rasterised by the thread that set it up.
#ifndef RXP_FUSED_PIXELS
#define RXP_FUSED_PIXELS 16
#endif

// Rasterises the triangle of geometry `g` (kept whole, frame triangle `f`) into the frame's keys,
// pixel by pixel over its box; returns the fragments it covered. (The atomics' old values are not
// read: a thread's pixels then do not wait on each other's round trips to the L2, as they would
// to count only the fragments that lowered a key.)
__device__ __forceinline__ unsigned rxp_fused_raster(const SetupGeo& g, unsigned f, const RxpFused& F) {
    SetupTri t;
    for (int k = 0; k < 3; k++) {
        t.x[k] = g.x[k];
        t.y[k] = g.y[k];
        t.z[k] = g.z[k];
    }
    t.area = g.area;
    const float inv_area = 1.0f / (float)t.area;
    unsigned frags = 0;
    for (int j = g.bbox[1]; j <= g.bbox[3]; j++)
        for (int i = g.bbox[0]; i <= g.bbox[2]; i++) {
            long long e[3];
            rxp_edges(t, (long long)i * RXP_ONE + RXP_HALF, (long long)j * RXP_ONE + RXP_HALF, e);
            if ((e[0] | e[1] | e[2]) < 0) continue;
            const float z = rxp_depth(t, e, inv_area);
            if (!(z < 1.0f)) continue;
            const unsigned long long key = (unsigned long long)rxp_ordered(z) << 32 | f;
            atomicMin(&F.keys[(size_t)j * F.width + i], key);
            frags++;
        }
    return frags;
}

// The fused tail of rxp_dyn_hash: shade into shared memory, set up, rasterise or list, then write
// what setup and the resolve will read.
struct RxpFusedTail {
    RxpQueueTail q;  // the inputs, uniforms and counts, and the queue's corners the survivors' go to
    const RxpFused& F;
    RxpFusedDraw fd;
    __device__ __forceinline__ void operator()(unsigned block, unsigned long long i0, unsigned n,
                                               unsigned unique,
                                               const unsigned (&nums)[RXP_HASH_ROUNDS],
                                               const unsigned* uid) const {
        constexpr unsigned P = RXP_HASH_BLOCK, R = RXP_HASH_ROUNDS;
        const VertexIn* __restrict__ vin = q.vin;
        unsigned* __restrict__ corners = q.corners;
        unsigned* counts = q.counts;
        // the batch's shaded vertices, piece by piece (rxp_vertex_pieces): a thread's 16-byte
        // accesses to consecutive vertices then fall in distinct banks, where a 64-byte record
        // per vertex put a warp's 4-byte accesses in two banks
        __shared__ float4 sv[3][RXP_HASH_VERTICES];
        __shared__ float sv_extra[RXP_HASH_VERTICES];
        __shared__ unsigned short loc[R * P];
        __shared__ unsigned char need[RXP_HASH_VERTICES];
        // each vertex's setup tests and snapped position (rxp_corner_flags, rxp_snap_corner as
        // x, y, z and 1/w bits), made once per vertex rather than once per corner; one more
        // entry, without flags, for a corner outside the batch's vertices (of a mismatched
        // batch): its triangle is rejected as one with a corner not finite
        constexpr unsigned V = RXP_HASH_VERTICES;
        __shared__ unsigned short vflags[V + 1];
        __shared__ int4 snapped[V + 1];
        // setup reads only the frame's size
        RasterParams p = {};
        p.width = F.width;
        p.height = F.height;
#pragma unroll
        for (unsigned r = 0; r < R; ++r)
            if (threadIdx.x + r * P < n)
                loc[threadIdx.x + r * P] = (unsigned short)(nums[r] < unique ? nums[r] : V);
        if (threadIdx.x == 0) {
            vflags[V] = 0;
            snapped[V] = make_int4(0, 0, 0, 0);
        }
        for (unsigned k = threadIdx.x; k < unique; k += P) {
            const unsigned id = uid[k];
            float4 d[4];
            rxp_vertex_pieces(RXP_RUN(vin, id, q.u), d);
            for (int j = 0; j < 3; j++) sv[j][k] = d[j];
            sv_extra[k] = d[3].x;
            need[k] = 0;
            vflags[k] = (unsigned short)rxp_corner_flags(d[0], p);
            const SnapCorner c = rxp_snap_corner(d[0], p);
            snapped[k] = make_int4(c.x, c.y, __float_as_int(c.z), __float_as_int(c.inv_w));
            RXP_COUNTED(id);
        }
        __syncthreads();
        const unsigned ntri = n / 3, lane = threadIdx.x & 31;
        const unsigned long long t0 = i0 / 3;
        unsigned culled = 0, rejected = 0, fused = 0, frags = 0;
        // the rounds of the loop below in which this thread's triangle survived
        unsigned kept = 0;
        static_assert(R * P / 3 <= 31 * P, "a thread's rounds fit the bits of `kept`");
        // (the loop's condition is the same for every thread of the block)
        for (unsigned base = 0; base < ntri; base += P) {
            const unsigned t = base + threadIdx.x;
            int kind = 0;  // to list: 1 kept whole, 2 to clip
            unsigned f = 0;
            if (t < ntri) {
                const unsigned long long src = t0 + t;
                f = fd.tri_base + (unsigned)src;
                unsigned c[3], fl[3];
                SnapCorner sc[3];
                for (int k = 0; k < 3; k++) {
                    c[k] = loc[3 * t + k];
                    fl[k] = vflags[c[k]];
                    const int4 q = snapped[c[k]];
                    sc[k] = SnapCorner{q.x, q.y, __int_as_float(q.z), __int_as_float(q.w)};
                }
                SetupGeo g;
                bool cull;
                const int cls = rxp_classify_corners(fl, sc, p, fd.cull, g, &cull);
                if (cls == 0) {
                    F.first[f] = RXP_NONE;
                    culled += cull;
                    rejected += !cull;
                } else {
                    for (int k = 0; k < 3; k++) need[c[k]] = 1;
                    kept |= 1u << (base / P);
                    const unsigned box = (unsigned)(g.bbox[2] - g.bbox[0] + 1) *
                                         (unsigned)(g.bbox[3] - g.bbox[1] + 1);
                    if (cls == 1 && fd.small && box <= RXP_FUSED_PIXELS) {
                        frags += rxp_fused_raster(g, f, F);
                        F.first[f] = RXP_NONE;
                        F.tflags[f] = fd.flags | RXP_F_FUSED | RXP_F_LIVE |
                                      (g.front ? RXP_F_FRONT : 0u) | 1u << RXP_F_PIECES_SHIFT;
                        fused++;
                    } else {
                        kind = cls;
                    }
                }
            }
            // listed as rxp_setup_classify lists: kept whole from the front, to clip from the
            // back, one atomic per list and warp
            for (int k = 1; k <= 2; k++) {
                const unsigned at = rxp_warp_append(&F.lists[k - 1], kind == k);
                if (kind == k) F.list[k == 1 ? at : F.cap - 1 - at] = f;
            }
        }
        const int cs[5] = {RXP_C_CULLED, RXP_C_REJECTED, RXP_C_RASTERIZED, RXP_C_FRAGMENTS,
                           RXP_C_FUSED};
        const unsigned vs[5] = {culled, rejected, fused, frags, fused};
        rxp_block_counts(F.counters, cs, vs);
        // (rxp_block_counts ends with a barrier: every thread's `need` marks are visible)
        // The needed vertices go to the frame's survivor vertices, a warp's in one run (most
        // batches have none or few: the warps without any take no atomic); each one's place is
        // kept in `snapped`'s x, which setup no longer reads.
        constexpr unsigned KR = (V + P - 1) / P;
        unsigned masks[KR], total = 0;
#pragma unroll
        for (unsigned j = 0; j < KR; j++) {
            const unsigned k = j * P + threadIdx.x;
            masks[j] = __ballot_sync(RXP_FULL, k < unique && need[k]);
            total += __popc(masks[j]);
        }
        if (total) {
            const unsigned slab = blockIdx.x % RXP_VERTEX_SLABS;
            const unsigned long long part = F.vcap / RXP_VERTEX_SLABS;
            unsigned long long at = 0;
            if (lane == 0)
                at = atomicAdd(&F.counters[RXP_C_VERTICES + slab * RXP_VERTEX_STRIDE], (unsigned long long)total);
            at = __shfl_sync(RXP_FULL, at, 0);
            const unsigned long long start = slab * part;
            const unsigned below = (1u << lane) - 1;
#pragma unroll
            for (unsigned j = 0; j < KR; j++) {
                const unsigned k = j * P + threadIdx.x;
                if (masks[j] >> lane & 1u) {
                    const unsigned long long w = at + __popc(masks[j] & below);
                    const unsigned long long v = start + w;
                    // (past its part, a corner names no vertex: setup rejects its triangle,
                    // and the frame, counted short, is drawn again with more room)
                    snapped[k].x = (int)(w < part ? (unsigned)v : 0xffffffffu);
                    if (w < part) {
                        float4* o = F.vertices + 4 * v;
                        for (int jj = 0; jj < 3; jj++) o[jj] = sv[jj][k];
                        o[3] = make_float4(sv_extra[k], 0.0f, 0.0f, 0.0f);
                    }
                }
                at += __popc(masks[j]);
            }
        }
        // the survivors' corners, by their vertices' places (once those are known)
        if (__syncthreads_or(kept != 0)) {
            for (unsigned r = 0; kept >> r; r++) {
                if (!(kept >> r & 1u)) continue;
                const unsigned t = r * P + threadIdx.x;
                const unsigned long long src = t0 + t;
                for (int k = 0; k < 3; k++) corners[3 * src + k] = (unsigned)snapped[loc[3 * t + k]].x;
            }
        }
    }
};

// Whole-batch culling before a fused launch (kernels/batch_cull.cu), in two passes as meshlet
// renderers cull by occlusion:
//
// 1. fused_batch_list: one thread per block of the launch (a batch of a draw) tests the batch's
//    bounds, where its draw has them and may cull batches, against the draw's view. A batch that
//    cannot show is counted and dropped (state 0). One that may show is listed for the first
//    fused launch (state 1) if it was seen in the last frame (`seen`: no occlusion culling
//    without it), else kept for the second pass (state 2).
// 2. After the first fused launch, rxp_hiz takes the farthest depth key of every 16x16-pixel
//    tile of the frame, and fused_batch_occlusion tests every batch of state 1 or 2 against
//    them: a batch whose bounds lie behind every tile they cover is occluded (not seen, for the
//    next frame). The occluded batches of state 2 are counted and dropped, the others listed
//    for the second fused launch.
//
// The picture is the frame drawn without culling: the depth keys only fall, so what lies behind
// the first launch's keys lies behind the frame's (strictly: an equal depth, which could win a
// tie, keeps the batch); the triangles setup draws later are missing from the tiles, which
// only keeps more batches.

// Counts the culled batches of a warp (`cut` its threads' batches, with their triangles and
// vertices), `occluded` of them culled by occlusion.
__device__ __forceinline__ void rxp_count_culled(const RxpFused& F, bool cut, bool occluded,
                                                 unsigned long long tris,
                                                 unsigned long long verts) {
    const unsigned c = __ballot_sync(RXP_FULL, cut), o = __ballot_sync(RXP_FULL, occluded);
    if (!c) return;
    for (int k = 16; k > 0; k >>= 1) {
        tris += __shfl_xor_sync(RXP_FULL, tris, k);
        verts += __shfl_xor_sync(RXP_FULL, verts, k);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&F.counters[RXP_C_BATCHES_CULLED], (unsigned long long)__popc(c));
        atomicAdd(&F.counters[RXP_C_BATCH_TRIANGLES], tris);
        atomicAdd(&F.counters[RXP_C_BATCH_VERTICES], verts);
        if (o) atomicAdd(&F.counters[RXP_C_BATCHES_OCCLUDED], (unsigned long long)__popc(o));
    }
}

// Lists a warp's batches with `keep` set (their entries) after counter `counter`'s, one atomic
// a warp.
__device__ __forceinline__ void rxp_list_batches(const RxpFused& F, unsigned long long* list,
                                                 unsigned counter, bool keep,
                                                 unsigned long long entry) {
    const unsigned long long at = rxp_warp_append(&F.counters[counter], keep);
    if (keep) list[at] = entry;
}

// A batch's bounds from its draw's.
__device__ __forceinline__ RxpBound rxp_bound_of(const RxgDraw& d, unsigned b) {
    const float4* bp = reinterpret_cast<const float4*>(d.bounds + b);
    const float4 x = __ldg(bp), y = __ldg(bp + 1);
    return RxpBound{{x.x, x.y, x.z}, x.w, {y.x, y.y, y.z}, y.w};
}

// The triangles and vertices of batch b of draw d (as many as the hashing kernel takes).
__device__ __forceinline__ void rxp_batch_size(const RxgDraw& d, unsigned b,
                                               unsigned long long& tris,
                                               unsigned long long& verts) {
    tris = min(__ldg(d.aux + b + 1) - __ldg(d.aux + b), RXP_HASH_ROUNDS * RXP_HASH_BLOCK / 3);
    verts = min(__ldg(d.tab_counts + b), (unsigned)RXP_HASH_VERTICES);
}

extern "C" __global__ void __launch_bounds__(256)
    fused_batch_list(const RxgDraw* __restrict__ draws, unsigned ndraws, unsigned nblocks,
                     RxpFused F, unsigned char* __restrict__ state,
                     const unsigned char* __restrict__ seen) {
    rxp_after_prior();
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = false, cut = false;
    unsigned long long entry = 0, tris = 0, verts = 0;
    if (g < nblocks) {
        unsigned b;
        const unsigned di = rxg_draw_index(draws, ndraws, g, false, b);
        const RxgDraw& d = draws[di];
        const RxpFusedDraw fd = F.draws[di];
        entry = (unsigned long long)di << 32 | b;
        unsigned char st = 1;
        if (d.bounds && fd.cull_batches) {
            const unsigned cull = fd.cull & 3u;
            if (!rxp_cull_keeps(d.view, rxp_bound_of(d, b),
                                cull == 1 ? 1.0f : cull == 2 ? -1.0f : 0.0f)) {
                st = 0;
                cut = true;
                rxp_batch_size(d, b, tris, verts);
            } else if (seen && !seen[g]) {
                st = 2;
            }
        }
        keep = st == 1;
        if (seen) state[g] = st;
    }
    rxp_list_batches(F, F.batches, F.listed, keep, entry);
    rxp_count_culled(F, cut, false, tris, verts);
}

// The tiles of rxp_hiz: 16x16 pixels.
#define RXP_HIZ_SHIFT 4

// The farthest depth key (its upper 32 bits) of each 16x16-pixel tile of the frame's keys: a
// block of 256 threads a tile, tiles in rows.
extern "C" __global__ void __launch_bounds__(256) rxp_hiz(RxpFused F, unsigned* __restrict__ hiz) {
    rxp_after_prior();
    const unsigned tiles_x = (F.width + (1 << RXP_HIZ_SHIFT) - 1) >> RXP_HIZ_SHIFT;
    const int x = ((blockIdx.x % tiles_x) << RXP_HIZ_SHIFT) + (threadIdx.x & 15);
    const int y = ((blockIdx.x / tiles_x) << RXP_HIZ_SHIFT) + (threadIdx.x >> 4);
    unsigned far = 0;
    if (x < F.width && y < F.height)
        far = (unsigned)(F.keys[(size_t)y * F.width + x] >> 32);
    for (int o = 16; o > 0; o >>= 1) far = max(far, __shfl_xor_sync(RXP_FULL, far, o));
    __shared__ unsigned part[8];
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = far;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < 8; ++w) far = max(far, part[w]);
        hiz[blockIdx.x] = far;
    }
}

// Whether everything within bounds `b` of draw `d` lies behind the tiles' farthest keys: the
// corners of the sphere's box through the draw's model and view-projection give a screen
// rectangle (widened by a pixel) and a nearest depth (every point of the box is at least as far
// as its nearest corner); lowered by a margin for rounding, it must lie beyond every tile the
// rectangle touches. A box reaching behind the eye, or over more than 64 tiles, is not tested.
__device__ bool rxp_occluded(const RxgDraw& d, const RxpBound& b, const RxpFused& F,
                             const unsigned* __restrict__ hiz) {
    float x0 = 3.0e38f, x1 = -3.0e38f, y0 = 3.0e38f, y1 = -3.0e38f, z0 = 3.0e38f;
    for (int c = 0; c < 8; ++c) {
        const float4 p = make_float4(b.c[0] + (c & 1 ? b.radius : -b.radius),
                                     b.c[1] + (c & 2 ? b.radius : -b.radius),
                                     b.c[2] + (c & 4 ? b.radius : -b.radius), 1.0f);
        const float4 q = rxp_mul4(d.u.view_proj, rxp_mul4(d.u.model, p));
        if (!(q.w > 1e-6f)) return false;
        const float inv = 1.0f / q.w;
        x0 = fminf(x0, q.x * inv), x1 = fmaxf(x1, q.x * inv);
        y0 = fminf(y0, q.y * inv), y1 = fmaxf(y1, q.y * inv);
        z0 = fminf(z0, q.z * inv);
    }
    if (!(z0 > 0.0f)) return false;
    const float w = (float)F.width, h = (float)F.height;
    const int px0 = max((int)floorf((x0 * 0.5f + 0.5f) * w) - 1, 0);
    const int px1 = min((int)ceilf((x1 * 0.5f + 0.5f) * w) + 1, F.width - 1);
    const int py0 = max((int)floorf((0.5f - y1 * 0.5f) * h) - 1, 0);
    const int py1 = min((int)ceilf((0.5f - y0 * 0.5f) * h) + 1, F.height - 1);
    if (px0 > px1 || py0 > py1) return false;
    const int tx0 = px0 >> RXP_HIZ_SHIFT, tx1 = px1 >> RXP_HIZ_SHIFT;
    const int ty0 = py0 >> RXP_HIZ_SHIFT, ty1 = py1 >> RXP_HIZ_SHIFT;
    if ((tx1 - tx0 + 1) * (ty1 - ty0 + 1) > 64) return false;
    const int tiles_x = (F.width + (1 << RXP_HIZ_SHIFT) - 1) >> RXP_HIZ_SHIFT;
    unsigned far = 0;
    for (int ty = ty0; ty <= ty1; ++ty)
        for (int tx = tx0; tx <= tx1; ++tx) far = max(far, hiz[ty * tiles_x + tx]);
    const float near = z0 - 1e-5f * z0 - 1e-6f;
    return near > 0.0f && rxp_ordered(near) > far;
}

extern "C" __global__ void __launch_bounds__(256)
    fused_batch_occlusion(const RxgDraw* __restrict__ draws, unsigned ndraws, unsigned nblocks,
                          RxpFused F, const unsigned char* __restrict__ state,
                          unsigned char* __restrict__ seen, const unsigned* __restrict__ hiz) {
    rxp_after_prior();
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = false, cut = false;
    unsigned long long entry = 0, tris = 0, verts = 0;
    if (g < nblocks) {
        const unsigned char st = state[g];
        bool occluded = false;
        if (st != 0) {
            unsigned b;
            const unsigned di = rxg_draw_index(draws, ndraws, g, false, b);
            const RxgDraw& d = draws[di];
            entry = (unsigned long long)di << 32 | b;
            if (d.bounds) occluded = rxp_occluded(d, rxp_bound_of(d, b), F, hiz);
            if (st == 2) {
                keep = !occluded;
                cut = occluded;
                if (cut) rxp_batch_size(d, b, tris, verts);
            }
        }
        seen[g] = st != 0 && !occluded;
    }
    rxp_list_batches(F, F.batches, F.listed, keep, entry);
    rxp_count_culled(F, cut, cut, tris, verts);
}

template <bool kSlowPath>
__device__ __forceinline__ void rxp_dyn_hash_fused(const RxgDraw* __restrict__ draws,
                                                   unsigned ndraws, unsigned fast_probes,
                                                   const RxpFused& F) {
    unsigned b, di;
    if (F.batches) {
        // the listed batch of this block, if any (the count and the entry load together)
        const unsigned long long count = F.counters[F.listed];
        const unsigned long long e = F.batches[blockIdx.x];
        if (blockIdx.x >= count) return;
        di = (unsigned)(e >> 32);
        b = (unsigned)e;
    } else {
        di = rxg_draw_index(draws, ndraws, blockIdx.x, false, b);
    }
    const RxgDraw& d = draws[di];
    const RxpQueueTail q{d.vin, d.u, d.out, d.corners, d.counts};
    rxp_dyn_hash<kSlowPath>(b, d.idx, d.aux, fast_probes, rxg_tables(d),
                            RxpFusedTail{q, F, F.draws[di]});
}

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK, RXP_FUSED_BLOCKS)
    dyn_hash_fused_draws(const RxgDraw* __restrict__ draws, unsigned ndraws,
                         unsigned fast_probes, RxpFused F) {
    rxp_after_prior();
    rxp_dyn_hash_fused<false>(draws, ndraws, fast_probes, F);
}

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK, RXP_FUSED_BLOCKS)
    dyn_phash_fused_draws(const RxgDraw* __restrict__ draws, unsigned ndraws,
                          unsigned fast_probes, RxpFused F) {
    rxp_after_prior();
    rxp_dyn_hash_fused<true>(draws, ndraws, fast_probes, F);
}

#endif
