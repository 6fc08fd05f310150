// A row's {max, sum} over a cluster with the lean reductions (v7 introduced it; v8 and v9 use it
// too): each block merges its warps' partials into its own shared-memory slot, a cluster barrier,
// then one warp reads the CLUSTER slots through distributed shared memory and merges them.
#pragma once
#include <cooperative_groups.h>
#include <math_constants.h>

#include "lean_merge.cuh"

namespace cg = cooperative_groups;

// --8<-- [start:lean_total]
// The whole row's {max, sum} with v6's lean reductions: the block merges its warps'
// partials into `slot`, a cluster barrier makes every block's slot visible, then the first warp
// reads the CLUSTER slots through distributed shared memory and merges them into `total`. All
// threads may read `total` after the caller's next __syncthreads(); the caller must also keep
// its `slot` alive until every block of the cluster has read it.
template <int THREADS, int CLUSTER>
__device__ __forceinline__ void cluster_total_lean(MaxSum mine, MaxSum& slot, MaxSum& total,
                                                   int parity = 0) {
    cg::cluster_group cluster = cg::this_cluster();
    const int t = threadIdx.x;
    MaxSum part = block_merge_lean<THREADS / 32>(mine, parity);
    if (t == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (t < 32) {
        MaxSum row_total = warp_merge_lean(t < CLUSTER ? *cluster.map_shared_rank(&slot, t)
                                                       : MaxSum{-CUDART_INF_F, 0.f});
        if (t == 0) total = row_total;
    }
}
// --8<-- [end:lean_total]
