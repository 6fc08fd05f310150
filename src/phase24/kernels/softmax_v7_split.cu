// v7 (cuda-v7): a row split across S blocks that meet through global memory (any GPU).
//
// Changed from v5 and v6: a cluster holds at most 8 blocks (portable size), so a 1 MB row
// filled 8 blocks of 1024 threads x 32 values, one block per SM: while a block waited at its
// cluster barrier, nothing else on its SM loaded bytes. Here a row is cut into S chunks of at
// most THREADS x K x V values (S chosen by the launcher, any size up to the number of SMs), one
// chunk per block, each kept in registers with v6's lean reductions. A block posts its chunk's
// {max, sum} to global memory, counts itself in, waits until the S blocks of its row are in,
// merges the S partials and writes its chunk: still one read and one write, with 16 values per
// thread so 1536 threads (3-12 blocks, each at its own stage) fit on an SM. Few rows are cut
// into more chunks, so that 8 rows of 131072 fill 128 SMs instead of 8 clusters' 64.
// Waiting for another block is only safe if that block is running or will start: blocks take
// tickets in the order they start (ticket t -> row t / S, chunk t % S) and wait only for the
// other tickets of their row; with S <= the number of SMs those tickets are always held by
// running blocks or taken next, so the wait ends (no assumption about the order blocks start).
// The counters live in a workspace that the last block out resets to zero for the next launch.
// Prediction: long rows reach v6's level (~95% of copy); few-row shapes run on all the SMs.
#include "softmax_common.cuh"

// Workspace (unsigned words), zeroed once when allocated and left zeroed by every launch:
//   [0] next ticket, [1] unused, [2 .. 2+M) arrivals per row, [2+M .. 2+2M) departures per row;
//   then M * S MaxSum partials (8 bytes each, 8-byte aligned by the launcher).
struct SplitWork {
    unsigned* ticket;
    unsigned* arrived;
    unsigned* left;
    MaxSum* parts;
};

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spin until *counter reaches target; give up after 2 s (then the row is written as NaN, so
// a broken launch shows up in the checker instead of hanging the GPU).
__device__ __forceinline__ bool wait_for(const unsigned* counter, unsigned target) {
    const unsigned long long start = global_ns();
    for (unsigned i = 1; load_acquire(counter) < target; ++i)
        if (i % 1024 == 0 && global_ns() - start > 2000000000ull) return false;
    return true;
}

// --8<-- [start:kernel]
template <typename T, int THREADS, int K>
__device__ void split_softmax(const T* x, T* y, long long M, int N, long long x_stride, int S,
                              unsigned* work) {
    constexpr int V = Vec16<T>::size;
    constexpr int WARPS = THREADS / 32;
    const SplitWork w{work, work + 2, work + 2 + M,
                      reinterpret_cast<MaxSum*>(work + 2 + 2 * M + (M & 1))};
    __shared__ unsigned ticket;
    __shared__ MaxSum row_total;
    bool timed_out = false;
    if (threadIdx.x == 0) {
        ticket = atomicAdd(w.ticket, 1u);
        if (ticket == gridDim.x - 1) *w.ticket = 0;  // the last ticket: every block has one now
    }
    __syncthreads();
    const long long row = ticket / S;
    const int chunk_id = ticket % S;
    const int chunk = ((N + V - 1) / V + S - 1) / S * V;  // whole 16-byte slots
    const int begin = min(N, chunk_id * chunk), end = min(N, begin + chunk);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    float v[K][V];
    load_slots<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, v);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max(held_max(v));
    mine.s = warp_sum(exp_sum_in_place(v, mine.m));
    MaxSum part = block_merge<WARPS>(mine);

    if (threadIdx.x < 32) {
        if (threadIdx.x == 0) {
            w.parts[row * S + chunk_id] = part;
            __threadfence();  // the partial is visible before the arrival is counted
            atomicAdd(w.arrived + row, 1u);
            timed_out = !wait_for(w.arrived + row, (unsigned)S);
        }
        __syncwarp();
        // Merge the row's S partials; __ldcg reads L2, never a stale line of this SM's L1.
        const MaxSum* parts = w.parts + row * S;
        MaxSum total{-CUDART_INF_F, 0.f};
        for (int i = threadIdx.x; i < S; i += 32) total.m = fmaxf(total.m, __ldcg(&parts[i].m));
        total.m = warp_max(total.m);
        for (int i = threadIdx.x; i < S; i += 32)
            total.s += scaled_sum(__ldcg(&parts[i].m), __ldcg(&parts[i].s), total.m);
        total.s = warp_sum(total.s);
        if (threadIdx.x == 0) row_total = timed_out ? MaxSum{CUDART_NAN_F, CUDART_NAN_F} : total;
    }
    __syncthreads();
    scale(v, weight(mine.m, row_total.m) / row_total.s);
    store_slots<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, v);

    // Leave the workspace zeroed for the next launch: the last block of a row to leave resets
    // the row's counters (the ticket counter was reset by the block that took the last ticket).
    if (threadIdx.x == 0 && atomicAdd(w.left + row, 1u) == (unsigned)S - 1) {
        w.arrived[row] = 0;
        w.left[row] = 0;
    }
}
// --8<-- [end:kernel]

// Blocks per SM that ptxas must leave room for: 1536 threads when a thread holds 16 values
// (40 registers; at 32, the 2048-thread budget, the wait's extra state spills).
// Ampere's ptxas needs a few more registers for the same code: plan for 1024 threads there.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int V7_THREADS_PER_SM = 1024;
#else
constexpr int V7_THREADS_PER_SM = 1536;
#endif
constexpr int v7_min_blocks(int threads, int values) {
    return values <= 16 && threads < V7_THREADS_PER_SM ? V7_THREADS_PER_SM / threads : 1;
}

#define V7_ONE(THREADS, K, tag, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(THREADS, v7_min_blocks(THREADS, K * Vec16<T>::size)) \
        softmax_v7_t##THREADS##_k##K##_##tag(const T* x, T* y, long long M, int N, long long s,   \
                                             int S, unsigned* work) {                            \
        split_softmax<T, THREADS, K>(x, y, M, N, s, S, work);                                     \
    }
#define V7_F32(THREADS, K) V7_ONE(THREADS, K, f32, float)
#define V7_16(THREADS, K) V7_ONE(THREADS, K, f16, __half) V7_ONE(THREADS, K, bf16, __nv_bfloat16)

// The (THREADS, K) pairs the launcher may choose: 16 values per thread in blocks of 128-512
// threads, or 32 values per thread in one block of 1024 per SM.
V7_F32(128, 4) V7_F32(256, 4) V7_F32(512, 4) V7_F32(1024, 8)
V7_16(128, 2) V7_16(256, 2) V7_16(512, 2) V7_16(1024, 4)
