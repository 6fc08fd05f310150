// Thread-block clusters (Hopper, sm_90): what the rungs that give a row to a cluster share
// (v5, v7, v8, v9, v10). Include it after softmax_common.cuh, from files built for sm_90a only.
#pragma once

#include <cooperative_groups.h>

#include "softmax_common.cuh"

namespace cg = cooperative_groups;

// X(args..., CLUSTER) for each cluster size the launchers may pick (16 is "non-portable": the
// launcher allows it on the kernel first).
#define FOR_EACH_CLUSTER(X, ...) \
    X(__VA_ARGS__, 1) X(__VA_ARGS__, 2) X(__VA_ARGS__, 4) X(__VA_ARGS__, 8) X(__VA_ARGS__, 16)

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

// --8<-- [start:push]
// The whole row's {max, sum} with partials pushed rather than pulled (v10). Each block keeps
// one mbarrier, set up before the loads, that expects CLUSTER partials of 8 bytes. After its own
// reduction a block writes its partial into every block's `parts[rank]` with st.async, which
// counts the bytes on the receiver's mbarrier; a block then waits until its own CLUSTER
// partials have landed, and merges them locally. No block waits for the slowest one to reach
// a barrier, nobody reads remote memory, and no barrier is needed before exiting: a block's
// shared memory is written only before its own wait ends.
// Call from every thread before the loads: thread 0 initialises the mbarrier, and the relaxed
// cluster arrive publishes it; cluster_total_push waits for the whole cluster's arrivals.
__device__ __forceinline__ void cluster_push_arm(unsigned long long* bar) {
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// `part` is this block's {max, sum} (in every thread); returns the row's, in every thread.
template <int CLUSTER>
__device__ __forceinline__ MaxSum cluster_total_push(MaxSum part, MaxSum* parts,
                                                     unsigned long long* bar) {
    const int t = threadIdx.x, rank = cg::this_cluster().block_rank();
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every mbarrier is initialised
    if (t == 0)  // arm it: one arrival (this one) and CLUSTER partials of 8 bytes to come. A
                 // partial may land first: the byte count may go below zero meanwhile.
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(shared_address(bar)), "r"(CLUSTER * 8) : "memory");
    if (t < CLUSTER) {  // thread t sends to block t
        unsigned dst, dst_bar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(shared_address(&parts[rank])), "r"(t));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst_bar) : "r"(shared_address(bar)), "r"(t));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                     ::"r"(dst), "f"(part.m), "f"(part.s), "r"(dst_bar) : "memory");
    }
    asm volatile(
        "{\n .reg .pred done;\n WAIT:\n"
        " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
        " @!done bra WAIT;\n}" ::"r"(shared_address(bar)) : "memory");
    return warp_merge_lean(t % 32 < CLUSTER ? parts[t % 32] : MaxSum{-CUDART_INF_F, 0.f});
}
// --8<-- [end:push]
