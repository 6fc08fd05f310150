// A correct block-reduction softmax (lab 01's kernel): one block of 256 threads per row, the
// max and the sum each a tree reduction in shared memory. tests/test_emulator.py plants its
// bugs (barriers removed, a write past the row) by editing the marked lines.
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1

__device__ float block_reduce(float v, float* buf, bool is_max) {
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (t < half) buf[t] = is_max ? fmaxf(buf[t], buf[t + half]) : buf[t] + buf[t + half];
        __syncthreads();  // tree barrier
    }
    const float r = buf[0];
    __syncthreads();  // everyone has read buf[0] before the next reduction writes it
    return r;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    __shared__ float buf[THREADS];
    const long long row = blockIdx.x;
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;
    float m = -CUDART_INF_F;
    for (int j = threadIdx.x; j < N; j += THREADS) m = fmaxf(m, xr[j]);
    m = block_reduce(m, buf, true);
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += THREADS) s += expf(xr[j] - m);
    s = block_reduce(s, buf, false);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = expf(xr[j] - m) / s;  // the write
}
