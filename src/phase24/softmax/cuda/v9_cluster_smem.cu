// v9 (cuda-v9, Hopper only): v7 with part of each block's chunk held in shared memory.
//
// Changed from v7: an SM's registers hold at most ~128 KB of a row (2048 threads x 16 registers
// of data), so a 1 MB fp32 row needs a cluster of 8 or 16, and in v7's tuning bigger clusters
// were slower at the same bytes per SM. Its
// 227 KB of shared memory held nothing. Here a thread keeps K slots in registers as in v7 and S
// more in shared memory, copied there by cp.async (global to shared without passing through
// registers: v8's copy_slots_async). Each thread reads back only the slots it copied itself, so
// no barrier is needed. An SM holds twice the bytes: the same row on half the cluster, or twice
// the blocks per SM.
// Prediction: long rows (fp32 >= 128K, bf16 >= 32K) from v7's 79-88% of copy towards 90%.
// Outcome (the tuner's run and the bench that followed it, `cuda`
// choosing v9 on every bulk row of 64K-256K fp32 and 32K-256K bf16): fp32 64K / 128K / 256K at 94.0 / 92.3 /
// 87.9% of copy (v5/v7 before: 90.6 / 87.0 / 85.1%), bf16 32K-256K at 90.8 / 90.4 / 87.0 /
// 82.8% (v7: 87.7 / 85.0 / 83.1 / 78.9%). The best blocks hold 64-128 KB, two or more per SM; a
// 256 KB block alone on its SM won only on bf16 256K rows. No simple rule of threads against
// shared memory held: on bf16 64K rows, 128 KB blocks without a cluster reached 90.2% as
// 512 x (4 + 12) slots, 79.3% as 1024 x (4 + 4) and 78.8% as 256 x (4 + 28). The longest rows
// (fp32 1 MB, bf16 512 KB) stay below 90%.
#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include "softmax_v8_pipelined.cu"  // v8's cp.async copies (and, through v8, v7's raw slots)
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 30-3967 GB/s (median 1355); bf16 10-3854 GB/s (median 460).
// Rows of 32768 to 262144, % of copy: fp32 85-93%; bf16 56-90%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v9_cluster_smem.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:split]
// Read back a slot copied there. `asm volatile`: each pass over the slots reads shared memory
// again, instead of the compiler keeping the first pass's values alive in registers.
__device__ __forceinline__ uint4 shared_slot(const uint4* p) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(shared_address(p)) : "memory");
    return v;
}

// A block's chunk held in two parts (v9, v10): K slots a thread in registers r (columns
// begin..mid, as load_raw lays them out) and S in shared memory (mid..end, copied there by
// copy_slots_async into held[s * THREADS + t]). Each pass reads the shared slots back one at a
// time (`#pragma unroll 1`), so the registers a thread needs do not grow with S.
template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_max(const uint4 (&r)[K], const uint4* held) {
    float m = raw_max<T>(r);  // while the copies are still landing
    if constexpr (S > 0) cp_async_wait_all();
#pragma unroll 1
    for (int s = 0; s < S; ++s) m = fmaxf(m, raw_max<T>({shared_slot(&held[s * THREADS + threadIdx.x])}));
    return m;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_exp_sum(const uint4 (&r)[K], const uint4* held, float m) {
    float sum = raw_exp_sum<T>(r, m);
#pragma unroll 1
    for (int s = 0; s < S; ++s) sum += raw_exp_sum<T>({shared_slot(&held[s * THREADS + threadIdx.x])}, m);
    return sum;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ void split_store(T* row, int begin, int mid, int end, bool vec,
                                            const uint4 (&r)[K], const uint4* held, float m,
                                            float f) {
    constexpr int V = Vec16<T>::size;
    const int t = threadIdx.x;
    store_raw<T, K, THREADS>(row, begin, mid, t, vec, r, m, f);
#pragma unroll 1
    for (int s = 0; s < S; ++s)
        store_raw<T, 1, THREADS>(row, mid + s * THREADS * V, end, t, vec,
                                 {shared_slot(&held[s * THREADS + t])}, m, f);
}
// --8<-- [end:split]

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int S, int CLUSTER>
__device__ void smem_cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    extern __shared__ uint4 held[];  // S * THREADS slots: columns mid..end of the chunk
    __shared__ MaxSum slot;          // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;         // the whole row's {max, sum}
    const int rank = cg::this_cluster().block_rank(), t = threadIdx.x;
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const int mid = min(end, begin + K * THREADS * V);  // registers: begin..mid; shared: mid..end
    const bool vec = rows_aligned16(x, y, N, x_stride);
    const T* in = x + row * x_stride;
    T* out = y + row * (long long)N;

    copy_slots_async<T, S, THREADS>(held, in, mid, end, vec);  // in flight with the loads below
    uint4 r[K];
    load_raw<T, K, THREADS>(in, begin, mid, t, vec, r);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max(split_max<T, K, S, THREADS>(r, held));
    mine.s = warp_sum(split_exp_sum<T, K, S, THREADS>(r, held, mine.m));
    cluster_total_lean<THREADS, CLUSTER>(mine, slot, total);
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    split_store<T, K, S, THREADS>(out, begin, mid, end, vec, r, held, mine.m,
                                  weight(mine.m, total.m) / total.s);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

// Threads per SM that registers must allow: 2048 in fp32 (K = 4 slots, 16 registers of data,
// 32 in all), 1536 for 16-bit types, whose conversions need a few more (at 32 they spill, as in
// v8). With S >= 12 shared memory (THREADS x S x 16 bytes a block) allows 1024 at most anyway.
constexpr int v9_per_sm(int bytes, int s) { return s >= 12 ? 1024 : bytes == 4 ? 2048 : 1536; }

// --8<-- [start:configs]
// (THREADS, K, S, CLUSTER): a block holds THREADS x (K + S) slots of 16 bytes, THREADS x S x 16
// bytes of them in shared memory; CLUSTER blocks a row.
#define V9_BLOCKS(X, C)                                                                            \
    X(256, 4, 4, C) X(512, 4, 4, C) X(1024, 4, 4, C) X(256, 4, 12, C) X(512, 4, 12, C)              \
    X(1024, 4, 12, C) X(256, 4, 28, C)
#define V9_CONFIGS(X) EVERY_CLUSTER(V9_BLOCKS, X)
// --8<-- [end:configs]
#define V9_KERNEL(tag, T, THREADS, K, S, CLUSTER)                                                  \
    SOFTMAX_EXPORT(softmax_v9_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag, T,                    \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v9_per_sm(sizeof(T), S) / THREADS),                 \
                   smem_cluster_softmax<T, THREADS, K, S, CLUSTER>)
#define V9_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V9_KERNEL, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V9_CONFIGS(V9_EVERY_DTYPE)
#endif
