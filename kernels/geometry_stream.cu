// The geometry stage's processing mode (after geometry.cu): records streamed out to device
// memory.

// ---- the processing mode's stream-out to device memory ---------------------------------------
//
// After a strategy's kernels, its records go to their vertices where they stay on the device
// (CudaGeometry::process_on_device): `rxp_scatter` copies every corner's record to its vertex
// (the runs of one vertex give one record, so concurrent copies write the same bytes) and marks
// the vertex; `rxp_finish` runs the program once for every vertex no index names (outside the
// strategy and its counts), counts the vertices named and sums the invocation counts.
#ifdef RXP_PROGRAM
extern "C" __global__ void __launch_bounds__(256)
    rxp_scatter(const unsigned* __restrict__ idx, unsigned n_idx,
                const unsigned* __restrict__ corners, const VertexOut* __restrict__ queue,
                VertexOut* __restrict__ records, unsigned* __restrict__ named) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_idx) return;
    const unsigned id = idx[i];
    const unsigned at = corners ? corners[i] : i;
    const float4* s = reinterpret_cast<const float4*>(queue + at);
    float4* d = reinterpret_cast<float4*>(records + id);
    for (int k = 0; k < 4; ++k) d[k] = s[k];
    named[id] = 1u;
}

// totals[0]: the vertices named; totals[1]: the invocations (with RXP_COUNT)
extern "C" __global__ void __launch_bounds__(256)
    rxp_finish(const void* table, const unsigned* __restrict__ named, unsigned n,
               const unsigned* __restrict__ counts, VertexOut* __restrict__ records,
               unsigned long long* __restrict__ totals) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned was_named = 0, count = 0;
    if (id < n) {
        was_named = named[id];
        if (!was_named) rxp_store_vertex(records + id, rxp_program(table, id));
#ifdef RXP_COUNT
        count = counts[id];
#endif
    }
    was_named = __reduce_add_sync(0xffffffffu, was_named);
    count = __reduce_add_sync(0xffffffffu, count);
    if ((threadIdx.x & 31) == 0) {
        if (was_named) atomicAdd(&totals[0], (unsigned long long)was_named);
        if (count) atomicAdd(&totals[1], (unsigned long long)count);
    }
}
#endif
