// What the planted .cu files share: a row's max and sum and the ABI's three kernels, for kernels
// that follow the lab's ABI with one block of THREADS threads per row (the dtype conversions and
// block reductions are the lab's own, from the ladder's vec16.cuh and reduce.cuh).
#pragma once
#include "reduce.cuh"  // block_max, block_sum (the grader puts the ladder's folder on the include path)
#include "vec16.cuh"   // to_float, from_float

#define THREADS 256
#define ROWS_PER_BLOCK 1

// The row's max and sum of exp(x - max), each thread striding over the columns.
template <typename T>
__device__ inline void row_stats(const T* xr, int N, float* m, float* s) {
    float mx = -CUDART_INF_F;
    for (int j = threadIdx.x; j < N; j += THREADS) mx = fmaxf(mx, to_float(xr[j]));
    mx = block_max<THREADS>(mx);
    float sum = 0.f;
    for (int j = threadIdx.x; j < N; j += THREADS) sum += expf(to_float(xr[j]) - mx);
    *m = mx;
    *s = block_sum<THREADS>(sum);
}

// The ABI's three kernels, each calling ROW<T>(x, y, M, N, x_stride).
#define ABI_KERNELS(ROW)                                                                        \
    extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,        \
                                           long long x_stride) { ROW(x, y, M, N, x_stride); }   \
    extern "C" __global__ void softmax_f16(const __half* x, __half* y, long long M, int N,     \
                                           long long x_stride) { ROW(x, y, M, N, x_stride); }   \
    extern "C" __global__ void softmax_bf16(const __nv_bfloat16* x, __nv_bfloat16* y,          \
                                            long long M, int N, long long x_stride) {           \
        ROW(x, y, M, N, x_stride);                                                              \
    }
