// v5 (cuda-v5, Hopper only): a thread-block cluster shares one long row through distributed
// shared memory.
//
// Changed from v4: a row too long for one block's registers (or one of too few rows to fill
// 132 SMs) is cut into CLUSTER contiguous chunks, one per block of a cluster of up to 8
// blocks that the hardware runs at the same time on neighbouring SMs. Each block keeps its
// chunk in registers as in v4 and reduces it to one {max, sum} partial in its shared memory;
// after a cluster barrier every block reads the CLUSTER partials straight from the other
// blocks' shared memory (DSMEM) and merges them. The row is still read once and written once,
// and 8 SMs work on one row instead of 1. A second barrier, split into arrive (right after the
// remote reads) and wait (just before the block exits), keeps each block's shared memory alive
// until the others have read it without stalling the stores.
// Needs sm_90 (clusters, DSMEM): on Ampere and Ada the launcher uses v2 for such rows.
// Prediction: long rows reach the copy ceiling; few-row shapes run on 8x more SMs.
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 165-3752 GB/s (median 3029); bf16 66-2920 GB/s (median 2248).
// Rows of 32768 to 262144, % of copy: fp32 68-87%; bf16 60-65%.

#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include <cooperative_groups.h>

#include "softmax_v4_shape_specialised.cu"  // v4's exp_in_place, group_merge and rescale

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v5_cluster.cu uses thread-block clusters: build it for sm_90a"
#endif

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

// BLOCKS(X, C), a later rung's list of blocks in clusters of C, for each cluster size C its
// launcher may choose (16 is "non-portable": the launcher allows it on the kernel first).
#define EVERY_CLUSTER(BLOCKS, X) BLOCKS(X, 1) BLOCKS(X, 2) BLOCKS(X, 4) BLOCKS(X, 8) BLOCKS(X, 16)
// --8<-- [end:cluster]

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    __shared__ MaxSum slot;   // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;  // the whole row's {max, sum}
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = cluster.block_rank();
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    float v[K][V];
    load_slots<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, v);
    MaxSum own = exp_in_place(v);
    MaxSum part = group_merge<THREADS>(own);
    if (threadIdx.x == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (threadIdx.x < 32) {
        MaxSum p = threadIdx.x < CLUSTER ? *cluster.map_shared_rank(&slot, threadIdx.x)
                                         : MaxSum{-CUDART_INF_F, 0.f};
        p = warp_merge(p);
        if (threadIdx.x == 0) total = p;
    }
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    rescale(v, own.m, total);
    store_slots<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, v);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

// --8<-- [start:configs]
// (THREADS, K, CLUSTER): CLUSTER blocks of THREADS threads, K slots of 16 bytes a thread, hold a
// row. 16-bit types hold 8 values per slot, so their largest configurations would not fit in
// registers: those are fp32 only.
#define V5_CONFIGS(X)                                                                              \
    X(256, 2, 2) X(256, 4, 2) X(512, 4, 2) X(1024, 2, 2) X(1024, 4, 2)                             \
    X(256, 2, 4) X(256, 4, 4) X(512, 2, 4) X(512, 4, 4) X(1024, 2, 4) X(1024, 4, 4)                \
    X(256, 2, 8) X(256, 4, 8) X(512, 2, 8) X(512, 4, 8) X(1024, 2, 8) X(1024, 4, 8)
#define V5_CONFIGS_F32(X) X(512, 8, 2) X(512, 8, 4) X(512, 8, 8) X(1024, 8, 4) X(1024, 8, 8)
// --8<-- [end:configs]
#define V5_KERNEL(tag, T, THREADS, K, CLUSTER)                                                     \
    SOFTMAX_EXPORT(softmax_v5_t##THREADS##_k##K##_c##CLUSTER##_##tag, T,                           \
                   __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1),                   \
                   cluster_softmax<T, THREADS, K, CLUSTER>)
#define V5_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V5_KERNEL, __VA_ARGS__)
#define V5_FLOAT32(...) V5_KERNEL(f32, float, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V5_CONFIGS(V5_EVERY_DTYPE)
V5_CONFIGS_F32(V5_FLOAT32)
#endif
