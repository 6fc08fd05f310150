// Solution of labs/starters/my_softmax.cu (lab 01): one block of THREADS threads per row, the
// max and the sum each a tree reduction in shared memory, the row read three times.
//
//     python -m phase24 check softmax --file labs/solutions/my_softmax.cu
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1

// The block's maximum (is_max) or sum of v: THREADS values halved at each step of the tree, a
// barrier after each step so that a thread reads its partner's value only once it is written.
__device__ float block_reduce(float v, float* buf, bool is_max) {
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (t < half) buf[t] = is_max ? fmaxf(buf[t], buf[t + half]) : buf[t] + buf[t + half];
        __syncthreads();
    }
    const float r = buf[0];
    __syncthreads();  // every thread has read buf[0] before the next reduction writes buf
    return r;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    __shared__ float buf[THREADS];
    const long long row = blockIdx.x;  // ROWS_PER_BLOCK = 1: block b owns row b
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;
    // fmaxf drops a NaN, but the NaN still reaches the sum through expf(NaN - m)
    float m = -CUDART_INF_F;
    for (int j = threadIdx.x; j < N; j += THREADS) m = fmaxf(m, xr[j]);
    m = block_reduce(m, buf, true);
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += THREADS) s += expf(xr[j] - m);
    s = block_reduce(s, buf, false);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = expf(xr[j] - m) / s;
}
