// The element types of the ladder as the arithmetic sees them (core/cuda/elements.cuh): every
// value is read into float32 (to_float), every product added in float32, and each output rounded
// once to T (from_float); and reads of an element or zero past the matrix's edges.
#pragma once
#include "../../core/cuda/elements.cuh"  // to_float, from_float, Vec16

// Element (row, col) of a row-major matrix with `cols` columns, or 0 outside rows x cols: the
// tiles at the edges of A and B read zeros there, which add nothing to a sum. The offset is
// 64-bit: M * K or K * N may pass 2^31.
template <typename T>
__device__ __forceinline__ float load_or_zero(const T* m, long long row, long long col, long long rows,
                                              long long cols) {
    return (row < rows && col < cols) ? to_float(m[row * cols + col]) : 0.0f;
}
