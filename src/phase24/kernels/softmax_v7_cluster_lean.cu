// v7 (cuda-v7, Hopper only): v5's cluster with v6's lean reductions, two or more blocks per SM,
// and clusters of up to 16 blocks.
//
// Changed from v5: a 1 MB row on a cluster of 8 meant 8 blocks of 1024 threads x 32 values,
// one block per SM; while it waited at the cluster barrier its SM moved no bytes (v5 stayed at
// 84-87% of copy on fp32 rows of 32K-256K, 59-66% on bf16 ones, whose blocks hold half as many
// bytes). Here a thread holds 16 values (32 registers), so 2048 threads, i.e. two or more
// blocks, share an SM and one block's wait overlaps another's loads and stores; the cluster
// grows instead, up to 16 blocks (a "non-portable" size, which the launcher must allow on the
// kernel before launching it). The reductions are v6's: max, exponentials, sum.
// Prediction: long rows at the copy ceiling like v6's medium rows.
#include <cooperative_groups.h>

#include "softmax_common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v7_cluster_lean.cu uses thread-block clusters: build it for sm_90a"
#endif

namespace cg = cooperative_groups;

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void lean_cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    __shared__ MaxSum slot;   // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;  // the whole row's {max, sum}
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = cluster.block_rank();
    const long long row = blockIdx.x / CLUSTER;
    const int chunk = ((N + V - 1) / V + CLUSTER - 1) / CLUSTER * V;  // whole 16-byte slots
    const int begin = min(N, rank * chunk), end = min(N, begin + chunk);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    float v[K][V];
    load_slots<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, v);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max(held_max(v));
    mine.s = warp_sum(exp_sum_in_place(v, mine.m));
    MaxSum part = block_merge<THREADS / 32>(mine);
    if (threadIdx.x == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (threadIdx.x < 32) {
        MaxSum p = threadIdx.x < CLUSTER ? *cluster.map_shared_rank(&slot, threadIdx.x)
                                         : MaxSum{-CUDART_INF_F, 0.f};
        const float m = warp_max(p.m);
        const float s = warp_sum(scaled_sum(p.m, p.s, m));
        if (threadIdx.x == 0) total = {m, s};
    }
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    scale(v, weight(mine.m, total.m) / total.s);
    store_slots<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, v);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

// Blocks per SM to plan registers for: 2048 threads when a thread holds 16 values.
constexpr int v7_min_blocks(int threads, int values) { return values <= 16 ? 2048 / threads : 1; }

#define V7_ONE(THREADS, K, CLUSTER, tag, T)                                                        \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                     \
        __launch_bounds__(THREADS, v7_min_blocks(THREADS, K * Vec16<T>::size))                     \
            softmax_v7_t##THREADS##_k##K##_c##CLUSTER##_##tag(const T* x, T* y, long long M,       \
                                                              int N, long long s) {                \
        lean_cluster_softmax<T, THREADS, K, CLUSTER>(x, y, M, N, s);                               \
    }
// 16 values per thread: K = 4 floats or K = 2 16-byte slots of 8 halves / bfloat16s.
#define V7(THREADS, CLUSTER)                                                                       \
    V7_ONE(THREADS, 4, CLUSTER, f32, float)                                                        \
    V7_ONE(THREADS, 2, CLUSTER, f16, __half) V7_ONE(THREADS, 2, CLUSTER, bf16, __nv_bfloat16)

// The (THREADS, CLUSTER) pairs the launcher may choose; a block holds THREADS x 16 values.
V7(256, 2) V7(512, 2) V7(1024, 2)
V7(256, 4) V7(512, 4) V7(1024, 4)
V7(256, 8) V7(512, 8) V7(1024, 8)
V7(256, 16) V7(512, 16) V7(1024, 16)
