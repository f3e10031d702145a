// The raster stage on the GPU, side by side with the CPU reference (src/raster/): triangle setup
// (near-plane and guard-band clipping, back-face culling, 8-bit sub-pixel fixed point), binning of
// triangles to 32x32-pixel tiles, per-tile rasterisation with the top-left fill rule and a depth
// test, and deferred shading of the one visible fragment per pixel. This file holds what the
// stage's kernels share (settings, the setup record, the counters); the kernels follow it in
// raster_setup.cu, raster_bin.cu and raster_tile.cu, one translation unit in that order.
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
// triangles the fused geometry stage rasterised (kernels/geometry_fused.cu)
#define RXP_C_FUSED 8
// batches the fused geometry stage culled whole, their triangles, and their vertices (never
// shaded: kernels/batch_cull.cu)
#define RXP_C_BATCHES_CULLED 9
#define RXP_C_BATCH_TRIANGLES 10
#define RXP_C_BATCH_VERTICES 11
// the batches listed for the first and the second fused launch (fused_batch_list,
// fused_batch_occlusion), and of the culled batches those culled by occlusion
#define RXP_C_BATCH_LIST 12
#define RXP_C_BATCH_LIST2 13
#define RXP_C_BATCHES_OCCLUDED 14
// the vertices a fused frame's batches wrote for their surviving triangles (into
// RxpFused::vertices), one counter for each of its RXP_VERTEX_SLABS equal parts (a block's
// vertices go to part blockIdx.x % RXP_VERTEX_SLABS, so that the warps' atomics spread over
// many counters rather than queue on one); more than a part holds: the frame is drawn again
// with more. Each part's counter has a 128-byte line of its own (RXP_VERTEX_STRIDE words
// apart): atomics on one line meet in one L2 slice.
#define RXP_VERTEX_SLABS 32
#define RXP_VERTEX_STRIDE 16
#define RXP_C_VERTICES 16
#define RXP_COUNTERS (RXP_C_VERTICES + RXP_VERTEX_SLABS * RXP_VERTEX_STRIDE)

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
// rasterised by the fused geometry stage (kernels/geometry_fused.cu): the triangle has no
// record, and the resolve sets it up again from its corners in the queue
#define RXP_F_FUSED (1u << 7)
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
    // whether the geometry stage classified the frame's triangles and rasterised the small ones
    // into the frame's depth keys (kernels/geometry_fused.cu): setup takes its lists, and the
    // tiles start from those keys
    unsigned fused;
    // whether the frame is drawn over the colour and depth buffers as they are (neither fused
    // nor split): each pixel's key starts as the depth there with source triangle 0, and a
    // pixel whose key stays so keeps its colour and depth
    unsigned over_target;
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
