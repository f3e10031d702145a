// Parallel Directed Edges (src/patch/query/pde.rs), the paper's comparison: one thread per source
// element walks the halfedges in global memory and writes its list at its offset. Halfedge h's
// twin is h ^ 1; target, face and next are per halfedge; vertex_out and face_edge give a vertex's
// outgoing and a face's corner-0 halfedge. A list never runs past its slot (offsets[g + 1]).

#define PDE_NONE 0xffffffffu

extern "C" __global__ void pde_query(const unsigned* __restrict__ target,
                                     const unsigned* __restrict__ face,
                                     const unsigned* __restrict__ next,
                                     const unsigned* __restrict__ vertex_out,
                                     const unsigned* __restrict__ face_edge, unsigned q,
                                     unsigned n, const unsigned* __restrict__ offsets,
                                     unsigned* __restrict__ items) {
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    const unsigned o = offsets[g], cap = offsets[g + 1] - o;
    unsigned* out = items + o;
    unsigned k = 0;
    if (q <= 2) {
        // VV, VE, VF: rotate around the vertex (a boundary halfedge has no face)
        const unsigned start = vertex_out[g];
        if (start == PDE_NONE) return;
        unsigned h = start;
        for (unsigned steps = 0; steps <= cap + 1 && k < cap; ++steps) {
            const unsigned x = q == 0 ? target[h] : (q == 1 ? h >> 1 : face[h]);
            if (x != PDE_NONE) out[k++] = x;
            h = next[h ^ 1];
            if (h == start) break;
        }
    } else if (q <= 4) {
        // EV, EF: the edge's two halfedges are 2g and 2g + 1
        if (q == 3) {
            const unsigned a = target[2 * g + 1], b = target[2 * g];
            if (cap >= 2) {
                out[0] = a;
                out[1] = b;
            }
        } else {
            const unsigned f0 = face[2 * g], f1 = face[2 * g + 1];
            if (f0 != PDE_NONE && k < cap) out[k++] = f0;
            if (f1 != PDE_NONE && k < cap) out[k++] = f1;
        }
    } else {
        // FV, FE, FF: the face's three halfedges, the k-th leaving corner k (held in registers)
        const unsigned h0 = face_edge[g], h1 = next[h0], h2 = next[h1];
        unsigned r[3];
        unsigned m = 0;
        if (q == 5) {
            r[0] = target[h2];
            r[1] = target[h0];
            r[2] = target[h1];
            m = 3;
        } else if (q == 6) {
            r[0] = h0 >> 1;
            r[1] = h1 >> 1;
            r[2] = h2 >> 1;
            m = 3;
        } else {
            const unsigned a = face[h0 ^ 1], b = face[h1 ^ 1], c = face[h2 ^ 1];
            if (a != PDE_NONE) r[m++] = a;
            if (b != PDE_NONE) r[m++] = b;
            if (c != PDE_NONE) r[m++] = c;
        }
        for (unsigned i = 0; i < m && i < cap; ++i) out[i] = r[i];
    }
}
