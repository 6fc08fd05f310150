// What the planted .cu files share: dtype conversions and a block-wide reduction, for kernels
// that follow the lab's ABI with one block of THREADS threads per row.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1

__device__ inline float to_f(float v) { return v; }
__device__ inline float to_f(__half v) { return __half2float(v); }
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline T from_f(float v);
template <> __device__ inline float from_f<float>(float v) { return v; }
template <> __device__ inline __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// The block's maximum (is_max) or sum of v, returned to every thread.
__device__ inline float block_reduce(float v, bool is_max) {
    __shared__ float buf[THREADS];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float o = buf[threadIdx.x + s];
            buf[threadIdx.x] = is_max ? fmaxf(buf[threadIdx.x], o) : buf[threadIdx.x] + o;
        }
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
}

// The row's max and sum of exp(x - max), each thread striding over the columns.
template <typename T>
__device__ inline void row_stats(const T* xr, int N, float* m, float* s) {
    float mx = -CUDART_INF_F;
    for (int j = threadIdx.x; j < N; j += THREADS) mx = fmaxf(mx, to_f(xr[j]));
    mx = block_reduce(mx, true);
    float sum = 0.f;
    for (int j = threadIdx.x; j < N; j += THREADS) sum += expf(to_f(xr[j]) - mx);
    *m = mx;
    *s = block_reduce(sum, false);
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
