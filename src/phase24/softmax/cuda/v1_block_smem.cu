// v1 (cuda-v1): one block of 256 threads per row; reductions through shared memory.
//
// Changed from v0: the threads of a block share a row, so a warp reads 32 consecutive
// elements at once (coalesced), and the max and the sum are tree reductions in shared
// memory. The row is still read three times. Each thread still adds N / 256 exponentials in
// order before the tree, so that sum stays compensated as in v0 (else its error grows with N).
// Prediction: close to a third of the copy bandwidth on long rows, where the second and third
// reads miss L2; short rows waste most of the 256 threads.
// Limit: three reads of the row, and 9 barriers per reduction.
#include "compensated_sum.cuh"
#include "export.cuh"
#include "vec16.cuh"

constexpr int V1_THREADS = 256;

// --8<-- [start:reduce]
// Tree reduction over the block: after log2(256) = 8 halving steps buf[0] holds the result.
template <bool IS_MAX>
__device__ float block_reduce_smem(float v, float* buf) {
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int half = V1_THREADS / 2; half > 0; half /= 2) {
        if (t < half) buf[t] = IS_MAX ? fmaxf(buf[t], buf[t + half]) : buf[t] + buf[t + half];
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();  // everyone has read buf[0] before the next reduction overwrites it
    return r;
}
// --8<-- [end:reduce]

// --8<-- [start:kernel]
template <typename T>
__device__ void block_smem_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    __shared__ float buf[V1_THREADS];
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const T* xr = x + row * x_stride;
        T* yr = y + row * (long long)N;
        float m = -CUDART_INF_F;
        for (int j = threadIdx.x; j < N; j += V1_THREADS) m = fmaxf(m, to_float(xr[j]));
        m = block_reduce_smem<true>(m, buf);

        // a thread adds N / 256 terms in order: compensated run by run, as in v0; runs of 64
        // terms, so rows up to 16384 take run_sum's plain path (one run a thread)
        const float part = run_sum<64>(threadIdx.x, N, V1_THREADS,
                                       [&](int j) { return expf(to_float(xr[j]) - m); });
        const float s = block_reduce_smem<false>(part, buf);

        for (int j = threadIdx.x; j < N; j += V1_THREADS)
            yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);
    }
}
// --8<-- [end:kernel]

// One kernel per dtype, no configuration: softmax_v1_<dtype>.
#define V1_KERNEL(tag, T, ...) SOFTMAX_EXPORT(softmax_v1_##tag, T, , block_smem_softmax<T>)
SOFTMAX_EVERY_DTYPE(V1_KERNEL)
