// v0 (cuda-naive): one thread per row, three passes over the row (max, sum, write).
//
// The correct, slow starting point of lab 01. Each thread walks its own row, so the 32
// threads of a warp read 32 addresses N elements apart: every load is a separate memory
// transaction, and each row is read three times. Prediction: a few percent of the copy
// bandwidth on long rows, and better on short rows, where rows of a warp share cache lines.
#include "softmax_common.cuh"

// [start:kernel]
template <typename T>
__device__ void naive_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (row >= M) return;
    const T* xr = x + row * x_stride;
    T* yr = y + row * (long long)N;

    float m = -CUDART_INF_F;  // pass 1: the row's maximum, so exp never overflows
    for (int j = 0; j < N; ++j) m = fmaxf(m, to_float(xr[j]));

    float s = 0.f;  // pass 2: the sum of exponentials
    for (int j = 0; j < N; ++j) s += expf(to_float(xr[j]) - m);

    for (int j = 0; j < N; ++j) yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);  // pass 3
}
// [end:kernel]

SOFTMAX_EXPORT(v0, naive_softmax)
