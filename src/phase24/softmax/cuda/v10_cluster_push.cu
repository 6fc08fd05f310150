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
// Prediction: the long rows, where a cluster of 8 or 16 blocks waited on each other for the
// slowest, should climb past 90% of copy, if the wait, not the bytes, is what holds v9 there.
// Then, for few rows: a row spread over 16 SMs leaves each block little to do but wait on one
// reduction after another, so their latency is what counts. v10 takes a warp's max with one
// redux.sync and merges a block's warps and a cluster's blocks in log2(P) shuffle steps, not 5
// (merge_posts, below).
// Prediction: 1-3 points of a same-size copy on the eight few-row shapes, nothing lost on the
// bulk rows.
// Last, blocks of 128 threads as well: on a row spread over 16 SMs, fewer warps to merge before
// the push. Prediction: the fastest block at 1 x 32768.
// Limit: the row still crosses the bus once each way and the exponentials are computed twice;
// with few rows the launch and the first loads' latency, not bandwidth, set the time.
#include "cluster.cuh"      // v5's cluster_columns
#include "cp_async.cuh"     // shared_address, v8's copies
#include "export.cuh"
#include "lean_merge.cuh"   // v6's post_warps
#include "split_slots.cuh"  // v9's split of a block's chunk (and v7's raw slots)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v10_cluster_push.cu uses thread-block clusters: build it for sm_90a"
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

#define V10_KERNEL(tag, T, THREADS, K, S, CLUSTER)                                                 \
    SOFTMAX_EXPORT(softmax_v10_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag, T,                   \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v10_per_sm(sizeof(T), S) / THREADS),                \
                   push_softmax<T, THREADS, K, S, CLUSTER>)
#define V10(THREADS, K, S, CLUSTER) SOFTMAX_EVERY_DTYPE(V10_KERNEL, THREADS, K, S, CLUSTER)  // softmax_v10_t_k_s_c_<dtype>

// --8<-- [start:configs]
// (THREADS, K, S, CLUSTER): as v9's; S = 0 is v7's block, down to 128 threads (one row over
// 16 SMs: the fewer warps a block merges, the sooner it pushes its partial). The same eight
// blocks in clusters of 1 to 16; configs.py lists the same.
V10(128, 4, 0, 1) V10(256, 4, 0, 1) V10(512, 4, 0, 1) V10(1024, 4, 0, 1) V10(512, 4, 4, 1) V10(1024, 4, 4, 1) V10(256, 4, 12, 1) V10(512, 4, 12, 1)
V10(128, 4, 0, 2) V10(256, 4, 0, 2) V10(512, 4, 0, 2) V10(1024, 4, 0, 2) V10(512, 4, 4, 2) V10(1024, 4, 4, 2) V10(256, 4, 12, 2) V10(512, 4, 12, 2)
V10(128, 4, 0, 4) V10(256, 4, 0, 4) V10(512, 4, 0, 4) V10(1024, 4, 0, 4) V10(512, 4, 4, 4) V10(1024, 4, 4, 4) V10(256, 4, 12, 4) V10(512, 4, 12, 4)
V10(128, 4, 0, 8) V10(256, 4, 0, 8) V10(512, 4, 0, 8) V10(1024, 4, 0, 8) V10(512, 4, 4, 8) V10(1024, 4, 4, 8) V10(256, 4, 12, 8) V10(512, 4, 12, 8)
V10(128, 4, 0, 16) V10(256, 4, 0, 16) V10(512, 4, 0, 16) V10(1024, 4, 0, 16) V10(512, 4, 4, 16) V10(1024, 4, 4, 16) V10(256, 4, 12, 16) V10(512, 4, 12, 16)
// --8<-- [end:configs]
