// The raster stage's binning (after raster_setup.cu): setup records sorted into the tiles they
// touch, the tiles ordered busiest first.

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
    if (splits && !p.fused) {
        // the pixels of the tiles rxp_bin_scan split start empty in the frame's depth keys
        // (their slices merge into them), over the whole grid (a fused frame's start with the
        // geometry stage's keys, emptied before it)
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
