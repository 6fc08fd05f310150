// Warp and block reductions of one float per thread (v2 introduced them: shuffles inside a warp,
// one shared-memory step across the warps, one barrier per reduction instead of v1's nine).
#pragma once
#include <math_constants.h>

__device__ __forceinline__ float warp_max(float v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// The max / the sum of one value per thread over a block of THREADS threads, in every thread:
// shuffles within each warp, each warp posts its result, one barrier, then every warp reduces
// the posts itself (no second barrier to broadcast a result). There is no barrier at the end:
// block_max and block_sum post to arrays of their own, so calls that alternate between the two
// (v2, v3) are safe; two calls of the same one need a __syncthreads() between them.
template <int THREADS, bool MAX>
__device__ __forceinline__ float block_reduce(float v) {
    constexpr int WARPS = THREADS / 32;
    __shared__ float post[WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) post[warp] = v;
    __syncthreads();
    v = lane < WARPS ? post[lane] : MAX ? -CUDART_INF_F : 0.f;
    return MAX ? warp_max(v) : warp_sum(v);
}
template <int THREADS>
__device__ __forceinline__ float block_max(float v) { return block_reduce<THREADS, true>(v); }
template <int THREADS>
__device__ __forceinline__ float block_sum(float v) { return block_reduce<THREADS, false>(v); }
