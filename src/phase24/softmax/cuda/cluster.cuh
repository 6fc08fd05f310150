// A row shared by a thread-block cluster (v5 introduced it; v7-v10 use it too): which columns
// each block of the cluster holds (cluster_columns), and the two halves of a cluster barrier
// (cluster_arrive, cluster_wait), so a block can work between "done reading the others' shared
// memory" and waiting for them to say the same. Clusters need sm_90 (Hopper).
#pragma once
#include <cooperative_groups.h>

#include "vec16.cuh"

namespace cg = cooperative_groups;

// --8<-- [start:cluster]
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
// --8<-- [end:cluster]
