// Exploration (H200, 2026-11-30): exponentials once, floats held in registers, QuACK-like block
// shapes, and the cluster's {max, sum} either pulled as v7 does (cluster_total_lean) or pushed
// into every block's shared memory (cluster_total_push, which became cuda-v10's reduction).
// Runs 1 and 2 (results/h200/explore/cuda-push-2026-11-30-*) ran this file as of their commits,
// with its own copy of the push code; run 2 also timed v7/v9-shaped blocks that are now cuda-v10.
#include "softmax_common.cuh"
#include "softmax_cluster.cuh"

template <typename T, int THREADS, int K, int CLUSTER, bool PUSH>
__device__ void x_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    __shared__ MaxSum parts[CLUSTER];
    __shared__ alignas(8) unsigned long long bar;
    __shared__ MaxSum slot, total;
    const int t = threadIdx.x;
    const int rank = CLUSTER > 1 ? (int)cg::this_cluster().block_rank() : 0;
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);
    if constexpr (PUSH && CLUSTER > 1) cluster_push_arm(&bar);
    float v[K][V];
    load_slots<T, K, THREADS>(x + row * x_stride, begin, end, t, vec, v);
    MaxSum w;
    w.m = warp_max(held_max(v));
    w.s = warp_sum(exp_sum_in_place(v, w.m));
    MaxSum b = block_merge<THREADS / 32>(w);  // the block's partial, in every thread
    MaxSum row_total;
    if constexpr (CLUSTER == 1) {
        row_total = b;
    } else if constexpr (PUSH) {
        row_total = cluster_total_push<CLUSTER>(b, parts, &bar);
    } else {
        cluster_total_lean<THREADS, CLUSTER>(w, slot, total);
        cluster_arrive();
        __syncthreads();
        row_total = total;
    }
    scale(v, weight(w.m, row_total.m) / row_total.s);
    store_slots<T, K, THREADS>(y + row * (long long)N, begin, end, t, vec, v);
    if constexpr (!PUSH && CLUSTER > 1) cluster_wait();
}

#define X_ONE(THREADS, K, CLUSTER, MINB, PUSH, tag, T)                                          \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)  \
        x_t##THREADS##_k##K##_c##CLUSTER##_b##MINB##_p##PUSH##_##tag(const T* x, T* y, long long M, \
                                                                  int N, long long s) {      \
        x_softmax<T, THREADS, K, CLUSTER, PUSH>(x, y, M, N, s);                                  \
    }
#define X_BF(THREADS, K, MINB, PUSH)                                                             \
    X_ONE(THREADS, K, 4, MINB, PUSH, bf16, __nv_bfloat16) X_ONE(THREADS, K, 8, MINB, PUSH, bf16, __nv_bfloat16) \
    X_ONE(THREADS, K, 16, MINB, PUSH, bf16, __nv_bfloat16)
#define X_F(THREADS, K, MINB, PUSH)                                                              \
    X_ONE(THREADS, K, 4, MINB, PUSH, f32, float) X_ONE(THREADS, K, 8, MINB, PUSH, f32, float)  \
    X_ONE(THREADS, K, 16, MINB, PUSH, f32, float)

X_BF(256, 4, 4, 1) X_BF(512, 4, 2, 1) X_BF(128, 4, 8, 1) X_ONE(256, 4, 2, 4, 1, bf16, __nv_bfloat16)
X_F(256, 16, 2, 1) X_F(256, 16, 2, 0) X_F(256, 8, 4, 1) X_F(512, 8, 2, 1) X_F(128, 16, 4, 1) X_F(128, 8, 8, 1)
X_ONE(256, 8, 2, 4, 1, f32, float) X_ONE(1024, 8, 1, 1, 1, f32, float)
