// Planted bug: the output row is addressed with a wild offset, far outside any allocation: the
// GPU reports an illegal memory access.
#include "row_softmax.cuh"

template <typename T>
__device__ void row(const T* x, T* y, long long M, int N, long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    const T* xr = x + r * x_stride;
    T* yr = y - (r + 1) * (1LL << 40);  // BUG: a wild offset
    float m, s;
    row_stats(xr, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);
}

ABI_KERNELS(row)
