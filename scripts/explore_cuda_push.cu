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

// Pushed cluster partials: thread 0 arms the mbarrier for CLUSTER partials of 8 bytes before
// the loads; after them each block sends its partial to every block of the cluster.
template <int CLUSTER>
__device__ __forceinline__ void push_begin(unsigned long long* bar) {
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
                     "r"(CLUSTER * 8) : "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
template <int CLUSTER>
__device__ __forceinline__ MaxSum push_total(MaxSum b, MaxSum* parts, unsigned long long* bar) {
    const int t = threadIdx.x, rank = cg::this_cluster().block_rank();
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (t < CLUSTER) {
        unsigned dst, rbar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(smem_addr(&parts[rank])), "r"(t));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(smem_addr(bar)), "r"(t));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                     ::"r"(dst), "f"(b.m), "f"(b.s), "r"(rbar) : "memory");
    }
    asm volatile(
        "{\n .reg .pred p;\n WAIT:\n"
        " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n"
        " @!p bra WAIT;\n}" ::"r"(smem_addr(bar)) : "memory");
    const int lane = t % 32;
    return warp_merge_lean(lane < CLUSTER ? parts[lane] : MaxSum{-CUDART_INF_F, 0.f});
}

// v9 (S > 0) or v7 (S = 0) with pushed partials.
template <typename T, int THREADS, int K, int S, int CLUSTER>
__device__ void y_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    extern __shared__ uint4 held[];
    __shared__ MaxSum parts[CLUSTER];
    __shared__ alignas(8) unsigned long long bar;
    const int t = threadIdx.x;
    const int rank = CLUSTER > 1 ? (int)cg::this_cluster().block_rank() : 0;
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const int mid = min(end, begin + K * THREADS * V);
    const bool vec = rows_aligned16(x, y, N, x_stride);
    const T* in = x + row * x_stride;
    T* out = y + row * (long long)N;
    if constexpr (CLUSTER > 1) push_begin<CLUSTER>(&bar);
    if constexpr (S > 0) copy_slots_async<T, S, THREADS>(held, in, mid, end, vec);
    uint4 r[K];
    load_raw<T, K, THREADS>(in, begin, mid, t, vec, r);
    float m = raw_max<T>(r);
    if constexpr (S > 0) {
        cp_async_wait_all();
#pragma unroll 1
        for (int s = 0; s < S; ++s) m = fmaxf(m, raw_max<T>({shared_slot(&held[s * THREADS + t])}));
    }
    MaxSum mine;
    mine.m = warp_max(m);
    float sum = raw_exp_sum<T>(r, mine.m);
#pragma unroll 1
    for (int s = 0; s < S; ++s) sum += raw_exp_sum<T>({shared_slot(&held[s * THREADS + t])}, mine.m);
    mine.s = warp_sum(sum);
    MaxSum b = block_merge<THREADS / 32>(mine);
    MaxSum total = b;
    if constexpr (CLUSTER > 1) total = push_total<CLUSTER>(b, parts, &bar);
    const float f = weight(mine.m, total.m) / total.s;
    store_raw<T, K, THREADS>(out, begin, mid, t, vec, r, mine.m, f);
#pragma unroll 1
    for (int s = 0; s < S; ++s)
        store_raw<T, 1, THREADS>(out, mid + s * THREADS * V, end, t, vec, {shared_slot(&held[s * THREADS + t])},
                                 mine.m, f);
}
constexpr int y_per_sm(int bytes, int s) { return s >= 12 ? 1024 : bytes == 4 ? 2048 : 1536; }
#define Y_ONE(THREADS, K, S, CLUSTER, tag, T)                                                     \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                     \
        __launch_bounds__(THREADS, y_per_sm(sizeof(T), S) / THREADS)                               \
            y_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag(const T* x, T* y, long long M,        \
                                                                     int N, long long s) {         \
        y_softmax<T, THREADS, K, S, CLUSTER>(x, y, M, N, s);                                       \
    }
#define Y(THREADS, K, S) Y_ONE(THREADS, K, S, 1, bf16, __nv_bfloat16) Y_ONE(THREADS, K, S, 2, bf16, __nv_bfloat16) \
    Y_ONE(THREADS, K, S, 4, bf16, __nv_bfloat16) Y_ONE(THREADS, K, S, 8, bf16, __nv_bfloat16) \
    Y_ONE(THREADS, K, S, 16, bf16, __nv_bfloat16)
Y(256, 4, 0) Y(512, 4, 0) Y(1024, 4, 0) Y(512, 4, 4) Y(1024, 4, 4) Y(256, 4, 12) Y(512, 4, 12)
Y(1024, 4, 12) Y(256, 4, 28)

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
X_F(256, 16, 2, 1) X_F(256, 8, 4, 1) X_F(512, 8, 2, 1) X_F(128, 16, 4, 1) X_F(128, 8, 8, 1)
X_ONE(256, 8, 2, 4, 1, f32, float) X_ONE(1024, 8, 1, 1, 1, f32, float)
