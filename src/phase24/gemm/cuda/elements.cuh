// The element types of the ladder as the arithmetic sees them: every value is read into float32
// (to_float), every product added in float32, and each output rounded once to T (from_float).
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

// Element (row, col) of a row-major matrix with `cols` columns, or 0 outside rows x cols: the
// tiles at the edges of A and B read zeros there, which add nothing to a sum. The offset is
// 64-bit: M * K or K * N may pass 2^31.
template <typename T>
__device__ __forceinline__ float load_or_zero(const T* m, long long row, long long col, long long rows,
                                              long long cols) {
    return (row < rows && col < cols) ? to_float(m[row * cols + col]) : 0.0f;
}
