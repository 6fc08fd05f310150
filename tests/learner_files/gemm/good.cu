// A correct CUDA C GEMM (the positive control): labs/starters/my_gemm.cu solved, one thread per
// element of C summing in float32, for every dtype of the ABI.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define TILE_M 16
#define TILE_N 16
#define THREADS 256

__device__ float to_f(float v) { return v; }
__device__ float to_f(__half v) { return __half2float(v); }
__device__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ void put(float* p, float v) { *p = v; }
__device__ void put(__half* p, float v) { *p = __float2half_rn(v); }
__device__ void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <typename T>
__device__ void gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    const long long tiles_n = (N + TILE_N - 1) / TILE_N;
    const long long row = (blockIdx.x / tiles_n) * TILE_M + threadIdx.x / TILE_N;
    const long long col = (blockIdx.x % tiles_n) * TILE_N + threadIdx.x % TILE_N;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += to_f(a[row * K + k]) * to_f(b[(long long)k * N + col]);
    put(&c[row * N + col], sum);
}

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N, int K) {
    gemm(a, b, c, M, N, K);
}
extern "C" __global__ void gemm_f16(const __half* a, const __half* b, __half* c, int M, int N,
                                    int K) {
    gemm(a, b, c, M, N, K);
}
extern "C" __global__ void gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                     __nv_bfloat16* c, int M, int N, int K) {
    gemm(a, b, c, M, N, K);
}
