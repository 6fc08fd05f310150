// Planted bug: softmax_f32 has C++ linkage (no extern "C"): its symbol is mangled, so it cannot
// be found by its name.
#include "row_softmax.cuh"

__global__ void softmax_f32(const float* x, float* y, long long M, int N, long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    float m, s;
    row_stats(x + r * x_stride, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) y[r * N + j] = expf(x[r * x_stride + j] - m) / s;
}
