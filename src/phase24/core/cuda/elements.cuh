// The element types every operation's kernels take, as their arithmetic sees them: each value is
// read into float32 (to_float) and each result rounded once to T (from_float); Vec16<T>::size is
// how many fit in one 16-byte access (4 floats, 8 halves or bfloat16s). Both operations' ladders
// include this file through their own headers (softmax/cuda/vec16.cuh, gemm/cuda/elements.cuh).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

template <typename T> struct Vec16 { static constexpr int size = 16 / sizeof(T); };
