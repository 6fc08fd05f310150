// v9 (cuda-v9, Hopper only): v7 with part of each block's chunk held in shared memory.
//
// Changed from v7: an SM's registers hold at most ~128 KB of a row (2048 threads x 16 registers
// of data), so a 1 MB fp32 row needs a cluster of 8 or 16, and in v7's tuning
// (results/h200/tune-cf9dee7.json) bigger clusters were slower at the same bytes per SM. Its
// 227 KB of shared memory held nothing. Here a thread
// keeps K slots in registers as in v7 and S more in shared memory, copied there by cp.async
// (global to shared without passing through registers: copy_slots_async in
// softmax_common.cuh). Each thread reads back only the slots it copied itself, so no barrier
// is needed. An SM holds twice the bytes: the same row on half the cluster, or twice the
// blocks per SM.
// Prediction: long rows (fp32 >= 128K, bf16 >= 32K) from v7's 79-88% of copy towards 90%.
// Outcome (results/h200/tune-6e5b20e.json and the bench, run of commit 6e5b20e, `cuda`
// choosing v9 on every bulk row of 64K-256K fp32 and 32K-256K bf16): fp32 64K / 128K / 256K at 94.0 / 92.3 /
// 87.9% of copy (v5/v7 before: 90.6 / 87.0 / 85.1%), bf16 32K-256K at 90.8 / 90.4 / 87.0 /
// 82.8% (v7: 87.7 / 85.0 / 83.1 / 78.9%). The best blocks hold 64-128 KB, two or more per SM; a
// 256 KB block alone on its SM won only on bf16 256K rows. No simple rule of threads against
// shared memory held: on bf16 64K rows, 128 KB blocks without a cluster reached 90.2% as
// 512 x (4 + 12) slots, 79.3% as 1024 x (4 + 4) and 78.8% as 256 x (4 + 28). The longest rows
// (fp32 1 MB, bf16 512 KB) stay below 90%.
#include "softmax_common.cuh"
#include "softmax_cluster.cuh"
// Measured (H200, results/h200/softmax-e437d3f.json, commit e437d3f, copy 4247 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 30-3934 GB/s (median 1354); bf16 10-3831 GB/s (median 460).
// Rows of 32768 to 262144, % of copy: fp32 85-93%; bf16 56-90%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v9_cluster_smem.cu uses thread-block clusters: build it for sm_90a"
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
#define V9_ONE(THREADS, K, S, CLUSTER, tag, T)                                                     \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                     \
        __launch_bounds__(THREADS, v9_per_sm(sizeof(T), S) / THREADS)                              \
            softmax_v9_t##THREADS##_k##K##_s##S##_c##CLUSTER##_##tag(const T* x, T* y, long long M,\
                                                                     int N, long long s) {         \
        smem_cluster_softmax<T, THREADS, K, S, CLUSTER>(x, y, M, N, s);                            \
    }
#define V9(THREADS, K, S, CLUSTER) FOR_EACH_DTYPE(V9_ONE, THREADS, K, S, CLUSTER)
#define V9_CLUSTERS(THREADS, K, S) FOR_EACH_CLUSTER(V9, THREADS, K, S)

// The (THREADS, K, S, CLUSTER) choices the launcher may make; a block holds THREADS x (K + S)
// slots of 16 bytes, THREADS x S x 16 bytes of them in shared memory.
V9_CLUSTERS(256, 4, 4) V9_CLUSTERS(512, 4, 4) V9_CLUSTERS(1024, 4, 4)
V9_CLUSTERS(256, 4, 12) V9_CLUSTERS(512, 4, 12) V9_CLUSTERS(1024, 4, 12) V9_CLUSTERS(256, 4, 28)
