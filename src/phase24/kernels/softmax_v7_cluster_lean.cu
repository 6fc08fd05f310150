// v7 (cuda-v7, Hopper only): v5's cluster with v6's lean reductions, values kept in their
// loaded form, two or more blocks per SM, clusters of up to 16 blocks.
//
// Changed from v5: a 1 MB row on a cluster of 8 meant 8 blocks of 1024 threads x 32 floats,
// one block per SM; while it waited at the cluster barrier its SM moved no bytes (v5: 85-87% of
// copy on fp32 rows of 128K-256K, 59-65% on bf16 rows of 32K-256K, run of commit 6194309). (1) A thread keeps its slots
// as the raw 16 bytes it loaded (load_raw in softmax_common.cuh): K = 4 slots are 16 registers,
// so 2048 threads (two or more blocks, each at its own stage) share an SM and one block's wait
// overlaps another's loads and stores; and a bfloat16 takes half a register, so an SM holds as
// many bytes of a bf16 row as of an fp32 one. The exponentials are computed twice (for the
// sum, then for the output) instead of being kept. (2) v6's reductions: max, exponentials,
// sum. (3) Clusters of 1 to 16 blocks; 16 is a "non-portable" size the launcher must allow on
// the kernel first.
// Prediction: long rows at the copy ceiling like v6's medium rows, bf16 as well as fp32.
// Outcome (run of commit 6194309, each shape's tuned configuration): bf16 rows of 32K-256K rose
// from v5's 59-65% to 79-88% of copy, fp32 32K-64K to 91-92%; the longest fp32 rows stayed
// with v5 (85-87%). Short rows waste most of a block here. v9 took over the long rows.
#include "softmax_common.cuh"
#include "softmax_cluster.cuh"
// Measured (H200, results/h200/softmax-e437d3f.json, commit e437d3f, copy 4247 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 58-3730 GB/s (median 2263); bf16 18-3519 GB/s (median 905).
// Rows of 32768 to 262144, % of copy: fp32 72-85%; bf16 71-83%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v7_cluster_lean.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void lean_cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
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

#define V7_ONE(THREADS, K, CLUSTER, tag, T)                                                        \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                     \
        __launch_bounds__(THREADS, v7_min_blocks(THREADS, K))                                      \
            softmax_v7_t##THREADS##_k##K##_c##CLUSTER##_##tag(const T* x, T* y, long long M,       \
                                                              int N, long long s) {                \
        lean_cluster_softmax<T, THREADS, K, CLUSTER>(x, y, M, N, s);                               \
    }
#define V7(THREADS, K, CLUSTER) FOR_EACH_DTYPE(V7_ONE, THREADS, K, CLUSTER)
#define V7_CLUSTERS(THREADS, K) FOR_EACH_CLUSTER(V7, THREADS, K)

// The (THREADS, K, CLUSTER) triples the launcher may choose; a block holds THREADS x K x V values.
V7_CLUSTERS(256, 4) V7_CLUSTERS(512, 4) V7_CLUSTERS(1024, 4) V7_CLUSTERS(512, 8) V7_CLUSTERS(1024, 8)
