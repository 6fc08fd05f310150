// Planted bug: every thread waits for a flag that nothing sets (a wait written wrong): the
// kernel never ends.
#include "row_softmax.cuh"

template <typename T>
__device__ void row(const T* x, T* y, long long M, int N, long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    const T* xr = x + r * x_stride;
    T* yr = y + r * (long long)N;
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    while (flag == 0) {  // BUG: never set
    }
    float m, s;
    row_stats(xr, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);
}

ABI_KERNELS(row)
