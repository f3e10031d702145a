// The eight RXMesh queries on the GPU (src/patch/query/cuda.rs; the patch layout in patch.cuh):
// one block per patch, every owned source element answered from the patch's two matrices (EV: two
// local vertices per local edge; FE: three `local edge << 1 | flipped` per local face) and their
// transposes, built in shared memory with atomics. Four kinds of kernel: FV, FE and EV read the
// owned elements' rows where they are, without shared memory; VV, VE and VF stage the matrices
// and maps they read in shared memory with asynchronous copies; FF and EF answer manifold
// patches from two faces per edge (EF staging its FE rows first). Results are global ids in
// the order src/patch/query/mod.rs documents: FV and FE in the face's corner order, EV smaller
// vertex first, the others ascending, each once.
//
// Three passes over the same code: RXQ_COUNT writes each active owned element's list length,
// RXQ_FILL writes its list at its offset (then sorts it), RXQ_USER calls the user's function on
// each list the fill pass wrote. The lengths and offsets are per row: a row per element in
// global id order, or in patch order (`flags` & RXQ_PATCH_ROWS: the patch's owned elements in
// local order from the patch's first row), which keeps a block's writes together whatever the
// order of the global ids. RXQ_MANIFOLD: the host found no edge of three faces in any patch.
// The user's `rxq_user` (spliced in before this file) is
//   __device__ void rxq_user(unsigned element, const unsigned* list, unsigned n,
//                            const float* in, float* out)
// with `in` the user's input (say positions) and `out` its output, which it writes for its
// element (out[element], or out[3 * element + k] for three floats per element).

#define RXQ_COUNT 0
#define RXQ_FILL 1
#define RXQ_USER 2

#define RXQ_VV 0
#define RXQ_VE 1
#define RXQ_VF 2
#define RXQ_EV 3
#define RXQ_EF 4
#define RXQ_FV 5
#define RXQ_FE 6
#define RXQ_FF 7

#define RXQ_PATCH_ROWS 1u
#define RXQ_MANIFOLD 2u

// The source kind of a query: 0 vertex, 1 edge, 2 face.
__device__ __forceinline__ unsigned rxq_source(unsigned q) {
    return q <= RXQ_VF ? 0u : (q <= RXQ_EF ? 1u : 2u);
}

__device__ __forceinline__ void rxq_order(unsigned& a, unsigned& b) {
    const unsigned lo = min(a, b);
    b = max(a, b);
    a = lo;
}

// Sorts list[0..n) (n <= W) ascending through registers and an optimal sorting network for W
// inputs (checked on all 0-1 inputs), the same instructions for every lane whatever its list's
// length: 12 compare-exchanges for 6 (a regular mesh's valence), 19 for 8.
template <unsigned W>
__device__ __forceinline__ void rxq_sort_net(unsigned* list, unsigned n) {
    unsigned r[W];
#pragma unroll
    for (unsigned i = 0; i < W; ++i) r[i] = i < n ? list[i] : 0xffffffffu;
    if constexpr (W == 6) {
        rxq_order(r[0], r[5]);
        rxq_order(r[1], r[3]);
        rxq_order(r[2], r[4]);
        rxq_order(r[1], r[2]);
        rxq_order(r[3], r[4]);
        rxq_order(r[0], r[3]);
        rxq_order(r[2], r[5]);
        rxq_order(r[0], r[1]);
        rxq_order(r[2], r[3]);
        rxq_order(r[4], r[5]);
        rxq_order(r[1], r[2]);
        rxq_order(r[3], r[4]);
    } else {
        static_assert(W == 8, "networks for 6 and 8 inputs");
        rxq_order(r[0], r[2]);
        rxq_order(r[1], r[3]);
        rxq_order(r[4], r[6]);
        rxq_order(r[5], r[7]);
        rxq_order(r[0], r[4]);
        rxq_order(r[1], r[5]);
        rxq_order(r[2], r[6]);
        rxq_order(r[3], r[7]);
        rxq_order(r[0], r[1]);
        rxq_order(r[2], r[3]);
        rxq_order(r[4], r[5]);
        rxq_order(r[6], r[7]);
        rxq_order(r[2], r[4]);
        rxq_order(r[3], r[5]);
        rxq_order(r[1], r[4]);
        rxq_order(r[3], r[6]);
        rxq_order(r[1], r[2]);
        rxq_order(r[3], r[4]);
        rxq_order(r[5], r[6]);
    }
#pragma unroll
    for (unsigned i = 0; i < W; ++i)
        if (i < n) list[i] = r[i];
}

// The largest n of the warp's 32 lanes (every lane calls it).
__device__ __forceinline__ unsigned rxq_warp_max(unsigned n) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xffffffffu, n);
#else
    for (unsigned d = 16; d > 0; d >>= 1) n = max(n, __shfl_xor_sync(0xffffffffu, n, d));
    return n;
#endif
}

// Sorts list[0..n) ascending; `widest`: the longest list of the lanes sorting together (a warp
// whose lists all hold at most 6 takes the smaller network). Lists of up to 8 (almost all: a
// vertex's valence) go through a network (an insertion sort's loops, each lane a list of its
// own length, took a quarter of VV's instructions); longer ones (a fin's) by insertion.
__device__ void rxq_sort(unsigned* list, unsigned n, unsigned widest = 8) {
    if (widest <= 6) {
        rxq_sort_net<6>(list, n);
        return;
    }
    if (n <= 8) {
        rxq_sort_net<8>(list, n);
        return;
    }
    for (unsigned i = 1; i < n; ++i) {
        const unsigned x = list[i];
        unsigned j = i;
        while (j > 0 && list[j - 1] > x) {
            list[j] = list[j - 1];
            --j;
        }
        list[j] = x;
    }
}

__device__ __forceinline__ void rxq_swap(unsigned& a, unsigned& b) {
    const unsigned x = a;
    a = b;
    b = x;
}

// In-place exclusive prefix sum of a[0..n) in shared memory; returns the sum. Every thread of the
// block calls it (after the values are written and synchronised).
__device__ unsigned rxq_scan(unsigned* a, unsigned n) {
    unsigned carry = 0;
    for (unsigned b = 0; b < n; b += blockDim.x) {
        const unsigned i = b + threadIdx.x;
        const unsigned v = i < n ? a[i] : 0u;
        unsigned sum;
        const unsigned x = rxp_block_scan(v, &sum);
        if (i < n) a[i] = carry + x;
        carry += sum;
        __syncthreads();
    }
    return carry;
}

// The parameters of every query kernel (the host passes them in this order:
// src/patch/query/cuda.rs) and of the body they share.
#define RXQ_QUERY_PARAMS                                                                     \
    const RxqPatch* __restrict__ patches, const unsigned* __restrict__ lv,                   \
        const unsigned* __restrict__ le, const unsigned* __restrict__ lf,                    \
        const unsigned short* __restrict__ ev_all, const unsigned short* __restrict__ fe_all, \
        unsigned pass, const unsigned char* __restrict__ active,                             \
        unsigned flags, unsigned* __restrict__ counts,                                       \
        const unsigned* __restrict__ offsets, unsigned* __restrict__ items,                  \
        const float* __restrict__ user_in, float* __restrict__ user_out
#define RXQ_QUERY_ARGS                                                                        \
    patches, lv, le, lf, ev_all, fe_all, pass, active, flags, counts, offsets, items,         \
        user_in, user_out

// Dynamic shared memory (sized by the host: src/patch/query/cuda.rs): EF's and FF's manifold
// path, a face count and two faces per edge (EF's then its staged FE rows, face map and
// offsets); VV, VE and VF the staged EV (and FE for VF) and map, a counter, a list start and an
// output offset per owned vertex, then the lists; EF's and FF's general paths the matrices, then
// for FF a counter per local edge, the edges' list starts and each local edge's faces, for EF a
// counter, a list start and an output offset per owned edge and the lists.

// Q: the kernel's query (each query has its own kernel), so that what the others would need
// folds away at compile time.
template <unsigned Q>
__device__ __forceinline__ void rxq_query_body(RXQ_QUERY_PARAMS) {
    constexpr unsigned q = Q;
    // FV, FE and EV read their own rows of the matrices; VV, VE and VF transpose them
    constexpr bool kFixed = q == RXQ_FV || q == RXQ_FE || q == RXQ_EV;
    // EF and FF's manifold path; EF's staging of it
    constexpr bool kEdgeFaces = q == RXQ_FF || q == RXQ_EF;
    constexpr bool kStaged = q == RXQ_EF;
    extern __shared__ __align__(16) unsigned char smem[];
    const RxqPatch P = patches[blockIdx.x];
    const unsigned t = threadIdx.x, T = blockDim.x;
    const unsigned src = rxq_source(q);
    const unsigned owned = src == 0 ? P.ov : (src == 1 ? P.oe : P.of);
    const unsigned* gsrc = src == 0 ? lv + P.v_off : (src == 1 ? le + P.e_off : lf + P.f_off);
    // the row of owned element k: its global id, or its place in patch order
    const bool patch_rows = flags & RXQ_PATCH_ROWS;
    const unsigned first_row = src == 0 ? P.vrow : (src == 1 ? P.erow : P.frow);
    auto row = [&](unsigned k) { return patch_rows ? first_row + k : gsrc[k]; };
    // a block whose patch owns no active element retires
    const bool on_active = active != nullptr;
    if (on_active) {
        bool any = false;
        for (unsigned k = t; k < owned && !any; k += T) any = active[gsrc[k]];
        if (!__syncthreads_or(any)) return;
    }
    auto is_active = [&](unsigned k) { return !on_active || active[gsrc[k]]; };
    // the user pass reads what the fill pass wrote
    if (pass == RXQ_USER) {
        for (unsigned k = t; k < owned; k += T) {
            if (!is_active(k)) continue;
            const unsigned r = row(k);
            const unsigned o = offsets[r];
            rxq_user(gsrc[k], items + o, offsets[r + 1] - o, user_in, user_out);
        }
        return;
    }
    // the fixed-length queries: each owned element's own rows of the matrices, read where they
    // are (an owned face's FE row, the EV rows of its edges, an owned edge's EV row), with no
    // shared memory and without the ribbon's rows (their kernel holds nothing else)
    if constexpr (kFixed) {
        const unsigned short* gev = ev_all + 2ull * P.e_off;
        const unsigned short* gfe = fe_all + 3ull * P.f_off;
        const unsigned* gv = lv + P.v_off;
        const unsigned* ge = le + P.e_off;
        const unsigned n = q == RXQ_EV ? 2 : 3;
        auto entry = [&](unsigned k, unsigned c) {
            return q == RXQ_FV ? gv[rxq_corner(gev, gfe, k, c)]
                   : q == RXQ_FE ? ge[gfe[3 * k + c] >> 1]
                                 : gv[gev[2 * k + c]];
        };
        if (pass == RXQ_FILL && patch_rows && !on_active) {
            // every owned element has its n entries and its rows follow each other: a warp's 32
            // elements write one run of 32 n entries, gathered in shared memory first so that
            // consecutive lanes store consecutive words (element by element, each of the warp's
            // n stores spans the whole run, writing one word in n). (Blocks of 256 threads.)
            __shared__ unsigned run[256 / 32][3 * 32];
            unsigned* mine = run[t >> 5];
            const unsigned lane = t & 31;
            for (unsigned kb = t - lane; kb < owned; kb += T) {
                const unsigned k = kb + lane;
                if (k < owned)
                    for (unsigned c = 0; c < n; ++c) mine[n * lane + c] = entry(k, c);
                __syncwarp();
                unsigned* out = items + n * (first_row + kb);
                const unsigned m = n * min(32u, owned - kb);
                for (unsigned j = lane; j < m; j += 32) out[j] = mine[j];
                __syncwarp();
            }
            return;
        }
        for (unsigned k = t; k < owned; k += T) {
            if (!is_active(k)) continue;
            const unsigned r = row(k);
            if (pass == RXQ_COUNT) {
                counts[r] = n;
                continue;
            }
            // every element has its n entries when all are active: no offset to look up
            unsigned* out = items + (on_active ? offsets[r] : n * r);
            for (unsigned c = 0; c < n; ++c) out[c] = entry(k, c);
        }
        return;
    }
    // EF and FF where every edge has at most two faces (the manifold case, most meshes): each
    // face, through its FE row, takes a slot of each of its edges (each edge once) by
    // a shared atomic, and the slots answer both without lists or matrices in shared memory: an
    // owned edge's EF is its one or two faces, an owned face's FF the other face on each of its
    // edges, sorted in registers. The edges whose faces are needed: EF's owned ones (local ids
    // below `owned`), every local edge for FF. A patch with an edge of three or more faces takes
    // the general path below, which overwrites this shared memory.
    if constexpr (kEdgeFaces) {
        const unsigned ns = q == RXQ_FF ? P.ne : owned;
        unsigned* nfaces = reinterpret_cast<unsigned*>(smem);
        uint2* faces = reinterpret_cast<uint2*>(nfaces + ((ns + 1) & ~1u));
        // kStaged (EF's kernel): the patch's FE rows, its face map and (the fill pass in patch
        // rows) its owned elements' list offsets are staged in shared memory behind the slots,
        // every copy in flight at once, instead of each thread reading one face after another
        // and then one offset after another (the host sizes the shared memory:
        // edge_faces_needs)
        const unsigned short* gfe = fe_all + 3ull * P.f_off;
        const unsigned* gf = lf + P.f_off;
        const bool staged_offsets = kStaged && patch_rows && pass == RXQ_FILL;
        const unsigned* soff = nullptr;
        if constexpr (kStaged) {
            unsigned char* stage = smem + ((4 * ((ns + 1) & ~1u) + 8 * ns + 15) & ~15u);
            gfe = reinterpret_cast<const unsigned short*>(rxp_stage(stage, gfe, 6 * P.nf));
            stage += rxp_stage_room(6 * P.nf);
            gf = reinterpret_cast<const unsigned*>(rxp_stage(stage, gf, 4 * P.nf));
            stage += rxp_stage_room(4 * P.nf);
            if (staged_offsets)
                soff = reinterpret_cast<const unsigned*>(
                    rxp_stage(stage, offsets + first_row, 4 * (owned + 1)));
        }
        for (unsigned e = t; e < ns; e += T) nfaces[e] = 0;
        rxp_stage_wait();
        __syncthreads();
        for (unsigned f = t; f < P.nf; f += T) {
            const unsigned g = gf[f];
            unsigned es[3];
            for (unsigned c = 0; c < 3; ++c) {
                const unsigned e = es[c] = gfe[3 * f + c] >> 1;
                if ((c > 0 && es[0] == e) || (c > 1 && es[1] == e) || e >= ns) continue;
                const unsigned slot = atomicAdd(&nfaces[e], 1u);
                if (slot == 0) faces[e].x = g;
                else if (slot == 1) faces[e].y = g;
            }
        }
        __syncthreads();
        bool wide = false;
        if (!(flags & RXQ_MANIFOLD)) {
            for (unsigned e = t; e < ns && !wide; e += T) wide = nfaces[e] > 2;
            wide = __syncthreads_or(wide);
        }
        if (!wide) {
            for (unsigned k = t; k < owned; k += T) {
                if (!is_active(k)) continue;
                unsigned r[3], n = 0;
                if (q == RXQ_EF) {
                    n = nfaces[k];
                    const uint2 two = faces[k];
                    r[0] = n > 1 ? min(two.x, two.y) : two.x;
                    r[1] = max(two.x, two.y);
                } else {
                    const unsigned g = gf[k];
                    unsigned es[3];
                    for (unsigned c = 0; c < 3; ++c) {
                        const unsigned e = es[c] = gfe[3 * k + c] >> 1;
                        if ((c > 0 && es[0] == e) || (c > 1 && es[1] == e) || nfaces[e] < 2)
                            continue;
                        const uint2 two = faces[e];
                        const unsigned other = two.x == g ? two.y : two.x;
                        bool seen = false;
                        for (unsigned i = 0; i < n; ++i) seen |= r[i] == other;
                        if (!seen) r[n++] = other;
                    }
                    // (n <= 3: sorted by three compare-exchanges)
                    if (n > 1 && r[0] > r[1]) rxq_swap(r[0], r[1]);
                    if (n > 2 && r[1] > r[2]) rxq_swap(r[1], r[2]);
                    if (n > 1 && r[0] > r[1]) rxq_swap(r[0], r[1]);
                }
                if (pass == RXQ_COUNT) {
                    counts[row(k)] = n;
                    continue;
                }
                unsigned* out = items + (staged_offsets ? soff[k] : offsets[row(k)]);
                for (unsigned i = 0; i < n; ++i) out[i] = r[i];
            }
            return;
        }
    }
    // VV and VE read EV alone, EF and FF FE alone, VF both
    const unsigned short *ev, *fe;
    unsigned* cnt;
    const unsigned* gv = lv + P.v_off;
    const unsigned* ge = le + P.e_off;
    const unsigned* gf = lf + P.f_off;
    // in patch rows the patch's lists are one run of `items` from `first`, in the same order as
    // in shared memory; `cursors`: each counter starts at its list's start there (its offset
    // less `first`) and the placing takes its list's next place from it, so that after the
    // placing list k runs from counter k - 1 (0 for the first) to counter k
    unsigned first = 0;
    bool cursors = false;
    if constexpr (!kEdgeFaces) {
        // VV, VE and VF (this kernel's only transposes) stage what they read in shared memory
        // (as EF does above: every copy of the block in flight at once): EV, FE for VF and the
        // map of the elements their lists hold; each query lays out only what it reads, so
        // that the smaller ones leave room for more blocks (host: transpose_needs)
        unsigned char* p = smem;
        ev = reinterpret_cast<const unsigned short*>(
            rxp_stage(p, ev_all + 2ull * P.e_off, 4 * P.ne));
        p += rxp_stage_room(4 * P.ne);
        fe = nullptr;
        if (q == RXQ_VF) {
            fe = reinterpret_cast<const unsigned short*>(
                rxp_stage(p, fe_all + 3ull * P.f_off, 6 * P.nf));
            p += rxp_stage_room(6 * P.nf);
        }
        const unsigned nmap = q == RXQ_VV ? P.nv : (q == RXQ_VE ? P.ne : P.nf);
        const unsigned* map = reinterpret_cast<const unsigned*>(
            rxp_stage(p, q == RXQ_VV ? gv : (q == RXQ_VE ? ge : gf), 4 * nmap));
        gv = ge = gf = map;
        p += rxp_stage_room(4 * nmap);
        // a zero word before the counters: with cursors list k runs from counter k - 1 to
        // counter k, the first list from it
        cnt = reinterpret_cast<unsigned*>(p) + 1;
        // (the counters set while the copies fly: one barrier for both)
        cursors = patch_rows && pass == RXQ_FILL;
        first = cursors ? offsets[first_row] : 0;
        if (t == 0) cnt[-1] = 0;
        for (unsigned i = t; i < owned; i += T)
            cnt[i] = cursors ? offsets[first_row + i] - first : 0;
        rxp_stage_wait();
    } else {
        const RxqMatrices m = rxq_load_matrices_of(P, ev_all, fe_all, smem, q <= RXQ_VF,
                                                   q == RXQ_VF || q == RXQ_EF || q == RXQ_FF);
        ev = m.ev;
        fe = m.fe;
        cnt = reinterpret_cast<unsigned*>(m.rest);
    }
    auto corner = [&](unsigned f, unsigned c) { return rxq_corner(ev, fe, f, c); };
    __syncthreads();
    // the transposes: a counter per owned source (per local edge for FF's edge-face lists;
    // zeroed above where staged)
    if constexpr (kEdgeFaces) {
        const unsigned ncnt = q == RXQ_FF ? P.ne : owned;
        for (unsigned i = t; i < ncnt; i += T) cnt[i] = 0;
        __syncthreads();
    }
    if (q != RXQ_FF) {
        // each local element adds itself to its owned neighbours' lists: counted (count pass),
        // or (fill pass) laid out from the lengths the count pass wrote, written in shared
        // memory, sorted there, and copied out with consecutive threads on consecutive entries
        unsigned* start = cnt + owned;       // owned + 1 list starts in the patch's lists
        unsigned* base = start + owned + 1;  // where each owned list goes in `items`
        unsigned* lists = base + owned;
        // with cursors (no starts or bases) the lists begin in the room of the starts, at the
        // word that agrees with items[first]'s modulo 16 bytes, for the copy-out's 16-byte
        // pieces (host: 4 words of room more)
        const unsigned skew =
            (unsigned)(reinterpret_cast<unsigned long long>(items + first) >> 2) & 3u;
        if (cursors) {
            const unsigned at = (unsigned)(reinterpret_cast<unsigned char*>(cnt + owned) - smem);
            lists = reinterpret_cast<unsigned*>(smem + ((at + 15u) & ~15u)) + skew;
        }
        const bool fill = pass == RXQ_FILL;
        if (patch_rows && fill && !cursors) first = offsets[first_row];
        // (after the placing)
        auto list_start = [&](unsigned k) { return cursors ? cnt[int(k) - 1] : start[k]; };
        // first a count per list, then (placing) each value in its list's next place; `plain`:
        // placing at cursors with no active set, the benchmarks' path, without the others'
        // tests in its inner loop (visit_as is inlined at two calls, each with a constant;
        // NVRTC takes no generic lambdas in device code)
        bool placing = false;
        auto add = [&](const bool plain, unsigned k, unsigned value) {
            if (plain) {
                if (k < owned) lists[atomicAdd(&cnt[k], 1u)] = value;
            } else {
                if (k >= owned || !is_active(k)) return;
                const unsigned slot = atomicAdd(&cnt[k], 1u);
                if (placing) lists[cursors ? slot : start[k] + slot] = value;
            }
        };
        auto visit_as = [&](const bool plain) {
            if (q == RXQ_VV || q == RXQ_VE) {
                // (EV's rows are 4-byte aligned: a pair in one load)
                const unsigned* ev2 = reinterpret_cast<const unsigned*>(ev);
                for (unsigned e = t; e < P.ne; e += T) {
                    const unsigned ab = ev2[e], a = ab & 0xffffu, b = ab >> 16;
                    // a ribbon edge between two vertices the patch does not own adds nothing
                    if (a >= owned && b >= owned) continue;
                    if (q == RXQ_VV) {
                        if (a != b) {
                            add(plain, a, gv[b]);
                            add(plain, b, gv[a]);
                        }
                    } else {
                        add(plain, a, ge[e]);
                        if (b != a) add(plain, b, ge[e]);
                    }
                }
            } else {
                for (unsigned f = t; f < P.nf; f += T) {
                    unsigned seen[3];
                    for (unsigned c = 0; c < 3; ++c) {
                        const unsigned x =
                            q == RXQ_VF ? corner(f, c) : (unsigned)(fe[3 * f + c] >> 1);
                        seen[c] = x;
                        // a degenerate face names a vertex (or an edge) twice: once is enough
                        if ((c > 0 && seen[0] == x) || (c > 1 && seen[1] == x)) continue;
                        add(plain, x, gf[f]);
                    }
                }
            }
        };
        auto visit = [&]() {
            if (placing && cursors && !on_active)
                visit_as(true);
            else
                visit_as(false);
        };
        if (!fill) {
            visit();
            __syncthreads();
            for (unsigned k = t; k < owned; k += T)
                if (is_active(k)) counts[row(k)] = cnt[k];
            return;
        }
        // the fill pass takes each list's place from the layout the count pass made (the
        // counters are zero for the placing, or its cursors); in patch rows the run is copied
        // out whole
        if (!cursors) {
            if (patch_rows) {
                for (unsigned k = t; k <= owned; k += T) start[k] = offsets[first_row + k] - first;
            } else {
                for (unsigned k = t; k < owned; k += T) {
                    const unsigned r = row(k);
                    const bool on = is_active(k);
                    start[k] = on ? offsets[r + 1] - offsets[r] : 0;
                    base[k] = on ? offsets[r] : 0;
                }
                __syncthreads();
                const unsigned total = rxq_scan(start, owned);
                if (t == 0) start[owned] = total;
            }
            __syncthreads();
        }
        placing = true;
        visit();
        __syncthreads();
        if (patch_rows) {
            // (a warp's lanes together, so that they agree on the network's width)
            for (unsigned kb = t & ~31u; kb < owned; kb += T) {
                const unsigned k = kb + (t & 31);
                const unsigned at = k < owned ? list_start(k) : 0;
                const unsigned n = k < owned ? list_start(k + 1) - at : 0;
                const unsigned widest = rxq_warp_max(n);
                if (k < owned) rxq_sort(lists + at, n, widest);
            }
            __syncthreads();
            const unsigned total = list_start(owned);
            if (!cursors) {
                for (unsigned j = t; j < total; j += T) items[first + j] = lists[j];
                return;
            }
            // lists and items + first agree modulo 16 bytes: a head of up to 3 words, 16-byte
            // pieces, a tail of up to 3
            const unsigned head = min(total, (4u - skew) & 3u);
            const unsigned pieces = (total - head) >> 2, tail = head + 4 * pieces;
            if (t < head) items[first + t] = lists[t];
            const uint4* from = reinterpret_cast<const uint4*>(lists + head);
            uint4* to = reinterpret_cast<uint4*>(items + first + head);
            for (unsigned j = t; j < pieces; j += T) to[j] = from[j];
            if (t < total - tail) items[first + tail + t] = lists[tail + t];
            return;
        }
        // each warp takes 32 consecutive owned lists: every lane sorts one, then the warp copies
        // their entries (contiguous in `lists`) out with consecutive lanes on consecutive
        // entries, each finding its list among the warp's 32 starts; no block barrier
        const unsigned lane = t & 31;
        for (unsigned kb = t - lane; kb < owned; kb += T) {
            const unsigned k = kb + lane;
            const unsigned n = k < owned ? start[k + 1] - start[k] : 0;
            const unsigned widest = rxq_warp_max(n);
            if (k < owned) rxq_sort(lists + start[k], n, widest);
            __syncwarp();
            const unsigned kend = min(kb + 32, owned);
            for (unsigned j = start[kb] + lane; j < start[kend]; j += 32) {
                // the list holding entry j: the last start at or before it
                unsigned lo = kb, hi = kend;
                while (hi - lo > 1) {
                    const unsigned mid = (lo + hi) >> 1;
                    if (start[mid] <= j) lo = mid;
                    else hi = mid;
                }
                items[base[lo] + (j - start[lo])] = lists[j];
            }
            __syncwarp();
        }
        return;
    } else {
        // FF: the faces of every local edge (local face ids, each face once per edge), then each
        // owned face's neighbours through its edges
        for (unsigned f = t; f < P.nf; f += T) {
            for (unsigned c = 0; c < 3; ++c) {
                const unsigned e = fe[3 * f + c] >> 1;
                if ((c > 0 && (fe[3 * f] >> 1) == e) || (c > 1 && (fe[3 * f + 1] >> 1) == e))
                    continue;
                atomicAdd(&cnt[e], 1u);
            }
        }
        __syncthreads();
        // offsets of the edge lists
        unsigned* start = cnt + P.ne;
        unsigned short* ef = reinterpret_cast<unsigned short*>(start + P.ne + 1);
        for (unsigned e = t; e < P.ne; e += T) start[e] = cnt[e];
        __syncthreads();
        const unsigned total = rxq_scan(start, P.ne);
        for (unsigned e = t; e < P.ne; e += T) cnt[e] = start[e];
        if (t == 0) start[P.ne] = total;
        __syncthreads();
        for (unsigned f = t; f < P.nf; f += T) {
            for (unsigned c = 0; c < 3; ++c) {
                const unsigned e = fe[3 * f + c] >> 1;
                if ((c > 0 && (fe[3 * f] >> 1) == e) || (c > 1 && (fe[3 * f + 1] >> 1) == e))
                    continue;
                ef[atomicAdd(&cnt[e], 1u)] = (unsigned short)f;
            }
        }
        __syncthreads();
        // owned face k: every face g != k on one of its edges, counted at its first edge
        for (unsigned k = t; k < owned; k += T) {
            if (!is_active(k)) continue;
            unsigned n = 0;
            unsigned* out = pass == RXQ_FILL ? items + offsets[row(k)] : nullptr;
            unsigned es[3];
            for (unsigned c = 0; c < 3; ++c) es[c] = fe[3 * k + c] >> 1;
            for (unsigned c = 0; c < 3; ++c) {
                if ((c > 0 && es[0] == es[c]) || (c > 1 && es[1] == es[c])) continue;
                for (unsigned i = start[es[c]]; i < start[es[c] + 1]; ++i) {
                    const unsigned g = ef[i];
                    if (g == k) continue;
                    bool earlier = false;
                    for (unsigned d = 0; d < c && !earlier; ++d) {
                        if ((d > 0 && es[0] == es[d])) continue;
                        for (unsigned j = start[es[d]]; j < start[es[d] + 1]; ++j)
                            if (ef[j] == g) {
                                earlier = true;
                                break;
                            }
                    }
                    if (earlier) continue;
                    if (out) out[n] = gf[g];
                    ++n;
                }
            }
            if (pass == RXQ_COUNT) counts[row(k)] = n;
            else rxq_sort(out, n);
        }
    }
}

// A kernel per kind of query, so that no query pays another's registers or code: in a shared
// kernel, the manifold path of EF and FF, EF's staging and the staged transposes each slowed
// the queries that did not use them.
// Each query has its kernel, with the query a constant, so that every warp's set-up (which
// maps, rows and sizes the query reads) folds away at compile time.
// All are held to 32 registers, 8 blocks of 256 threads on an SM: they wait on memory, and more
// warps hide it (the host gives EF and FF only the manifold path's shared memory where every
// patch is manifold, and FV, FE and EV none).
// (the host names them rxq_query_ and the query's name: src/patch/query/cuda.rs)
#define RXQ_QUERY_KERNEL(name, Q)                                                     \
    extern "C" __global__ void __launch_bounds__(256, 8) rxq_query_##name(            \
        RXQ_QUERY_PARAMS) {                                                           \
        rxq_query_body<Q>(RXQ_QUERY_ARGS);                                            \
    }
RXQ_QUERY_KERNEL(vv, RXQ_VV)
RXQ_QUERY_KERNEL(ve, RXQ_VE)
RXQ_QUERY_KERNEL(vf, RXQ_VF)
RXQ_QUERY_KERNEL(ev, RXQ_EV)
RXQ_QUERY_KERNEL(ef, RXQ_EF)
RXQ_QUERY_KERNEL(fv, RXQ_FV)
RXQ_QUERY_KERNEL(fe, RXQ_FE)
RXQ_QUERY_KERNEL(ff, RXQ_FF)
