// Planted bug: the kernel's name is not the ABI's (softmax_float32, not softmax_f32), though
// the comment above it says softmax_f32, softmax_f16 and softmax_bf16.
#include "row_softmax.cuh"

extern "C" __global__ void softmax_float32(const float* x, float* y, long long M, int N,
                                           long long x_stride) {
    long long r = blockIdx.x;
    if (r >= M) return;
    float m, s;
    row_stats(x + r * x_stride, N, &m, &s);
    for (int j = threadIdx.x; j < N; j += THREADS) y[r * N + j] = expf(x[r * x_stride + j] - m) / s;
}
