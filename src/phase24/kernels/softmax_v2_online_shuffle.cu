// v2 (cuda-v2): warp-shuffle reductions and online softmax: two reads of the row instead of three.
//
// Changed from v1: (1) reductions use __shfl_xor_sync inside each warp, then one shared-memory
// step across the 8 warps: 2 barriers per reduction instead of 9. (2) The max and the sum are
// found in a single pass with the online rule: when a larger value m' arrives, the running
// sum is rescaled by exp(m - m'). The row is read twice and written once, for any N and any
// alignment: this rung is also the fallback for rows too long to keep on chip on GPUs
// without thread-block clusters. exp(x) is computed as exp2(x * log2(e)).
// Prediction: 4/3 of v1 on long rows (three row transfers, 2 reads + 1 write, instead of four).
#include "softmax_common.cuh"
// Measured (H200, results/h200/softmax-e437d3f.json, commit e437d3f, copy 4247 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 626-2378 GB/s (median 1770); bf16 311-1459 GB/s (median 1055).

constexpr int V2_THREADS = 256;

// --8<-- [start:online]
// Add one value to a running {max, sum}. Using exp2(x - x) rather than 1 keeps +inf -> NaN.
__device__ __forceinline__ void online_add(MaxSum& a, float x) {
    if (x > a.m) {
        a.s = scaled_sum(a.m, a.s, x) + exp2f((x - x) * LOG2E);
        a.m = x;
    } else {
        a.s += x == -CUDART_INF_F ? 0.f : exp2f((x - a.m) * LOG2E);  // NaN x makes s NaN
    }
}
// --8<-- [end:online]

// Merge every thread's partial into the row's {max, sum}, seen by all threads of the block.
__device__ MaxSum block_merge(MaxSum v) {
    __shared__ MaxSum part[32];
    __shared__ MaxSum total;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_merge(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < V2_THREADS / 32 ? part[lane] : MaxSum{-CUDART_INF_F, 0.f};
        v = warp_merge(v);
        if (lane == 0) total = v;
    }
    __syncthreads();
    return total;
}

// --8<-- [start:kernel]
template <typename T>
__device__ void online_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const T* xr = x + row * x_stride;
        T* yr = y + row * (long long)N;
        MaxSum acc{-CUDART_INF_F, 0.f};
        for (int j = threadIdx.x; j < N; j += V2_THREADS) online_add(acc, to_float(xr[j]));
        MaxSum r = block_merge(acc);
        float inv = 1.f / r.s;
        for (int j = threadIdx.x; j < N; j += V2_THREADS)
            yr[j] = from_float<T>(exp2f((to_float(xr[j]) - r.m) * LOG2E) * inv);
        __syncthreads();  // `total` is rewritten by the next row's merge
    }
}
// --8<-- [end:kernel]

SOFTMAX_EXPORT(v2, online_softmax)
