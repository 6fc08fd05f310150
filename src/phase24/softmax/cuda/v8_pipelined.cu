// v8 (cuda-v8, Hopper only): persistent clusters; the next row streams into shared memory
// while this one is reduced.
//
// Changed from v7: v7's clusters each do one row and exit, so an SM stops loading while its
// blocks wait at the cluster barrier, and the bigger the cluster the longer the wait (fp32
// rows at ~92% of copy with 1 block per row, ~85% with clusters of 8). Here a grid of G
// clusters, as many as fit at once, walks the rows (row, row + G, ...). Each block copies its
// chunk of the NEXT row from global to shared memory with cp.async (asynchronous, no
// registers) as soon as it has taken the current one into registers; the copy runs during the
// reductions, the cluster barrier and the stores, so the SM always has loads in flight. The
// row is still read once and written once: registers hold this row, shared memory the next.
// Prediction: long rows at the copy ceiling; few rows as v7.
// Outcome: no better than v7 anywhere (the tuner never picks it, figures below): with loads
// always in flight the long rows stayed at 79-88% (fp32) of copy, so idle SMs during the
// cluster barrier were not what held v7 back. Kept as a measured negative result.
#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include "softmax_v7_cluster_lean.cu"  // v7's raw slots and its cluster total
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 45-3757 GB/s (median 2218); bf16 13-3260 GB/s (median 648).
// Rows of 32768 to 262144, % of copy: fp32 79-88%; bf16 68-76%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v8_pipelined.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:async]
// Slots copied into shared memory by cp.async (sm_80+): global to shared without passing
// through registers, so a block can hold more of a row than its registers can (v8, v9, v10).
__device__ __forceinline__ void cp_async16(uint4* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst)), "l"(src)
                 : "memory");
}

// Wait for this thread's own copies; a thread that reads only the slots it copied itself needs
// no barrier after this.
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// One slot element by element (rows not 16-byte aligned); out of line, so that the rare path
// does not cost the common one registers.
template <typename T, int THREADS>
__device__ __noinline__ void copy_slot(uint4* dst, const T* row, int first, int end) {
    uint4 e[1];
    load_raw<T, 1, THREADS>(row, first, end, threadIdx.x, false, e);
    *dst = e[0];
}

// Start copying this thread's K slots of `row` (columns begin..end, laid out as load_raw's)
// into buf[k * THREADS + t]; rows that are not 16-byte aligned are copied element by element
// (synchronously) instead. Columns at or past `end` hold -inf.
template <typename T, int K, int THREADS>
__device__ __forceinline__ void copy_slots_async(uint4* buf, const T* row, int begin, int end,
                                                 bool vec) {
    constexpr int V = Vec16<T>::size;
    const int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int col = begin + (k * THREADS + t) * V;
        if (vec && col < end) {
            cp_async16(&buf[k * THREADS + t], row + col);
        } else {
            copy_slot<T, THREADS>(&buf[k * THREADS + t], row, col - t * V, end);
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
// --8<-- [end:async]

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void pipelined_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    extern __shared__ uint4 buf[];   // K * THREADS slots: the next row's chunk
    __shared__ MaxSum slot[2];       // this block's partial, read by the whole cluster
    __shared__ MaxSum total[2];      // the row's {max, sum}
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = cluster.block_rank(), t = threadIdx.x;
    const long long clusters = gridDim.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    long long row = blockIdx.x / CLUSTER;
    if (row < M) copy_slots_async<T, K, THREADS>(buf, x + row * x_stride, begin, end, vec);
    for (int parity = 0; row < M; row += clusters, parity ^= 1) {
        cp_async_wait_all();  // a thread reads only its own slots
        uint4 r[K];
#pragma unroll
        for (int k = 0; k < K; ++k) r[k] = buf[k * THREADS + t];
        MaxSum mine;  // this warp's part of the chunk
        mine.m = warp_max(raw_max<T>(r));  // uses r: the reads of buf are done
        const long long next = row + clusters;
        if (next < M) copy_slots_async<T, K, THREADS>(buf, x + next * x_stride, begin, end, vec);
        mine.s = warp_sum(raw_exp_sum<T>(r, mine.m));
        // slot[parity] was last read two rows ago, before the previous row's cluster barrier
        cluster_total_lean<THREADS, CLUSTER>(mine, slot[parity], total[parity], parity);
        __syncthreads();
        store_raw<T, K, THREADS>(y + row * (long long)N, begin, end, t, vec, r, mine.m,
                                 weight(mine.m, total[parity].m) / total[parity].s);
    }
    cluster.sync();  // nobody exits while another block may still read its slot
}
// --8<-- [end:kernel]

// Registers for 2048 threads per SM in fp32 (K = 4 slots: 16 registers of data, 32 in all),
// 1536 for 16-bit types, whose conversions need a few more (at 32 they spill).
constexpr int v8_min_blocks(int threads, int bytes) {
    return (bytes == 4 ? 2048 : 1536) / threads > 0 ? (bytes == 4 ? 2048 : 1536) / threads : 1;
}

// --8<-- [start:configs]
// (THREADS, CLUSTER): a block holds THREADS x 4 slots of 16 bytes in registers and as many in
// shared memory (THREADS x 64 bytes).
#define V8_BLOCKS(X, C) X(256, C) X(512, C) X(1024, C)
#define V8_CONFIGS(X) EVERY_CLUSTER(V8_BLOCKS, X)
// --8<-- [end:configs]
#define V8_KERNEL(tag, T, THREADS, CLUSTER)                                                        \
    SOFTMAX_EXPORT(softmax_v8_t##THREADS##_c##CLUSTER##_##tag, T,                                  \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v8_min_blocks(THREADS, sizeof(T))),                  \
                   pipelined_softmax<T, THREADS, 4, CLUSTER>)
#define V8_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V8_KERNEL, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V8_CONFIGS(V8_EVERY_DTYPE)
#endif
