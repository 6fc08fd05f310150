// v10 (cuda-v10, Hopper only): v9 with the cluster's partials pushed, not pulled.
//
// Changed from v9: v7 and v9 combine the blocks' {max, sum} with a cluster barrier (every block
// waits for the slowest to arrive), then reads of the other blocks' shared memory (remote, so
// slow), then a second barrier before exiting (so nobody leaves while its partial may still be
// read). Here each block writes its partial into every block of the cluster with st.async,
// which also counts the bytes on the receiver's mbarrier; a block waits only until its own
// CLUSTER partials have landed (cluster_total_push, below). Everything else is
// v9's: K slots in registers, S in shared memory (S = 0 is v7's block), exponentials computed
// twice.
// Prediction: an exploration kernel (floats in registers, exponentials once) went from 77% to
// 94% of copy on fp32 1024 x 262144 when only this reduction changed: the long rows, where a
// cluster of 8 or 16 blocks waited on each other, should climb past 90%.
// Outcome (results/h200/tune.json and the bench that followed it): the tuner chose
// v10 on every bulk row of 65536-262144 fp32 and 32768-262144 bf16, and on 7 of the 8 few-row
// shapes (bf16 1 x 32768 kept v5). cuda-v10 on rows of 32K-256K: fp32 97.2 / 97.9 / 98.0 /
// 93.3%, bf16 96.8 / 96.6 / 95.8 / 92.2% of copy (v9 before: at best 94.0 / 92.3 / 87.9% fp32 from 64K, 90.8 / 90.4 /
// 87.0 / 82.8% bf16). The winners are mostly S = 0 (v7's blocks, 256 or 512 threads, clusters
// of 4 to 16): once waiting on the cluster was cheap, holding more of the row per SM stopped
// paying, except on the 1 MB fp32 and 512 KB bf16 rows (S = 4). 64 x 262144 stays at 73% (fp32)
// and 64% (bf16) of the 4 GB copy, where a copy of the same bytes reaches 85% and 74%.
// Then, for few rows: a row spread over 16 SMs leaves each block little to do but wait on one
// reduction after another, so their latency is what counts. v10 takes a warp's max with one
// redux.sync and merges a block's warps and a cluster's blocks in log2(P) shuffle steps, not 5
// (merge_posts, below).
// Prediction (explorations/2026-12-01-few-row-reductions/): 1-3 points of a same-size copy on
// the eight few-row shapes, nothing lost on the bulk rows.
// Outcome (the snapshot against the one before it, results/h200/history/softmax-b7bb2d4.json):
// GPU time 1.3-4.7% shorter on the eight few-row shapes, 1.2-3.5 points more of a same-size copy
// (fp32 83.8 / 81.2 / 94.7 / 88.4%, bf16 70.2 / 79.2 / 82.8 / 89.3% at 1 x 32768, 8 x 131072,
// 64 x 32768, 64 x 262144); the bulk rows v10 runs within -1.0..+1.2%.
// Last, blocks of 128 threads as well: on a row spread over 16 SMs, fewer warps to merge before
// the push. Prediction (explorations/2026-12-01-warp-push/): the fastest block at 1 x 32768.
// Outcome (against results/h200/history/softmax-b1d2840.json): the tuner chose 128 threads at
// 1 x 32768 in both dtypes (bf16 had kept v5); cuda's GPU time there 5.2% (fp32) and 9.2% (bf16)
// shorter, 84.2% and 79.8% of a same-size copy; bulk rows within -0.9..-0.4%.
#include "softmax_v9_cluster_smem.cu"  // v9's split of a block's chunk (v8's copies, v7's raw slots)
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 185-4179 GB/s (median 4076); bf16 46-4193 GB/s (median 2267).
// Rows of 32768 to 262144, % of copy: fp32 94-98%; bf16 93-98%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v10_cluster_push.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:merge]
// Merging few partials in few steps. (1) A warp's max in one instruction: redux.sync takes the
// max of 32-bit integers, and a float's bits, with the magnitude bits flipped when the sign is set,
// are integers in the floats' order (-0 just below +0; a NaN with its sign set sorts below -inf
// and is skipped like fmaxf skips it, the sum still spreads it). The flip is its own inverse.
// (2) P partials (a block's warps, a cluster's blocks) merged by shuffles of width P, log2(P)
// steps instead of 5: every lane reads partial lane % P, so each group of P lanes holds all of them.
__device__ __forceinline__ int flip_order(int bits) { return bits ^ ((bits >> 31) & 0x7fffffff); }
__device__ __forceinline__ float warp_max_redux(float v) {
    return __int_as_float(flip_order(__reduce_max_sync(0xffffffffu, flip_order(__float_as_int(v)))));
}

// The {max, sum} of the P partials in shared memory, in every thread.
template <int P>
__device__ __forceinline__ MaxSum merge_posts(const MaxSum* posts) {
    static_assert(P >= 1 && P <= 32 && (P & (P - 1)) == 0, "P partials: a power of two, at most a warp");
    const MaxSum p = posts[threadIdx.x % P];
    if constexpr (P == 1) return p;
    const float m = warp_max_redux(p.m);
    return {m, warp_sum(scaled_sum(p.m, p.s, m), P)};
}
// --8<-- [end:merge]

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
    return merge_posts<CLUSTER>(parts);
}
// --8<-- [end:push]

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int S, int CLUSTER>
__device__ void push_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    extern __shared__ uint4 held[];            // S * THREADS slots: columns mid..end of the chunk
    __shared__ MaxSum parts[CLUSTER];          // every block's partial, pushed here by its owner
    __shared__ MaxSum posts[THREADS / 32];     // each warp's partial
    __shared__ unsigned long long landed;      // mbarrier: counts the partials' bytes in
    const int rank = CLUSTER > 1 ? (int)cg::this_cluster().block_rank() : 0, t = threadIdx.x;
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const int mid = min(end, begin + K * THREADS * V);  // registers: begin..mid; shared: mid..end
    const bool vec = rows_aligned16(x, y, N, x_stride);
    const T* in = x + row * x_stride;
    T* out = y + row * (long long)N;

    if constexpr (CLUSTER > 1) cluster_push_arm(&landed);
    if constexpr (S > 0) copy_slots_async<T, S, THREADS>(held, in, mid, end, vec);
    uint4 r[K];
    load_raw<T, K, THREADS>(in, begin, mid, t, vec, r);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max_redux(split_max<T, K, S, THREADS>(r, held));
    mine.s = warp_sum(split_exp_sum<T, K, S, THREADS>(r, held, mine.m));
    MaxSum total = merge_posts<THREADS / 32>(post_warps(mine, posts));  // the block's, in all
    if constexpr (CLUSTER > 1) total = cluster_total_push<CLUSTER>(total, parts, &landed);
    split_store<T, K, S, THREADS>(out, begin, mid, end, vec, r, held, mine.m,
                                  weight(mine.m, total.m) / total.s);
}
// --8<-- [end:kernel]

// Threads per SM that registers must allow: 2048 in fp32 with registers only (K = 4 slots, 32
// registers in all), 1536 for 16-bit types, whose conversions need a few more, or with shared
// slots (at 32 registers, fp32 (512, 4, 4) spilled); 1024 when S >= 12 fills shared memory anyway.
constexpr int v10_per_sm(int bytes, int s) { return s >= 12 ? 1024 : bytes == 4 && s == 0 ? 2048 : 1536; }

// --8<-- [start:configs]
// (THREADS, K, S, CLUSTER): as v9's; S = 0 is v7's block, down to 128 threads (one row over
// 16 SMs: the fewer warps a block merges, the sooner it pushes its partial).
#define V10_BLOCKS(X, C)                                                                           \
    X(128, 4, 0, C) X(256, 4, 0, C) X(512, 4, 0, C) X(1024, 4, 0, C) X(512, 4, 4, C)                \
    X(1024, 4, 4, C) X(256, 4, 12, C) X(512, 4, 12, C)
#define V10_CONFIGS(X) EVERY_CLUSTER(V10_BLOCKS, X)
// --8<-- [end:configs]
#define V10_KERNEL(tag, T, THREADS, K, S, CLUSTER)                                                 \
    SOFTMAX_EXPORT(softmax_v10_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag, T,                   \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v10_per_sm(sizeof(T), S) / THREADS),                \
                   push_softmax<T, THREADS, K, S, CLUSTER>)
#define V10_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V10_KERNEL, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a file including it (an exploration)
V10_CONFIGS(V10_EVERY_DTYPE)
#endif
