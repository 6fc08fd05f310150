// v7 (cuda-v7, Hopper only): v5's cluster with v6's lean reductions, values kept in their
// loaded form, two or more blocks per SM, clusters of up to 16 blocks.
//
// Changed from v5: a 1 MB row on a cluster of 8 meant 8 blocks of 1024 threads x 32 floats,
// one block per SM; while it waited at the cluster barrier its SM moved no bytes (v5's figures
// on long rows are in results/h200/cuda_ladder.md). (1) A thread keeps its slots
// as the raw 16 bytes it loaded (load_raw, in raw_slots.cuh): K = 4 slots are 16 registers,
// so 2048 threads (two or more blocks, each at its own stage) share an SM and one block's wait
// overlaps another's loads and stores; and a bfloat16 takes half a register, so an SM holds as
// many bytes of a bf16 row as of an fp32 one. The exponentials are computed twice (for the
// sum, then for the output) instead of being kept. (2) v6's reductions: max, exponentials,
// sum. (3) Clusters of 1 to 16 blocks; 16 is a "non-portable" size the launcher must allow on
// the kernel first.
// Prediction: long rows at the copy ceiling like v6's medium rows, bf16 as well as fp32.
// Limit: registers hold at most ~128 KB of a row per SM, so the longest rows need clusters of 8
// or 16, whose blocks wait on each other at the cluster barrier; short rows waste most of a block.
#include "cluster.cuh"       // v5's cluster per row (cluster_columns, arrive and wait)
#include "cluster_lean.cuh"  // cluster_total_lean, with v6's lean reductions
#include "export.cuh"
#include "raw_slots.cuh"     // load_raw, raw_max, raw_exp_sum, store_raw

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v7_cluster_lean.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void lean_cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    __shared__ MaxSum slot;   // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;  // the whole row's {max, sum}
    const int rank = cg::this_cluster().block_rank();
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    uint4 r[K];
    load_raw<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, r);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max(raw_max<T>(r));
    mine.s = warp_sum(raw_exp_sum<T>(r, mine.m));
    cluster_total_lean<THREADS, CLUSTER>(mine, slot, total);
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    store_raw<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, r, mine.m,
                             weight(mine.m, total.m) / total.s);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

// Registers for 2048 threads per SM with K = 4 slots (16 registers of data), 1024 with K = 8.
constexpr int v7_min_blocks(int threads, int k) { return (k <= 4 ? 2048 : 1024) / threads; }

#define V7_KERNEL(tag, T, THREADS, K, CLUSTER)                                                     \
    SOFTMAX_EXPORT(softmax_v7_t##THREADS##_k##K##_c##CLUSTER##_##tag, T,                           \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v7_min_blocks(THREADS, K)),                          \
                   lean_cluster_softmax<T, THREADS, K, CLUSTER>)
#define V7(THREADS, K, CLUSTER) SOFTMAX_EVERY_DTYPE(V7_KERNEL, THREADS, K, CLUSTER)  // softmax_v7_t_k_c_<dtype>

// --8<-- [start:configs]
// (THREADS, K, CLUSTER): a block holds THREADS x K slots of 16 bytes, raw; CLUSTER blocks a row.
// The same five blocks in clusters of 1, 2, 4, 8 and 16 (16 is "non-portable": the launcher
// allows it on the kernel first); configs.py lists the same.
V7(256, 4, 1) V7(512, 4, 1) V7(1024, 4, 1) V7(512, 8, 1) V7(1024, 8, 1)
V7(256, 4, 2) V7(512, 4, 2) V7(1024, 4, 2) V7(512, 8, 2) V7(1024, 8, 2)
V7(256, 4, 4) V7(512, 4, 4) V7(1024, 4, 4) V7(512, 8, 4) V7(1024, 8, 4)
V7(256, 4, 8) V7(512, 4, 8) V7(1024, 4, 8) V7(512, 8, 8) V7(1024, 8, 8)
V7(256, 4, 16) V7(512, 4, 16) V7(1024, 4, 16) V7(512, 8, 16) V7(1024, 8, 16)
// --8<-- [end:configs]
