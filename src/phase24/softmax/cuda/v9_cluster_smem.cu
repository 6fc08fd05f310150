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
// Prediction: long rows (fp32 >= 128K, bf16 >= 32K) from v7's level (results/h200/cuda_ladder.md)
// towards 90% of copy.
// Limit: the blocks of a cluster still combine their partials through a barrier that waits for
// the slowest, remote reads of the others' shared memory, and a second barrier before exiting.
#include "cluster.cuh"       // v5's cluster per row
#include "cluster_lean.cuh"  // v7's cluster total
#include "cp_async.cuh"      // v8's copies
#include "export.cuh"
#include "split_slots.cuh"   // split_max, split_exp_sum, split_store

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v9_cluster_smem.cu uses thread-block clusters: build it for sm_90a"
#endif

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

#define V9_KERNEL(tag, T, THREADS, K, S, CLUSTER)                                                  \
    SOFTMAX_EXPORT(softmax_v9_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag, T,                    \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v9_per_sm(sizeof(T), S) / THREADS),                 \
                   smem_cluster_softmax<T, THREADS, K, S, CLUSTER>)
#define V9(THREADS, K, S, CLUSTER) SOFTMAX_EVERY_DTYPE(V9_KERNEL, THREADS, K, S, CLUSTER)  // softmax_v9_t_k_s_c_<dtype>

// --8<-- [start:configs]
// (THREADS, K, S, CLUSTER): a block holds THREADS x (K + S) slots of 16 bytes, THREADS x S x 16
// bytes of them in shared memory; the same seven blocks in clusters of 1 to 16 blocks a row.
// configs.py lists the same.
V9(256, 4, 4, 1) V9(512, 4, 4, 1) V9(1024, 4, 4, 1) V9(256, 4, 12, 1) V9(512, 4, 12, 1) V9(1024, 4, 12, 1) V9(256, 4, 28, 1)
V9(256, 4, 4, 2) V9(512, 4, 4, 2) V9(1024, 4, 4, 2) V9(256, 4, 12, 2) V9(512, 4, 12, 2) V9(1024, 4, 12, 2) V9(256, 4, 28, 2)
V9(256, 4, 4, 4) V9(512, 4, 4, 4) V9(1024, 4, 4, 4) V9(256, 4, 12, 4) V9(512, 4, 12, 4) V9(1024, 4, 12, 4) V9(256, 4, 28, 4)
V9(256, 4, 4, 8) V9(512, 4, 4, 8) V9(1024, 4, 4, 8) V9(256, 4, 12, 8) V9(512, 4, 12, 8) V9(1024, 4, 12, 8) V9(256, 4, 28, 8)
V9(256, 4, 4, 16) V9(512, 4, 4, 16) V9(1024, 4, 4, 16) V9(256, 4, 12, 16) V9(512, 4, 12, 16) V9(1024, 4, 12, 16) V9(256, 4, 28, 16)
// --8<-- [end:configs]
