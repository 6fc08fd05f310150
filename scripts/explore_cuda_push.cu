// Exploration (not a rung yet): exp once, floats held in registers, QuACK-like block shapes,
// and the cluster's {max, sum} pushed into every block's shared memory (st.async + mbarrier)
// instead of a cluster barrier and remote reads.
#include "softmax_common.cuh"
#include "softmax_cluster.cuh"

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

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
    if constexpr (PUSH && CLUSTER > 1) {
        if (t == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)),
                         "r"(CLUSTER * 8) : "memory");
        }
        asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    }
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
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every mbarrier is initialised
        if (t < CLUSTER) {
            unsigned dst, rbar;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(smem_addr(&parts[rank])), "r"(t));
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(smem_addr(&bar)), "r"(t));
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                         ::"r"(dst), "f"(b.m), "f"(b.s), "r"(rbar) : "memory");
        }
        asm volatile(
            "{\n .reg .pred p;\n WAIT:\n"
            " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n"
            " @!p bra WAIT;\n}" ::"r"(smem_addr(&bar)) : "memory");
        const int lane = t % 32;
        row_total = warp_merge_lean(lane < CLUSTER ? parts[lane] : MaxSum{-CUDART_INF_F, 0.f});
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

X_BF(256, 8, 2, 1) X_BF(256, 8, 2, 0) X_BF(256, 4, 4, 1) X_BF(512, 4, 2, 1) X_BF(128, 8, 4, 1)
X_F(256, 16, 2, 1) X_F(256, 16, 2, 0) X_F(256, 8, 4, 1) X_F(512, 8, 2, 1) X_F(128, 16, 4, 1)
