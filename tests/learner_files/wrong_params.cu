// Planted bug: M is an int, not a long long: the kernel would read the ABI's arguments at the
// wrong offsets.
#include "row_softmax.cuh"

extern "C" __global__ void softmax_f32(const float* x, float* y, int M, int N,
                                       long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    float m, s;
    row_stats(x + r * x_stride, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) y[r * N + j] = expf(x[r * x_stride + j] - m) / s;
}
