// Solution of labs/starters/my_softmax_v2.cu: one pass for the max and the sum (online), warp
// shuffles for the reductions. The row is read twice (once for max and sum, once to write y)
// instead of v1's three times, and a reduction costs one barrier instead of one per tree level.
//
//     python -m phase24 check softmax --file labs/solutions/my_softmax_v2.cu
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1

// What a thread (then a warp, then the block) knows of its values: the largest, and the sum of
// e^(x - max) over them. {-inf, 0} has seen nothing.
struct Partial {
    float max;
    float sum;
};

// Two partials as one: the larger max, and each sum moved to it. A side with max = -inf adds
// nothing (and e^(-inf - -inf) would be NaN). A NaN or +inf in the row reaches the sum as NaN
// (inf - inf), so the whole row comes out NaN, as torch.softmax's does.
__device__ Partial merge(Partial a, Partial b) {
    if (b.max == -CUDART_INF_F) return a;
    if (a.max == -CUDART_INF_F) return b;
    const float m = fmaxf(a.max, b.max);
    return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// The 32 lanes' partials merged in five steps: after the step at offset o, each lane holds the
// merge of 2o lanes' partials, and after o = 1 every lane holds the warp's.
__device__ Partial warp_merge(Partial p) {
    for (int offset = 16; offset > 0; offset /= 2) {
        const Partial other = {__shfl_xor_sync(0xffffffffu, p.max, offset),
                               __shfl_xor_sync(0xffffffffu, p.sum, offset)};
        p = merge(p, other);
    }
    return p;
}

// The block's partial: each warp's, through shared memory, behind one barrier.
__device__ Partial block_merge(Partial p) {
    __shared__ Partial warps[THREADS / 32];
    p = warp_merge(p);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = p;
    __syncthreads();
    Partial all = warps[0];
    for (int w = 1; w < THREADS / 32; ++w) all = merge(all, warps[w]);
    return all;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    const long long row = blockIdx.x;
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;
    Partial p = {-CUDART_INF_F, 0.0f};
    for (int j = threadIdx.x; j < N; j += THREADS) p = merge(p, {xr[j], 1.0f});
    p = block_merge(p);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = expf(xr[j] - p.max) / p.sum;
}
