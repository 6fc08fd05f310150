// v8 (cuda-v8, Hopper only): persistent clusters; the next row streams into shared memory
// while this one is reduced.
//
// Changed from v7: v7's clusters each do one row and exit, so an SM stops loading while its
// blocks wait at the cluster barrier, and the bigger the cluster the longer the wait (v7's tuning
// showed fp32 rows slower on clusters of 8 than on one block a row). Here a grid of G
// clusters, as many as fit at once, walks the rows (row, row + G, ...). Each block copies its
// chunk of the NEXT row from global to shared memory with cp.async (asynchronous, no
// registers) as soon as it has taken the current one into registers; the copy runs during the
// reductions, the cluster barrier and the stores, so the SM always has loads in flight. The
// row is still read once and written once: registers hold this row, shared memory the next.
// Prediction: long rows at the copy ceiling; few rows as v7.
// Limit: the cluster barrier is still a wait for the slowest block, and shared memory holds only
// the next row (as many bytes as the registers), not more of this one. Kept as a measured
// negative result (results/h200/softmax/cuda_rungs_history.md).
#include "cluster.cuh"       // v5's cluster per row
#include "cluster_lean.cuh"  // v7's cluster total
#include "cp_async.cuh"      // copy_slots_async, cp_async_wait_all
#include "export.cuh"
#include "raw_slots.cuh"     // v7's raw slots

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v8_pipelined.cu uses thread-block clusters: build it for sm_90a"
#endif

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

#define V8_KERNEL(tag, T, THREADS, CLUSTER)                                                        \
    SOFTMAX_EXPORT(softmax_v8_t##THREADS##_c##CLUSTER##_##tag, T,                                  \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v8_min_blocks(THREADS, sizeof(T))),                  \
                   pipelined_softmax<T, THREADS, 4, CLUSTER>)
#define V8(THREADS, CLUSTER) SOFTMAX_EVERY_DTYPE(V8_KERNEL, THREADS, CLUSTER)  // softmax_v8_t_c_<dtype>

// --8<-- [start:configs]
// (THREADS, CLUSTER): a block holds THREADS x 4 slots of 16 bytes in registers and as many in
// shared memory (THREADS x 64 bytes); clusters of 1 to 16. configs.py lists the same.
V8(256, 1) V8(512, 1) V8(1024, 1)
V8(256, 2) V8(512, 2) V8(1024, 2)
V8(256, 4) V8(512, 4) V8(1024, 4)
V8(256, 8) V8(512, 8) V8(1024, 8)
V8(256, 16) V8(512, 16) V8(1024, 16)
// --8<-- [end:configs]
