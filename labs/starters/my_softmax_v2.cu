// My CUDA C softmax, rung 2: the max and the sum in one read of the row (online), reductions
// with warp shuffles. Lab 02 (softmax), exercise "Write v2". The ABI is my_softmax.cu's.
//
//     python -m phase24 check softmax --file labs/starters/my_softmax_v2.cu
//
// What changes from your v1: v1 reads the row three times (max, sum, output) and each tree
// reduction stops at 9 barriers. Here a thread keeps a Partial (its max so far, and the sum of
// e^(x - max) over its values, rescaled when the max moves up), so one read gives both; the 32
// lanes of a warp merge their partials through registers (__shfl_xor_sync), and the block's 8
// warps through shared memory behind one barrier. As given, merge and warp_merge drop what they
// are given: the file compiles, runs and fails. The solution: labs/solutions/my_softmax_v2.cu.
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
    // TODO 1: the larger max m, and a.sum * e^(a.max - m) + b.sum * e^(b.max - m). First return
    //         the other side where one has max = -inf: it has seen nothing (or only -inf), and
    //         e^(-inf - -inf) would be NaN.
    (void)b;
    return a;
}

// The 32 lanes' partials merged in five steps: after the step at offset o, each lane holds the
// merge of 2o lanes' partials, and after o = 1 every lane holds the warp's.
__device__ Partial warp_merge(Partial p) {
    // TODO 2: for offset = 16, 8, 4, 2, 1: read the partner lane's max and sum with
    //         __shfl_xor_sync(0xffffffffu, value, offset) and merge them into p.
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
