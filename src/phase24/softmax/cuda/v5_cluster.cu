// v5 (cuda-v5, Hopper only): a thread-block cluster shares one long row through distributed
// shared memory.
//
// Changed from v4: a row too long for one block's registers (or one of too few rows to fill
// 132 SMs) is cut into CLUSTER contiguous chunks, one per block of a cluster of up to 8
// blocks that the hardware runs at the same time on neighbouring SMs. Each block keeps its
// chunk in registers as in v4 and reduces it to one {max, sum} partial in its shared memory;
// after a cluster barrier every block reads the CLUSTER partials straight from the other
// blocks' shared memory (DSMEM) and merges them. The row is still read once and written once,
// and 8 SMs work on one row instead of 1. A second barrier, split into arrive (right after the
// remote reads) and wait (just before the block exits), keeps each block's shared memory alive
// until the others have read it without stalling the stores.
// Needs sm_90 (clusters, DSMEM): on Ampere and Ada the launcher uses v2 for such rows.
// Prediction: long rows reach the copy ceiling; few-row shapes run on 8x more SMs.
// Limit: a block of 1024 threads x 32 floats is alone on its SM, which moves no bytes while it
// waits at the cluster barrier; 16-bit rows hold 8 values a slot, so their largest
// configurations would not fit in registers.
#include "cluster.cuh"      // cluster_columns, cluster_arrive, cluster_wait
#include "export.cuh"
#include "group_merge.cuh"  // v4's exp_in_place, group_merge and rescale
#include "slots.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v5_cluster.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    __shared__ MaxSum slot;   // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;  // the whole row's {max, sum}
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = cluster.block_rank();
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    float v[K][V];
    load_slots<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, v);
    MaxSum own = exp_in_place(v);
    MaxSum part = group_merge<THREADS>(own);
    if (threadIdx.x == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (threadIdx.x < 32) {
        MaxSum p = threadIdx.x < CLUSTER ? *cluster.map_shared_rank(&slot, threadIdx.x)
                                         : MaxSum{-CUDART_INF_F, 0.f};
        p = warp_merge(p);
        if (threadIdx.x == 0) total = p;
    }
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    rescale(v, own.m, total);
    store_slots<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, v);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

#define V5_KERNEL(tag, T, THREADS, K, CLUSTER)                                                     \
    SOFTMAX_EXPORT(softmax_v5_t##THREADS##_k##K##_c##CLUSTER##_##tag, T,                           \
                   __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1),                   \
                   cluster_softmax<T, THREADS, K, CLUSTER>)
// softmax_v5_t<THREADS>_k<K>_c<CLUSTER>_<dtype>, for every dtype (V5) or float32 alone (V5_F32)
#define V5(THREADS, K, CLUSTER) SOFTMAX_EVERY_DTYPE(V5_KERNEL, THREADS, K, CLUSTER)
#define V5_F32(THREADS, K, CLUSTER) SOFTMAX_FLOAT32(V5_KERNEL, THREADS, K, CLUSTER)

// --8<-- [start:configs]
// (THREADS, K, CLUSTER): CLUSTER blocks of THREADS threads, K slots of 16 bytes a thread, hold a
// row (configs.py lists the same). 16-bit types hold 8 values per slot, so their largest
// configurations would not fit in registers: those are fp32 only.
V5(256, 2, 2) V5(256, 4, 2) V5(512, 4, 2) V5(1024, 2, 2) V5(1024, 4, 2)
V5(256, 2, 4) V5(256, 4, 4) V5(512, 2, 4) V5(512, 4, 4) V5(1024, 2, 4) V5(1024, 4, 4)
V5(256, 2, 8) V5(256, 4, 8) V5(512, 2, 8) V5(512, 4, 8) V5(1024, 2, 8) V5(1024, 4, 8)
V5_F32(512, 8, 2) V5_F32(512, 8, 4) V5_F32(512, 8, 8) V5_F32(1024, 8, 4) V5_F32(1024, 8, 8)
// --8<-- [end:configs]
