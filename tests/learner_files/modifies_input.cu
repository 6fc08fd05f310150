// Planted bug: the kernel overwrites its input with zeros and writes 1/N, the softmax of the
// zeros. Checked against a reference computed after the call, it would pass.
#include "row_softmax.cuh"

template <typename T>
__device__ void row(const T* x, T* y, long long M, int N, long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    T* xr = const_cast<T*>(x) + r * x_stride;
    T* yr = y + r * (long long)N;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        xr[j] = from_float<T>(0.f);  // BUG: writes its input
        yr[j] = from_float<T>(1.f / N);
    }
}

ABI_KERNELS(row)
