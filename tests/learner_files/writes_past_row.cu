// Planted bug: each row writes 8 values past its end (a loop bound off by 8); the last row's
// land past the end of the output, in the checker's guard region.
#include "row_softmax.cuh"

template <typename T>
__device__ void row(const T* x, T* y, long long M, int N, long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    const T* xr = x + r * x_stride;
    T* yr = y + r * (long long)N;
    float m, s;
    row_stats(xr, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);
    __syncthreads();
    if (threadIdx.x < 8 && r == M - 1) yr[N + threadIdx.x] = from_float<T>(0.f);  // BUG: past the end
}

ABI_KERNELS(row)
