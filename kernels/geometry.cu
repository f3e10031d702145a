// The geometry stage on the GPU: vertex shading with batch vertex reuse (Kenzel et al. 2018,
// sections 3 and 4.2). Every kernel writes the triangle queue, in input order. The queue is
// indexed, like a mesh shader's output: each batch writes the vertices it shaded once, into its own
// region of `out`, and for input triangle t the positions in `out` of its three corners at
// corners[3t], corners[3t + 1], corners[3t + 2]. So reuse saves the queue's writes as well as the
// shading. Naive shades every index and writes flat: corner k of triangle t is out[3t + k], and
// `corners` is not written.
//
// `vs_main` (the vertex shader) is spliced in before this file. With RXP_COUNT defined, every
// shader invocation adds one to counts[vertex]; the CPU reference (src/geometry/cpu.rs) produces
// the same counts, strategy by strategy.

#ifdef RXP_COUNT
#define RXP_COUNTED(id) atomicAdd(&counts[id], 1u)
#else
#define RXP_COUNTED(id) ((void)counts)
#endif

// What every strategy runs for a vertex id: the vertex shader on the vertex's inputs, or, in
// the processing mode (RXP_PROGRAM), the program spliced in before this file
// (`VertexOut rxp_program(const void* table, unsigned id)`), given the launch's input table in the
// vertex buffer's place; its record is a VertexOut whose fields are the program's to use.
#ifdef RXP_PROGRAM
#define RXP_RUN(vin, id, u) rxp_program((const void*)(vin), (id))
#else
#define RXP_RUN(vin, id, u) vs_main(rxp_fetch((vin), (id)), (u))
#endif

#define RXP_EMPTY 0xffffffffu
#define RXP_FULL 0xffffffffu
// Threads per block of the one-thread-per-element kernels (naive, multi); the host defines it
// (BlockSizes::elementwise).
#ifndef RXP_BLOCK
#define RXP_BLOCK 256
#endif
// Threads per block (per dynamic batch) of hashing; the host defines it (BlockSizes::hash).
#ifndef RXP_HASH_BLOCK
#define RXP_HASH_BLOCK 128
#endif

// Queue writes. A VertexOut is 64 bytes, four float4 pieces. Naive, multi and sorting stage their
// records in shared memory and write a contiguous run piece after piece (consecutive lanes store
// consecutive 16 bytes, 512 contiguous bytes per instruction). Warp voting and hashing store each
// vertex straight from the registers that shaded it (rxp_store_vertex): consecutive lanes still
// write consecutive records, whose sectors the L2 completes, and the shared-memory round trip,
// which was hashing's busiest pipe, is saved.

// Copies records src(0..count) to dst[0..count) as float4 pieces spread over `nthreads` threads
// (thread `tid`); `src(r)` gives record r (in shared or global memory).
template <typename Src>
__device__ __forceinline__ void rxp_copy_records(VertexOut* __restrict__ dst, unsigned count,
                                                 unsigned tid, unsigned nthreads, Src src) {
    float4* d = reinterpret_cast<float4*>(dst);
    for (unsigned q = tid; q < 4 * count; q += nthreads) {
        d[q] = reinterpret_cast<const float4*>(src(q >> 2))[q & 3];
    }
}

// Reads vertex `id` as two 16-byte loads (a VertexIn is 32 bytes and the buffer is aligned), not
// eight scattered 4-byte ones: the vertex fetch of every strategy.
__device__ __forceinline__ VertexIn rxp_fetch(const VertexIn* __restrict__ vin, unsigned id) {
    const float4* f = reinterpret_cast<const float4*>(vin + id);
    const float4 a = __ldg(f), b = __ldg(f + 1);
    VertexIn v;
    v.position = make_float3(a.x, a.y, a.z);
    v.normal = make_float3(a.w, b.x, b.y);
    v.uv = make_float2(b.z, b.w);
    return v;
}

// A shaded vertex's 64-byte record (kernels/common.cuh) as four float4 pieces: the clip position,
// world position and normal.x, the normal's rest and uv, and `extra` (padding zero).
__device__ __forceinline__ void rxp_vertex_pieces(const VertexOut& v, float4 (&d)[4]) {
    d[0] = v.clip;
    d[1] = make_float4(v.world.x, v.world.y, v.world.z, v.normal.x);
    d[2] = make_float4(v.normal.y, v.normal.z, v.uv.x, v.uv.y);
    d[3] = make_float4(v.extra, 0.0f, 0.0f, 0.0f);
}

// Stores a shaded vertex as its four float4 pieces. A warp storing consecutive records writes
// 2 KB whose sectors the L2 completes.
__device__ __forceinline__ void rxp_store_vertex(VertexOut* __restrict__ dst, const VertexOut& v) {
    float4 d[4];
    rxp_vertex_pieces(v, d);
    float4* o = reinterpret_cast<float4*>(dst);
    for (int k = 0; k < 4; k++) o[k] = d[k];
}

// A warp's lanes each hold one record for dst[lane] (lanes >= count hold none): stage them in the
// warp's 2 KB of shared memory and write them as consecutive pieces. Call with the whole warp.
__device__ __forceinline__ void rxp_warp_store(VertexOut* __restrict__ dst, const VertexOut& v,
                                               unsigned count, VertexOut* stage) {
    const unsigned lane = threadIdx.x & 31;
    if (lane < count) stage[lane] = v;
    __syncwarp();
    rxp_copy_records(dst, count, lane, 32, [&](unsigned r) { return &stage[r]; });
    __syncwarp();
}

// One thread per element: element i shades vertex idx[i] (or vertex i when idx is null) into
// out[i]. Blocks of RXP_BLOCK threads.
__device__ __forceinline__ void rxp_shade_each(unsigned block, const VertexIn* __restrict__ vin,
                                               const unsigned* __restrict__ idx, unsigned n,
                                               const Uniforms& u, VertexOut* __restrict__ out,
                                               unsigned* counts) {
    __shared__ VertexOut stage[RXP_BLOCK];
    const unsigned warp0 = block * RXP_BLOCK + (threadIdx.x & ~31u);
    if (warp0 >= n) return;
    const unsigned i = block * RXP_BLOCK + threadIdx.x;
    VertexOut v;
    if (i < n) {
        const unsigned id = idx ? idx[i] : i;
        v = RXP_RUN(vin, id, u);
        RXP_COUNTED(id);
    }
    rxp_warp_store(out + warp0, v, min(32u, n - warp0), stage + (threadIdx.x & ~31u));
}

// Naive: one thread per index, every index shaded (ASR 3).
extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    naive(const VertexIn* __restrict__ vin, const unsigned* __restrict__ idx, unsigned n,
          Uniforms u, VertexOut* __restrict__ out, unsigned* counts) {
    rxp_shade_each(blockIdx.x, vin, idx, n, u, out, counts);
}

// Multi-kernel reference: shade every vertex once into out[v]; the triangle queue's corners are
// then the index buffer itself (the host copies it).
extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    multi_shade(const VertexIn* __restrict__ vin, unsigned nv, Uniforms u,
                VertexOut* __restrict__ shaded, unsigned* counts) {
    rxp_shade_each(blockIdx.x, vin, nullptr, nv, u, shaded, counts);
}

// Statically-batched warp voting (Algorithm 1). One warp per batch of `batch` indices (a multiple
// of 3). A round loads 32 indices at a time; each lane's index either matches a vertex the warp
// already holds, or is the first of its value among the lanes that need a new one (match_any),
// which then takes the next free lane in lane order (ballot + popc). Once all 32 lanes hold a
// vertex, the first index that finds no lane ends the round: the lanes shade their vertices and
// the whole triangles before that index are written; the next round starts at the first index not
// written, without the previous round's vertices.
//
// Every round writes its shaded vertices after the previous rounds' in the batch's region of `vcap`
// vertices of `out` (the host's bound: every round but the last writes at least ten triangles whose
// corners use all but at most two of its 32 vertices, so a batch writes at most batch + 2 * rounds).
//
// Shared memory per warp: 32 held ids, `batch + 32` lane numbers.
__device__ __forceinline__ void rxp_warp_vote(unsigned block, const VertexIn* __restrict__ vin,
                                             const unsigned* __restrict__ idx, unsigned n,
                                             unsigned batch, unsigned vcap, const Uniforms& u,
                                             VertexOut* __restrict__ out,
                                             unsigned* __restrict__ corners, unsigned* counts) {
    extern __shared__ __align__(16) unsigned char smem[];
    const unsigned warps = blockDim.x >> 5;
    const unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned* held = reinterpret_cast<unsigned*>(smem) + w * 32;
    unsigned char* map = smem + warps * 32 * sizeof(unsigned) + w * (batch + 32);
    const unsigned long long start = (unsigned long long)(block * warps + w) * batch;
    if (start >= n) return;
    const unsigned end = (unsigned)min((unsigned long long)batch, n - start);
    const unsigned* bidx = idx + start;
    const unsigned lt = (1u << lane) - 1u;
    const unsigned long long vbase = (unsigned long long)(block * warps + w) * vcap;
    unsigned c_start = 0, written = 0;
    while (c_start < end) {
        unsigned fill = 0, done = 0, offset = c_start;
        while (offset < end && fill < 32) {
            const bool valid = offset + lane < end;
            const unsigned my = valid ? bidx[offset + lane] : RXP_EMPTY;
            int slot = -1;
            if (valid) {
                for (unsigned j = 0; j < fill; ++j) {
                    if (held[j] == my) slot = (int)j;
                }
            }
            const bool need = valid && slot < 0;
            const unsigned needmask = __ballot_sync(RXP_FULL, need);
            const unsigned same = __match_any_sync(RXP_FULL, my) & needmask;
            const unsigned leader = same ? (unsigned)(__ffs(same) - 1) : lane;
            const bool is_leader = need && leader == lane;
            const unsigned leaders = __ballot_sync(RXP_FULL, is_leader);
            if (is_leader) {
                const unsigned r = fill + __popc(leaders & lt);
                if (r < 32) {
                    slot = (int)r;
                    held[r] = my;
                }
            }
            const int from_leader = __shfl_sync(RXP_FULL, slot, leader);
            if (need && !is_leader) slot = from_leader;
            const unsigned fails = __ballot_sync(RXP_FULL, slot < 0);
            const unsigned first_fail = fails ? (unsigned)(__ffs(fails) - 1) : 32u;
            if (lane < first_fail) map[done + lane] = (unsigned char)slot;
            fill = min(32u, fill + __popc(leaders));
            done += first_fail;
            offset += 32;
            __syncwarp();
            if (first_fail < 32) break;
        }
        const unsigned tris = done / 3;
        if (lane < fill) {
            const unsigned id = held[lane];
            rxp_store_vertex(out + vbase + written + lane, RXP_RUN(vin, id, u));
            RXP_COUNTED(id);
        }
        for (unsigned r = lane; r < 3 * tris; r += 32)
            corners[start + c_start + r] = (unsigned)(vbase + written + map[r]);
        __syncwarp();
        written += fill;
        c_start += 3 * tris;
    }
}

extern "C" __global__ void warp_vote(const VertexIn* __restrict__ vin,
                                     const unsigned* __restrict__ idx, unsigned n, unsigned batch,
                                     unsigned vcap, Uniforms u, VertexOut* __restrict__ out,
                                     unsigned* __restrict__ corners, unsigned* counts) {
    rxp_warp_vote(blockIdx.x, vin, idx, n, batch, vcap, u, out, corners, counts);
}

// Dynamically-batched hashing (Algorithm 3, linear probing; dyn_hash) and parallel hashing
// (dyn_phash). One block per batch (batch b is triangles tri_start[b]..tri_start[b + 1]), of
// RXP_HASH_BLOCK threads (a multiple of 32: the host's BlockSizes::hash); the shared-memory table
// has RXP_HASH_TABLE slots, a power of two at least twice the batches' RXP_HASH_VERTICES, so that
// probe sequences stay short however full the batch is. Both are compile-time constants (the host
// compiles a module per batch vertex limit): the tables are then static shared arrays, addressed
// by constant offsets, which saved 4% of hashing's instructions (the dynamic shared window's base
// was recomputed in every round). An id's first slot is its multiplicative hash (the CPU's
// `geometry::cpu::hash`).
//
// Each thread inserts every RXP_HASH_BLOCK-th index of the batch, round by round (at most
// RXP_HASH_ROUNDS, unrolled, all its indices loaded before the first), with atomicCAS; parallel
// hashing gives up after `fast_probes` slots, and the warp then inserts its leftover indices
// together, 32 slots at a time from where each stopped. The thread whose CAS fills an empty slot
// owns that vertex and keeps the slot of each of its indices in a register. After the rounds each
// thread numbers the slots it filled (a warp scan of the threads' counts and one shared atomicAdd
// per warp), so no pass over the table is needed. Vertex k of batch b goes to out[b * max_vertices +
// k]; the numbers follow the order in which the warps claim them, so a batch's region may be laid
// out differently from run to run, but the queue's triangles (through the corners) never are.
// After one barrier the block writes each index's corner (its slot's number) and shades the
// batch's vertices, thread r taking numbers r, r + RXP_HASH_BLOCK, ...
//
// Shared memory: the table (ids), each slot's vertex number, the ids by number.
#define RXP_HASH_ROUNDS ((1024 + RXP_HASH_BLOCK - 1) / RXP_HASH_BLOCK)
#ifndef RXP_HASH_VERTICES
#define RXP_HASH_VERTICES 256
#endif
#ifndef RXP_HASH_TABLE
#define RXP_HASH_TABLE 512
#endif
//
// What follows the numbering is the tail's (`Tail`, called by every thread of the block after a
// barrier with the batch's first index, its index count, its unique vertex count, the thread's
// corner numbers of its indices `threadIdx.x + r * RXP_HASH_BLOCK`, and the ids by number):
// RxpQueueTail writes the queue as above; the fused geometry stage's tail
// (kernels/geometry_fused.cu) sets up and rasterises the batch's triangles first.
//
// A mesh's batches never change, so a big mesh's are hashed once, when it is prepared
// (dyn_hash_tables below): each index's number in its batch and each batch's ids by number. With
// those batch tables a block reads its numbers (a byte an index) and ids instead of hashing, and
// the tail receives the same batch: the same vertices, shaded once each, and the same triangles.
struct RxpBatchTables {
    // each index's vertex number in its batch (none: hash)
    const unsigned char* numbers;
    // each batch's ids by number, RXP_HASH_VERTICES slots a batch
    const unsigned* vertices;
    // each batch's vertex count
    const unsigned* counts;
};

// Numbers the batch's indices by hashing (see above): the thread's corner numbers into `nums`,
// the ids by number into `uid`; returns the batch's vertex count (at most max_vertices).
template <bool kSlowPath>
__device__ __forceinline__ unsigned rxp_hash_numbers(const unsigned* __restrict__ idx,
                                                     unsigned long long i0, unsigned n,
                                                     unsigned fast_probes,
                                                     unsigned (&nums)[RXP_HASH_ROUNDS],
                                                     unsigned* uid) {
    constexpr unsigned table = RXP_HASH_TABLE, max_vertices = RXP_HASH_VERTICES;
    static_assert((table & (table - 1)) == 0 && table >= 2 * max_vertices, "RXP_HASH_TABLE");
    __shared__ __align__(16) unsigned keys[table];
    __shared__ unsigned num[table];
    __shared__ unsigned claimed;
    constexpr unsigned P = RXP_HASH_BLOCK, R = RXP_HASH_ROUNDS;
    const unsigned mask = table - 1, lane = threadIdx.x & 31;
    // the hash's shift (a table has at least two slots)
    const unsigned shift = 33 - __ffs(table);
    // all of this thread's indices of the batch, loaded before the table is cleared so that
    // their round trips to memory overlap (one wait a batch, not one a round)
    const unsigned* ip = idx + i0 + threadIdx.x;
    unsigned ids[R];
#pragma unroll
    for (unsigned r = 0; r < R; ++r) ids[r] = threadIdx.x + r * P < n ? ip[r * P] : RXP_EMPTY;
    // the table is a power of two: clear it 16 bytes at a time (and a table of 1 or 2 slots)
    for (unsigned s = threadIdx.x; s < table / 4; s += P)
        reinterpret_cast<uint4*>(keys)[s] = make_uint4(RXP_EMPTY, RXP_EMPTY, RXP_EMPTY, RXP_EMPTY);
    if (table < 4 && threadIdx.x < table) keys[threadIdx.x] = RXP_EMPTY;
    if (threadIdx.x == 0) claimed = 0;
    __syncthreads();
    // rounds over the batch; every lane of a warp takes part in every round (warp-wide ballots)
    unsigned slot[R], fresh_rounds = 0;
#pragma unroll
    for (unsigned r = 0; r < R; ++r) {
        slot[r] = 0;
        if (r * P >= n) break;
        const bool valid = threadIdx.x + r * P < n;
        const unsigned id = ids[r];
        unsigned p = (id * 2654435761u) >> shift;
        bool placed = false, fresh = false;
        if (valid) {
            // hashing probes until it finds the id or an empty slot, which it always does: the
            // table has more slots than the batch has vertices
            const unsigned budget = kSlowPath ? min(fast_probes, table) : table;
            for (unsigned k = 0; k < budget; ++k) {
                const unsigned prev = atomicCAS(&keys[p], RXP_EMPTY, id);
                if (prev == RXP_EMPTY || prev == id) {
                    placed = true;
                    fresh = prev == RXP_EMPTY;
                    break;
                }
                p = (p + 1) & mask;
            }
        }
        // parallel hashing: the warp-cooperative slow path for the indices the fast path did not
        // place (after reconverging the warp, else the ballot runs once per divergent group)
        if (kSlowPath) {
            __syncwarp();
            unsigned pending = __ballot_sync(RXP_FULL, valid && !placed);
            while (pending) {
                const unsigned src = __ffs(pending) - 1;
                const unsigned want = __shfl_sync(RXP_FULL, id, src);
                unsigned base = __shfl_sync(RXP_FULL, p, src);
                unsigned found = 0;
                bool took = false;
                for (;;) {
                    const unsigned q = (base + lane) & mask;
                    const unsigned k = *(volatile unsigned*)&keys[q];
                    const unsigned hit = __ballot_sync(RXP_FULL, k == want);
                    if (hit) {
                        found = (base + __ffs(hit) - 1) & mask;
                        break;
                    }
                    const unsigned empty = __ballot_sync(RXP_FULL, k == RXP_EMPTY);
                    if (empty) {
                        const unsigned e = __ffs(empty) - 1;
                        unsigned prev = 0;
                        if (lane == e) prev = atomicCAS(&keys[q], RXP_EMPTY, want);
                        prev = __shfl_sync(RXP_FULL, prev, e);
                        if (prev == RXP_EMPTY || prev == want) {
                            found = (base + e) & mask;
                            took = prev == RXP_EMPTY;
                            break;
                        }
                        continue;  // lost the slot to another warp: look again from the same place
                    }
                    base = (base + 32) & mask;
                }
                if (lane == src) {
                    p = found;
                    fresh = took;
                }
                pending &= pending - 1;
            }
        }
        // (a slot is always found; the mask only keeps the shared-memory reads below in bounds)
        slot[r] = p & mask;
        fresh_rounds |= (unsigned)fresh << r;
        // reconverge the warp after its probes (else the next round, and the scan below, run
        // once per divergent group)
        __syncwarp();
    }
    // number the slots this thread filled: a warp scan of the threads' counts, and one shared
    // atomicAdd per warp for the warp's first number
    const unsigned mine = __popc(fresh_rounds);
    const unsigned before = rxp_warp_scan(mine, lane);
    unsigned first = 0;
    if (lane == 31 && before) first = atomicAdd(&claimed, before);
    unsigned k = __shfl_sync(RXP_FULL, first, 31) + before - mine;
#pragma unroll
    for (unsigned r = 0; r < R; ++r) {
        if (fresh_rounds & (1u << r)) {
            num[slot[r]] = k;
            // (the batches guarantee k < max_vertices; a mismatched batch is cut short)
            if (k < max_vertices) uid[k] = keys[slot[r]];
            ++k;
        }
    }
    __syncthreads();
#pragma unroll
    for (unsigned r = 0; r < R; ++r) nums[r] = threadIdx.x + r * P < n ? num[slot[r]] : 0u;
    return min(claimed, max_vertices);
}

template <bool kSlowPath, typename Tail>
__device__ __forceinline__ void rxp_dyn_hash(unsigned block, const unsigned* __restrict__ idx,
                                             const unsigned* __restrict__ tri_start,
                                             unsigned fast_probes, RxpBatchTables tab,
                                             const Tail& tail) {
    constexpr unsigned P = RXP_HASH_BLOCK, R = RXP_HASH_ROUNDS, max_vertices = RXP_HASH_VERTICES;
    __shared__ unsigned uid[max_vertices];
    // (the batch starts and tables are read only: through the read-only data cache)
    const unsigned first = __ldg(tri_start + block), last = __ldg(tri_start + block + 1);
    const unsigned long long i0 = 3ull * first;
    // (the host allows at most 1024 indices per batch: R rounds of P)
    const unsigned n = min(3 * (last - first), R * P);
    unsigned nums[R], unique;
    if (tab.numbers) {
        const unsigned char* np = tab.numbers + i0 + threadIdx.x;
#pragma unroll
        for (unsigned r = 0; r < R; ++r)
            nums[r] = threadIdx.x + r * P < n ? __ldg(np + r * P) : 0u;
        unique = min(__ldg(tab.counts + block), max_vertices);
        const unsigned* vp = tab.vertices + (unsigned long long)block * max_vertices;
        for (unsigned k = threadIdx.x; k < unique; k += P) uid[k] = __ldg(vp + k);
        __syncthreads();
    } else {
        unique = rxp_hash_numbers<kSlowPath>(idx, i0, n, fast_probes, nums, uid);
    }
    tail(block, i0, n, unique, nums, uid);
}

// The hashing kernels' queue: each index's corner, and the batch's vertices shaded into its
// region of `out`, thread r taking numbers r, r + RXP_HASH_BLOCK, ...
struct RxpQueueTail {
    const VertexIn* __restrict__ vin;
    const Uniforms& u;
    VertexOut* __restrict__ out;
    unsigned* __restrict__ corners;
    unsigned* counts;
    __device__ __forceinline__ void operator()(unsigned block, unsigned long long i0, unsigned n,
                                               unsigned unique,
                                               const unsigned (&nums)[RXP_HASH_ROUNDS],
                                               const unsigned* uid) const {
        constexpr unsigned P = RXP_HASH_BLOCK;
        const unsigned long long vbase = (unsigned long long)block * RXP_HASH_VERTICES;
        unsigned* dst = corners + i0 + threadIdx.x;
#pragma unroll
        for (unsigned r = 0; r < RXP_HASH_ROUNDS; ++r)
            if (threadIdx.x + r * P < n) dst[r * P] = (unsigned)(vbase + nums[r]);
        for (unsigned r = threadIdx.x; r < unique; r += P) {
            const unsigned id = uid[r];
            rxp_store_vertex(out + vbase + r, RXP_RUN(vin, id, u));
            RXP_COUNTED(id);
        }
    }
};

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK)
    dyn_hash(const VertexIn* __restrict__ vin, const unsigned* __restrict__ idx,
             const unsigned* __restrict__ tri_start, unsigned fast_probes, Uniforms u,
             VertexOut* __restrict__ out, unsigned* __restrict__ corners, unsigned* counts) {
    rxp_dyn_hash<false>(blockIdx.x, idx, tri_start, fast_probes, RxpBatchTables{},
                        RxpQueueTail{vin, u, out, corners, counts});
}

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK)
    dyn_phash(const VertexIn* __restrict__ vin, const unsigned* __restrict__ idx,
              const unsigned* __restrict__ tri_start, unsigned fast_probes, Uniforms u,
              VertexOut* __restrict__ out, unsigned* __restrict__ corners, unsigned* counts) {
    rxp_dyn_hash<true>(blockIdx.x, idx, tri_start, fast_probes, RxpBatchTables{},
                       RxpQueueTail{vin, u, out, corners, counts});
}

// The batch tables of a mesh's batches (RxpBatchTables): hashed as dyn_hash hashes them, each
// index's number and each batch's ids and count written instead of shading. (Numbers are bytes:
// compiled where a batch holds at most 256 vertices.)
#if RXP_HASH_VERTICES <= 256
struct RxpTableTail {
    unsigned char* __restrict__ numbers;
    unsigned* __restrict__ vertices;
    unsigned* __restrict__ counts;
    __device__ __forceinline__ void operator()(unsigned block, unsigned long long i0, unsigned n,
                                               unsigned unique,
                                               const unsigned (&nums)[RXP_HASH_ROUNDS],
                                               const unsigned* uid) const {
        constexpr unsigned P = RXP_HASH_BLOCK;
        unsigned char* dst = numbers + i0 + threadIdx.x;
#pragma unroll
        for (unsigned r = 0; r < RXP_HASH_ROUNDS; ++r)
            if (threadIdx.x + r * P < n) dst[r * P] = (unsigned char)nums[r];
        unsigned* v = vertices + (unsigned long long)block * RXP_HASH_VERTICES;
        for (unsigned k = threadIdx.x; k < unique; k += P) v[k] = uid[k];
        if (threadIdx.x == 0) counts[block] = unique;
    }
};

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK)
    dyn_hash_tables(const unsigned* __restrict__ idx, const unsigned* __restrict__ tri_start,
                    unsigned char* __restrict__ numbers, unsigned* __restrict__ vertices,
                    unsigned* __restrict__ counts) {
    rxp_dyn_hash<false>(blockIdx.x, idx, tri_start, 0, RxpBatchTables{},
                        RxpTableTail{numbers, vertices, counts});
}
#endif

// Dynamically-batched sorting (Algorithm 2). One block of RXP_SORT_BLOCK threads per batch (the
// paper's 256 for its 768 indices), each thread taking RXP_SORT_KEYS / RXP_SORT_BLOCK
// consecutive places. Sort (id, position) keys (rxp_sort_keys: mostly in registers, 32 bits
// where the batch's ids allow), flag the first of every id, scan the flags for the rank of each
// unique id (each thread its run of sorted entries), and write each position's rank; then every
// thread shades a unique id (in ascending order: vertex k of batch b, the k-th smallest id, goes
// to out[b * max_vertices + k]) and stores it straight from its registers, and every index's
// corner is its rank. With a thread per unique vertex rather than per index, every warp of the
// block shades (with a thread per index, three quarters of the block waited while a quarter
// shaded).
//
// Shared memory: RXP_SORT_KEYS keys (8 bytes each) and as many ranks, `max_vertices` ids.
#ifndef RXP_SORT_BLOCK
#define RXP_SORT_BLOCK 256
#endif
#define RXP_SORT_KEYS 1024

// The batch's (id, position) pairs as sort keys: 32 bits, (id - base) above the 10 bits of the
// position, where the batch's ids span less than 2^22 (as a batch of neighbouring triangles'
// ids do), else 64 bits, the id above the position.
template <typename K>
struct RxpSortKey;
template <>
struct RxpSortKey<unsigned> {
    unsigned base;
    static constexpr unsigned none = RXP_EMPTY;
    __device__ unsigned make(unsigned id, unsigned pos) const { return (id - base) << 10 | pos; }
    __device__ unsigned id(unsigned k) const { return (k >> 10) + base; }
    __device__ static unsigned pos(unsigned k) { return k & 1023u; }
};
template <>
struct RxpSortKey<unsigned long long> {
    unsigned base;
    static constexpr unsigned long long none = ~0ull;
    __device__ unsigned long long make(unsigned id, unsigned pos) const {
        return (unsigned long long)id << 32 | pos;
    }
    __device__ unsigned id(unsigned long long k) const { return (unsigned)(k >> 32); }
    __device__ static unsigned pos(unsigned long long k) { return (unsigned)k; }
};

// Sorts the block's E * RXP_SORT_BLOCK keys ascending, element e of thread t (k[e]) at position
// t * E + e, and leaves them in order in `sorted` (shared memory), the block synchronised. A
// bitonic network whose steps between positions less than E apart are exchanges within a
// thread's registers, those less than 32 E apart warp shuffles, and only the others (6 of the 55
// steps for 1024 keys over 256 threads) a round trip through shared memory with its barriers. At
// each step an element keeps the lesser of itself and its partner where it is the lower of the
// two in an ascending run or the upper in a descending one, else the greater.
template <unsigned E, typename K>
__device__ __forceinline__ void rxp_sort_keys(K (&k)[E], K* __restrict__ sorted, unsigned t) {
    constexpr unsigned T = RXP_SORT_BLOCK, P = E * T;
    static_assert(T % 32 == 0 && (T & (T - 1)) == 0 && (E & (E - 1)) == 0, "RXP_SORT_BLOCK");
#pragma unroll
    for (unsigned size = 2; size <= P; size <<= 1) {
#pragma unroll
        for (unsigned j = size >> 1; j > 0; j >>= 1) {
            if (j < E) {
                // the partner is another element of this thread
#pragma unroll
                for (unsigned e = 0; e < E; ++e) {
                    if (e & j) continue;
                    const unsigned f = e | j;
                    const bool up = ((t * E + e) & size) == 0;
                    const K a = k[e], b = k[f];
                    const bool swap = (a > b) == up;
                    k[e] = swap ? b : a;
                    k[f] = swap ? a : b;
                }
            } else {
                K other[E];
                if (j < 32 * E) {
#pragma unroll
                    for (unsigned e = 0; e < E; ++e)
                        other[e] = __shfl_xor_sync(RXP_FULL, k[e], j / E);
                } else {
#pragma unroll
                    for (unsigned e = 0; e < E; ++e) sorted[t * E + e] = k[e];
                    __syncthreads();
#pragma unroll
                    for (unsigned e = 0; e < E; ++e) other[e] = sorted[(t * E + e) ^ j];
                    __syncthreads();
                }
                // (j >= E: the bits of i that decide are those of t)
                const unsigned i = t * E;
                const bool keep_min = ((i & size) == 0) == ((i & j) == 0);
#pragma unroll
                for (unsigned e = 0; e < E; ++e) {
                    const K a = k[e], b = other[e];
                    k[e] = keep_min == (a < b) ? a : b;
                }
            }
        }
    }
#pragma unroll
    for (unsigned e = 0; e < E; ++e) sorted[t * E + e] = k[e];
    __syncthreads();
}

// The sorting strategy's batch with keys of type K (rxp_dyn_sort).
template <typename K>
__device__ __forceinline__ void rxp_dyn_sort_keys(RxpSortKey<K> key, const VertexIn* __restrict__ vin,
                                                  const unsigned* __restrict__ bidx, unsigned n,
                                                  unsigned max_vertices, const Uniforms& u,
                                                  VertexOut* __restrict__ out, unsigned long long vbase,
                                                  unsigned* __restrict__ bcorners, unsigned* counts,
                                                  unsigned char* smem) {
    constexpr unsigned T = RXP_SORT_BLOCK, E = RXP_SORT_KEYS / T;
    K* keys = reinterpret_cast<K*>(smem);
    unsigned* rank = reinterpret_cast<unsigned*>(smem + RXP_SORT_KEYS * sizeof(unsigned long long));
    unsigned* uid = rank + RXP_SORT_KEYS;
    const unsigned t = threadIdx.x;
    K k[E];
#pragma unroll
    for (unsigned e = 0; e < E; ++e) {
        const unsigned i = t * E + e;
        k[e] = i < n ? key.make(bidx[i], i) : key.none;
    }
    rxp_sort_keys<E>(k, keys, t);
    // this thread's run of consecutive sorted entries, and the first of each id among them
    const unsigned s0 = t * E;
    unsigned firsts = 0, count = 0;
#pragma unroll
    for (unsigned e = 0; e < E; ++e) {
        const unsigned s = s0 + e;
        if (s < n && (s == 0 || key.id(keys[s - 1]) != key.id(keys[s]))) {
            firsts |= 1u << e;
            ++count;
        }
    }
    // the rank of the run's first unique id: an exclusive block scan of the counts
    unsigned unique_all;
    unsigned r = rxp_block_scan(count, &unique_all);
#pragma unroll
    for (unsigned e = 0; e < E; ++e) {
        const unsigned s = s0 + e;
        if (s < n) {
            if ((firsts >> e) & 1u) {
                if (r < max_vertices) uid[r] = key.id(keys[s]);
                ++r;
            }
            // position -> rank (the rank of this entry's id)
            rank[key.pos(keys[s])] = r - 1;
        }
    }
    __syncthreads();
    const unsigned unique = min(unique_all, max_vertices);
    for (unsigned v = t; v < unique; v += T) {
        const unsigned id = uid[v];
        rxp_store_vertex(out + vbase + v, RXP_RUN(vin, id, u));
        RXP_COUNTED(id);
    }
    for (unsigned i = t; i < n; i += T) bcorners[i] = (unsigned)(vbase + rank[i]);
}

__device__ __forceinline__ void rxp_dyn_sort(unsigned block, const VertexIn* __restrict__ vin,
                                            const unsigned* __restrict__ idx,
                                            const unsigned* __restrict__ tri_start,
                                            unsigned max_vertices, const Uniforms& u,
                                            VertexOut* __restrict__ out,
                                            unsigned* __restrict__ corners, unsigned* counts) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ unsigned span[2];
    const unsigned long long i0 = 3ull * tri_start[block];
    // (the host allows at most RXP_SORT_KEYS indices per batch)
    const unsigned n = min(3 * (tri_start[block + 1] - tri_start[block]), RXP_SORT_KEYS);
    const unsigned* bidx = idx + i0;
    // the batch's least and greatest ids, which choose the keys' width
    unsigned lo = RXP_EMPTY, hi = 0;
    for (unsigned i = threadIdx.x; i < n; i += RXP_SORT_BLOCK) {
        const unsigned id = bidx[i];
        lo = min(lo, id);
        hi = max(hi, id);
    }
    lo = __reduce_min_sync(RXP_FULL, lo);
    hi = __reduce_max_sync(RXP_FULL, hi);
    if (threadIdx.x == 0) {
        span[0] = RXP_EMPTY;
        span[1] = 0;
    }
    __syncthreads();
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&span[0], lo);
        atomicMax(&span[1], hi);
    }
    __syncthreads();
    lo = span[0];
    hi = span[1];
    const unsigned long long vbase = (unsigned long long)block * max_vertices;
    if (n == 0 || hi - lo < (1u << 22))
        rxp_dyn_sort_keys<unsigned>({lo}, vin, bidx, n, max_vertices, u, out, vbase, corners + i0,
                                    counts, smem);
    else
        rxp_dyn_sort_keys<unsigned long long>({lo}, vin, bidx, n, max_vertices, u, out, vbase,
                                              corners + i0, counts, smem);
}

extern "C" __global__ void __launch_bounds__(RXP_SORT_BLOCK)
    dyn_sort(const VertexIn* __restrict__ vin, const unsigned* __restrict__ idx,
             const unsigned* __restrict__ tri_start, unsigned max_vertices, Uniforms u,
             VertexOut* __restrict__ out, unsigned* __restrict__ corners, unsigned* counts) {
    rxp_dyn_sort(blockIdx.x, vin, idx, tri_start, max_vertices, u, out, corners, counts);
}

// The patch strategy. Each patch's distinct vertices were listed when the mesh was patched (the
// lists laid end to end in vids, patch after patch), and each triangle's corners point into them,
// so there is nothing to find at run time: shading a patch is shading its list into the same
// places of `out`. The patches to shade (all of them, or those a frame stage kept) are given as
// runs of consecutive list entries: run r is entries runs[3r] .. + runs[3r + 1], the
// runs[3r + 2]-th onwards of the `total` entries shaded. One thread per entry shaded, consecutive
// threads on consecutive entries, so every warp is full whatever the patches' sizes (a warp per
// patch leaves lanes idle on patches of fewer vertices than 32 times a round); a thread finds
// its run by binary search over the runs' places: the block's first and last entries' runs are
// found once, each thread searches between them (one run when every patch is shaded).
__device__ __forceinline__ void rxp_patch_shade(unsigned block, const VertexIn* __restrict__ vin,
                                               const unsigned* __restrict__ vids,
                                               const unsigned* __restrict__ runs, unsigned nruns,
                                               unsigned total, const Uniforms& u,
                                               VertexOut* __restrict__ out, unsigned* counts) {
    const unsigned k = block * RXP_BLOCK + threadIdx.x;
    unsigned lo, hi;
    rxp_block_runs(runs, nruns, block * RXP_BLOCK, min(block * RXP_BLOCK + RXP_BLOCK, total) - 1,
                   &lo, &hi);
    if (k >= total) return;
    const unsigned i = rxp_run_source_in(runs, lo, hi, k);
    const unsigned id = vids[i];
    rxp_store_vertex(out + i, RXP_RUN(vin, id, u));
    RXP_COUNTED(id);
}

extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    patch_shade(const VertexIn* __restrict__ vin, const unsigned* __restrict__ vids,
                const unsigned* __restrict__ runs, unsigned nruns, unsigned total, Uniforms u,
                VertexOut* __restrict__ out, unsigned* counts) {
    rxp_patch_shade(blockIdx.x, vin, vids, runs, nruns, total, u, out, counts);
}

// ---- many meshes in one launch ---------------------------------------------------------------
//
// A frame of many objects (Sponza draws 114) shaded launch by launch spends its time launching:
// the device waits on the host, about 11 us per object. So each kernel above also runs over a
// table of draws: every mesh with its inputs, uniforms and queue, and the launch's blocks dealt
// out to them in order (draw d has blocks block_base .. the next draw's block_base, the grid the
// host computes for a launch of its own). A block finds its draw by binary search and runs the
// strategy's body as that launch's block. The invocation counts of all draws are cleared before
// and summed after by two more launches over the same table (count chunks instead of blocks).
// (The Rust `GeoDraw`, byte for byte.)
struct RxgDraw {
    Uniforms u;
    unsigned block_base;
    const VertexIn* vin;
    // the index buffer (naive, warp voting, dynamic batches)
    const unsigned* idx;
    // the batch starts (dynamic batches) or the patch vertex lists (patch)
    const unsigned* aux;
    // the patch runs
    const unsigned* runs;
    VertexOut* out;
    unsigned* corners;
    unsigned* counts;
    unsigned long long* total;
    // indices (naive, warp voting), vertices (multi) or list entries (patch)
    unsigned n;
    unsigned nruns;
    // the counts to clear and sum, and where their chunks start among the launch's
    unsigned ncounts;
    unsigned count_base;
    // the mesh's batch tables (hashing; none: hash each batch)
    const unsigned char* tab_numbers;
    const unsigned* tab_vertices;
    const unsigned* tab_counts;
    // the batches' bounds (none: no batch is culled whole) and the draw's view of its object
    // (kernels/batch_cull.cu)
    const RxpBound* bounds;
    RxpCullView view;
};
static_assert(sizeof(Uniforms) == 180 && sizeof(RxgDraw) == 432,
              "the draw table as the host lays it out (src/geometry/cuda/abi.rs)");

__device__ __forceinline__ RxpBatchTables rxg_tables(const RxgDraw& d) {
    return RxpBatchTables{d.tab_numbers, d.tab_vertices, d.tab_counts};
}

// The draw that block b belongs to: the last whose base is at most b (a draw without blocks
// shares its successor's base and is never found). `count` searches the count chunks' bases.
__device__ __forceinline__ unsigned rxg_draw_index(const RxgDraw* draws, unsigned ndraws,
                                                   unsigned b, bool count, unsigned& local) {
    auto base = [&](unsigned d) { return count ? draws[d].count_base : draws[d].block_base; };
    const unsigned d = rxp_last_at_most(ndraws, b, base);
    local = b - base(d);
    return d;
}
__device__ __forceinline__ const RxgDraw& rxg_draw_of(const RxgDraw* draws, unsigned ndraws,
                                                      unsigned b, bool count, unsigned& local) {
    return draws[rxg_draw_index(draws, ndraws, b, count, local)];
}

extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    naive_draws(const RxgDraw* __restrict__ draws, unsigned ndraws) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_shade_each(b, d.vin, d.idx, d.n, d.u, d.out, d.counts);
}

extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    multi_shade_draws(const RxgDraw* __restrict__ draws, unsigned ndraws) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_shade_each(b, d.vin, nullptr, d.n, d.u, d.out, d.counts);
}

extern "C" __global__ void warp_vote_draws(const RxgDraw* __restrict__ draws, unsigned ndraws,
                                           unsigned batch, unsigned vcap) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_warp_vote(b, d.vin, d.idx, d.n, batch, vcap, d.u, d.out, d.corners, d.counts);
}

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK)
    dyn_hash_draws(const RxgDraw* __restrict__ draws, unsigned ndraws, unsigned fast_probes) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_dyn_hash<false>(b, d.idx, d.aux, fast_probes, rxg_tables(d),
                        RxpQueueTail{d.vin, d.u, d.out, d.corners, d.counts});
}

extern "C" __global__ void __launch_bounds__(RXP_HASH_BLOCK)
    dyn_phash_draws(const RxgDraw* __restrict__ draws, unsigned ndraws, unsigned fast_probes) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_dyn_hash<true>(b, d.idx, d.aux, fast_probes, rxg_tables(d),
                       RxpQueueTail{d.vin, d.u, d.out, d.corners, d.counts});
}

extern "C" __global__ void __launch_bounds__(RXP_SORT_BLOCK)
    dyn_sort_draws(const RxgDraw* __restrict__ draws, unsigned ndraws, unsigned max_vertices) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_dyn_sort(b, d.vin, d.idx, d.aux, max_vertices, d.u, d.out, d.corners, d.counts);
}

extern "C" __global__ void __launch_bounds__(RXP_BLOCK)
    patch_shade_draws(const RxgDraw* __restrict__ draws, unsigned ndraws) {
    rxp_after_prior();
    unsigned b;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, false, b);
    rxp_patch_shade(b, d.vin, d.aux, d.runs, d.nruns, d.n, d.u, d.out, d.counts);
}

// Counts are cleared and summed in chunks of RXG_COUNT_CHUNK per block of 256 threads; every draw
// has at least one chunk. Clearing takes `what`: RXG_CLEAR_COUNTS the per-vertex counts,
// RXG_CLEAR_TOTALS the totals (each draw's by the first thread of its first chunk, the frame's,
// the sum of all draws', by the first block's).
#define RXG_COUNT_CHUNK 4096
#define RXG_CLEAR_COUNTS 1u
#define RXG_CLEAR_TOTALS 2u

extern "C" __global__ void __launch_bounds__(256)
    counts_clear_draws(const RxgDraw* __restrict__ draws, unsigned ndraws,
                       unsigned long long* frame_total, unsigned what) {
    rxp_after_prior();
    unsigned c;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, true, c);
    if (what & RXG_CLEAR_TOTALS) {
        if (c == 0 && threadIdx.x == 0) *d.total = 0;
        if (blockIdx.x == 0 && threadIdx.x == 0) *frame_total = 0;
    }
    if (!(what & RXG_CLEAR_COUNTS)) return;
    const unsigned end = min(d.ncounts, (c + 1) * RXG_COUNT_CHUNK);
    for (unsigned i = c * RXG_COUNT_CHUNK + threadIdx.x; i < end; i += 256) d.counts[i] = 0;
}

extern "C" __global__ void __launch_bounds__(256)
    counts_sum_draws(const RxgDraw* __restrict__ draws, unsigned ndraws,
                     unsigned long long* frame_total) {
    rxp_after_prior();
    unsigned c;
    const RxgDraw& d = rxg_draw_of(draws, ndraws, blockIdx.x, true, c);
    const unsigned end = min(d.ncounts, (c + 1) * RXG_COUNT_CHUNK);
    unsigned sum = 0;
    for (unsigned i = c * RXG_COUNT_CHUNK + threadIdx.x; i < end; i += 256) sum += d.counts[i];
    sum = __reduce_add_sync(0xffffffffu, sum);
    if ((threadIdx.x & 31) == 0 && sum) {
        atomicAdd(d.total, (unsigned long long)sum);
        atomicAdd(frame_total, (unsigned long long)sum);
    }
}
