// A row's {max, sum} in ONE fused reduction (v4 introduced it; v5 uses it too): each thread
// takes exp(x - m_own) against its own maximum (exp_in_place), the GROUP threads of a row merge
// their {max, sum} pairs (group_merge), and a last multiply by exp(m_own - M) / S puts every held
// value on the row's scale (rescale).
#pragma once
#include <math_constants.h>

#include "maxsum.cuh"
#include "slots.cuh"

// Replace each held value by exp(x - m) for the thread's own maximum m, and return
// {m, sum}. A thread may hold nothing but -inf and NaN (fmaxf skips NaN, so m = -inf): the
// offset is then 0, the -inf become 0 and the NaN stays NaN, so the row's sum, and with it the
// whole row, is NaN, as in torch.
template <int K, int V>
__device__ __forceinline__ MaxSum exp_in_place(float (&v)[K][V]) {
    const float m = held_max(v);
    return {m, exp_sum_in_place(v, m)};
}

// Multiply the held exp(x - m_own) by exp(m_own - M) / S: the softmax of the whole row.
template <int K, int V>
__device__ __forceinline__ void rescale(float (&v)[K][V], float m_own, MaxSum row) {
    scale(v, fast_exp2((m_own - row.m) * LOG2E) / row.s);
}

// --8<-- [start:group_merge]
// Merge the {max, sum} partials of the GROUP threads that share a row. Groups of up to 32
// lanes are adjacent lanes of one warp: shuffles alone. Larger groups are the whole block:
// each warp posts its partial, one barrier, then every warp merges all the posts itself (no
// second barrier to broadcast a result). The posts alternate between two buffers from one
// call to the next, so the next row's posts cannot overwrite ones still being read.
template <int GROUP>
__device__ __forceinline__ MaxSum group_merge(MaxSum v, int parity = 0) {
    if constexpr (GROUP <= 32) {
        return warp_merge(v, GROUP);
    } else {
        constexpr int WARPS = GROUP / 32;
        __shared__ MaxSum post[2][WARPS];
        int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        v = warp_merge(v);
        if (lane == 0) post[parity][warp] = v;
        __syncthreads();
        v = lane < WARPS ? post[parity][lane] : MaxSum{-CUDART_INF_F, 0.f};
        return warp_merge(v);  // all 32 lanes, so every lane holds the total
    }
}
// --8<-- [end:group_merge]
