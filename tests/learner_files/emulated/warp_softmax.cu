// A correct warp-shuffle softmax (lab 02's v2 idea): one warp per row, each lane keeping a
// running max and a sum rescaled to it (online), the lanes combined with __shfl_xor_sync.
#include <math_constants.h>

#define THREADS 128
#define ROWS_PER_BLOCK 4  // one warp per row

__device__ void combine(float& m, float& s, float m2, float s2) {
    if (m2 == -CUDART_INF_F) return;                    // nothing in the other part
    if (m == -CUDART_INF_F) { m = m2, s = s2; return; }  // nothing in this one (a NaN kept)
    const float top = fmaxf(m, m2);
    s = s * expf(m - top) + s2 * expf(m2 - top);
    m = top;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    const int lane = threadIdx.x % 32;
    const long long row = blockIdx.x * (long long)ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;
    float m = -CUDART_INF_F, s = 0.0f;
    for (int j = lane; j < N; j += 32) combine(m, s, xr[j], 1.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
        combine(m, s, m2, s2);
    }
    for (int j = lane; j < N; j += 32) yr[j] = expf(xr[j] - m) / s;
}
