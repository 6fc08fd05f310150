// v10 (as at c2b49bf) against two ways of shortening the few-row path. VARIANT 0 = v10's
// push_softmax; 1 = every warp pushes its own {max, sum} into every block of the cluster (no
// block barrier, no block merge before the exchange), and each block merges CLUSTER x WARPS
// partials; 2 = 1 with the values held as floats and their exponentials kept (computed once;
// S = 0 only). Extra block size: 128 threads.
#include "../../src/phase24/kernels/softmax_v10_cluster_push.cu"

// {max, sum} of P partials (P a power of two, any size): each lane merges P / 32 of them, then
// the warp merges the lanes' (merge_posts when P <= 32).
template <int P>
__device__ __forceinline__ MaxSum merge_many(const MaxSum* parts) {
    if constexpr (P <= 32) {
        return merge_posts<P>(parts);
    } else {
        const int lane = threadIdx.x % 32;
        MaxSum q[P / 32];
        float m = -CUDART_INF_F;
#pragma unroll
        for (int j = 0; j < P / 32; ++j) q[j] = parts[lane + 32 * j], m = fmaxf(m, q[j].m);
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < P / 32; ++j) s += scaled_sum(q[j].m, q[j].s, m);
        const float M = warp_max_redux(m);
        return {M, warp_sum(scaled_sum(m, s, M))};
    }
}

// Each warp's partial (in every lane) into parts[rank * WARPS + warp] of every block.
template <int CLUSTER, int WARPS>
__device__ __forceinline__ MaxSum warp_push_total(MaxSum mine, MaxSum* parts, unsigned long long* bar) {
    const int t = threadIdx.x, lane = t % 32, rank = cg::this_cluster().block_rank();
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (t == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(shared_address(bar)), "r"(CLUSTER * WARPS * 8) : "memory");
    if (lane < CLUSTER) {  // lane l sends to block l
        unsigned dst, dst_bar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(shared_address(&parts[rank * WARPS + t / 32])), "r"(lane));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst_bar) : "r"(shared_address(bar)), "r"(lane));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                     ::"r"(dst), "f"(mine.m), "f"(mine.s), "r"(dst_bar) : "memory");
    }
    asm volatile(
        "{\n .reg .pred done;\n WAIT:\n"
        " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
        " @!done bra WAIT;\n}" ::"r"(shared_address(bar)) : "memory");
    return merge_many<CLUSTER * WARPS>(parts);
}

// A slot's V values as floats.
template <typename T>
__device__ __forceinline__ void each_slot_value(const uint4& r, float (&v)[Vec16<T>::size]) {
    const T* e = reinterpret_cast<const T*>(&r);
#pragma unroll
    for (int i = 0; i < Vec16<T>::size; ++i) v[i] = to_float(e[i]);
}

template <int VAR, typename T, int THREADS, int K, int S, int CLUSTER>
__device__ void warp_push_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size, WARPS = THREADS / 32;
    extern __shared__ uint4 held[];
    __shared__ MaxSum parts[CLUSTER * WARPS];
    __shared__ unsigned long long landed;
    const int rank = (int)cg::this_cluster().block_rank(), t = threadIdx.x;
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const int mid = min(end, begin + K * THREADS * V);
    const bool vec = rows_aligned16(x, y, N, x_stride);
    const T* in = x + row * x_stride;
    T* out = y + row * (long long)N;
    cluster_push_arm(&landed);
    if constexpr (S > 0) copy_slots_async<T, S, THREADS>(held, in, mid, end, vec);
    uint4 r[K];
    load_raw<T, K, THREADS>(in, begin, mid, t, vec, r);
    if constexpr (VAR == 2 && S == 0) {
        float v[K][V];
#pragma unroll
        for (int k = 0; k < K; ++k)  // the raw slots as floats (columns past mid are -inf)
            each_slot_value<T>(r[k], v[k]);
        MaxSum mine;
        mine.m = warp_max_redux(held_max(v));
        mine.s = warp_sum(exp_sum_in_place(v, mine.m));
        const MaxSum total = warp_push_total<CLUSTER, WARPS>(mine, parts, &landed);
        scale(v, weight(mine.m, total.m) / total.s);
        store_slots<T, K, THREADS>(out, begin, mid, t, vec, v);
    } else {
        MaxSum mine;
        mine.m = warp_max_redux(split_max<T, K, S, THREADS>(r, held));
        mine.s = warp_sum(split_exp_sum<T, K, S, THREADS>(r, held, mine.m));
        const MaxSum total = warp_push_total<CLUSTER, WARPS>(mine, parts, &landed);
        split_store<T, K, S, THREADS>(out, begin, mid, end, vec, r, held, mine.m,
                                      weight(mine.m, total.m) / total.s);
    }
}

#define X_KERNEL(tag, T, THREADS, K, S, CLUSTER)                                                   \
    SOFTMAX_EXPORT(x##_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag, T,                          \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, VARIANT == 2 ? 1 : v10_per_sm(sizeof(T), S) / THREADS), \
                   KERNEL_OF<T, THREADS, K, S, CLUSTER>)
#if VARIANT == 0
#define KERNEL_OF push_softmax
#else
template <typename T, int THREADS, int K, int S, int CLUSTER>
__device__ void variant_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    warp_push_softmax<VARIANT, T, THREADS, K, S, CLUSTER>(x, y, M, N, x_stride);
}
#define KERNEL_OF variant_softmax
#endif
#define X_BOTH(THREADS, K, S, CLUSTER) X_KERNEL(f32, float, THREADS, K, S, CLUSTER) X_KERNEL(bf16, __nv_bfloat16, THREADS, K, S, CLUSTER)
#define X_S0(C) X_BOTH(128, 4, 0, C) X_BOTH(256, 4, 0, C) X_BOTH(512, 4, 0, C) X_BOTH(1024, 4, 0, C)
X_S0(4) X_S0(8) X_S0(16)
X_BOTH(512, 4, 4, 16)
