// Thread-block clusters (Hopper, sm_90): what the rungs that give a row to a cluster share
// (v5, v7, v8, v9). Include it after softmax_common.cuh, from files built for sm_90a only.
#pragma once

#include <cooperative_groups.h>

#include "softmax_common.cuh"

namespace cg = cooperative_groups;

// The columns [begin, end) of a row that block `rank` of a CLUSTER-block cluster holds: the row
// cut into CLUSTER chunks of whole 16-byte slots (the last chunks may be short or empty).
template <typename T, int CLUSTER>
__device__ __forceinline__ void cluster_columns(int N, int rank, int& begin, int& end) {
    constexpr int V = Vec16<T>::size;
    const int chunk = ((N + V - 1) / V + CLUSTER - 1) / CLUSTER * V;
    begin = min(N, rank * chunk);
    end = min(N, begin + chunk);
}

// The two halves of a cluster barrier: arrive (release) and wait (acquire), so a block can do
// work between saying "I am done reading" and waiting for the others to say it.
__device__ __forceinline__ void cluster_arrive() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// --8<-- [start:lean_total]
// The whole row's {max, sum} with v6's lean reductions (v7, v8, v9): the block merges its warps'
// partials into `slot`, a cluster barrier makes every block's slot visible, then the first warp
// reads the CLUSTER slots through distributed shared memory and merges them into `total`. All
// threads may read `total` after the caller's next __syncthreads(); the caller must also keep
// its `slot` alive until every block of the cluster has read it.
template <int THREADS, int CLUSTER>
__device__ __forceinline__ void cluster_total_lean(MaxSum mine, MaxSum& slot, MaxSum& total,
                                                   int parity = 0) {
    cg::cluster_group cluster = cg::this_cluster();
    const int t = threadIdx.x;
    MaxSum part = block_merge<THREADS / 32>(mine, parity);
    if (t == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (t < 32) {
        MaxSum row_total = warp_merge_lean(t < CLUSTER ? *cluster.map_shared_rank(&slot, t)
                                                       : MaxSum{-CUDART_INF_F, 0.f});
        if (t == 0) total = row_total;
    }
}
// --8<-- [end:lean_total]
