// The {max, sum} pair a part of a row reduces to, and the rule that merges two of them (v4
// introduced it, for one fused reduction; every later rung combines its partials this way).
#pragma once
#include <math_constants.h>

#include "fast_exp2.cuh"

// A partial softmax over part of a row: its maximum m and s = sum(exp(x - m)).
// Two partials merge into the partial of their union; -inf parts (nothing seen yet, or
// all -inf) contribute nothing, so a row of -inf ends with m = -inf, s = 0 and gives NaN,
// like torch. fmaxf ignores NaN, but a NaN element makes s NaN, which spreads to the row.
struct MaxSum {
    float m, s;
};

// exp(m_part - m): how much a sum taken against m_part weighs against m. An empty part
// (m_part = -inf) weighs 0, but a NaN in its sum still spreads (NaN * 0 = NaN).
__device__ __forceinline__ float weight(float m_part, float m) {
    return m_part == -CUDART_INF_F ? 0.f : fast_exp2((m_part - m) * LOG2E);
}

__device__ __forceinline__ float scaled_sum(float m_part, float s_part, float m) {
    return s_part * weight(m_part, m);
}

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    float m = fmaxf(a.m, b.m);
    return {m, scaled_sum(a.m, a.s, m) + scaled_sum(b.m, b.s, m)};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) {
        MaxSum o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)};
        v = merge(v, o);
    }
    return v;
}
