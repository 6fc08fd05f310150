// The lean reductions of {max, sum} partials (v6 introduced them; v7-v10 use them too): the max
// with plain shuffles, then the sums weighted against it, then a plain sum, where v4's merge of
// pairs takes two exponentials per step. post_warps is the one place a block's warps post their
// pairs to shared memory before one barrier.
#pragma once
#include <math_constants.h>

#include "maxsum.cuh"
#include "reduce.cuh"

// --8<-- [start:lean]
// The lean reductions: a max first, then exponentials against it, then a sum. Each step is 5
// shuffles and 5 single-instruction merges per warp, where merging {max, sum} pairs (v4) costs
// two exponentials per step.

// The {max, sum} of the partials the 32 lanes of a warp hold (empty lanes: {-inf, 0}), in
// every lane: the max with shuffles, then each sum weighted by exp(m_part - max), then a sum.
__device__ __forceinline__ MaxSum warp_merge_lean(MaxSum p) {
    const float m = warp_max(p.m);
    return {m, warp_sum(scaled_sum(p.m, p.s, m))};
}

// Each warp posts its {max, sum} (lane 0's copy) in shared memory, then one barrier: on return
// every thread can read every warp's pair.
__device__ __forceinline__ const MaxSum* post_warps(MaxSum w, MaxSum* post) {
    if (threadIdx.x % 32 == 0) post[threadIdx.x / 32] = w;
    __syncthreads();
    return post;
}

// The {max, sum} of a whole block from each warp's {max, sum}: the warps post their pairs,
// then every warp reduces the WARPS posts itself (a max, then a weighted sum), so all threads
// hold the total without a second barrier. The posts alternate between two buffers from one
// call to the next (parity), so the next row's posts cannot overwrite unread ones.
template <int WARPS>
__device__ __forceinline__ MaxSum block_merge_lean(MaxSum w, int parity = 0) {
    __shared__ MaxSum post[2][WARPS];
    const MaxSum* posts = post_warps(w, post[parity]);
    const int lane = threadIdx.x % 32;
    return warp_merge_lean(lane < WARPS ? posts[lane] : MaxSum{-CUDART_INF_F, 0.f});
}
// --8<-- [end:lean]
