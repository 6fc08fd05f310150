// v4 (cuda-v4): the launch shape follows N: a few lanes per row for short rows, a whole block
// for long ones; one fused reduction of {max, sum}.
//
// Changed from v3: (1) GROUP threads share a row, GROUP in 1..1024 chosen from N, so a
// 128-element row uses 8 lanes instead of 256 threads, and several rows share a block.
// Groups of at most 32 lanes reduce with shuffles alone, no barrier. (2) Each thread first
// computes exp(x - m_own) against its own maximum and the partial sum; the partials merge as
// {max, sum} pairs in ONE reduction (v3 needed two, each with barriers); a final multiply by
// exp(m_own - M) / S fixes the scale. (3) The launcher picks the (GROUP, K) pair per shape
// from measurements on the H200 (scripts/tune_softmax.py). (4) exp is one MUFU.EX2
// instruction (fast_exp2) and results are packed two at a time: fewer instructions per
// element, which 16-bit types need (8 elements per 16-byte load). Rows up to 1024 * 4 * 4 = 16384 fp32 / 1024 * 4 * 8 = 32768
// 16-bit elements fit; longer rows go to v5 (Hopper) or v2.
// Prediction: short rows climb from v3's level to the copy ceiling; long rows gain little.
#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include "softmax_common.cuh"
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 1766-4247 GB/s (median 4115); bf16 1071-4190 GB/s (median 4127).

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

// --8<-- [start:kernel]
template <typename T, int GROUP, int K>
__device__ void shaped_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    constexpr int BLOCK = GROUP <= 32 ? 128 : GROUP;  // a group of 64+ is a whole block
    constexpr int ROWS = BLOCK / GROUP;  // rows handled by one block at a time
    const int t = threadIdx.x % GROUP;
    bool vec = rows_aligned16(x, y, N, x_stride);
    float v[K][V];
    // Rows are visited in steps of a whole block so that every lane of a warp runs the same
    // number of iterations (the shuffles need all 32 lanes); lanes past M only skip memory.
    int parity = 0;
    for (long long base = blockIdx.x * (long long)ROWS; base < M; base += gridDim.x * (long long)ROWS) {
        long long row = base + threadIdx.x / GROUP;
        bool live = row < M;
        load_slots<T, K, GROUP>(x + row * x_stride, 0, live ? N : 0, t, vec, v);
        MaxSum own = exp_in_place(v);
        MaxSum all = group_merge<GROUP>(own, parity);
        parity ^= 1;
        rescale(v, own.m, all);
        if (live) store_slots<T, K, GROUP>(y + row * (long long)N, 0, N, t, vec, v);
    }
}
// --8<-- [end:kernel]

// --8<-- [start:configs]
// (GROUP, K): GROUP threads share a row (a whole block from 64 on), each holding K slots of 16
// bytes. __launch_bounds__ keeps registers x block within the SM's 65536 (tests/test_bridge.py
// checks it) and ptxas reports no spills.
#define V4_CONFIGS(X)                                                                              \
    X(1, 1) X(1, 2) X(2, 2) X(4, 1) X(4, 2) X(4, 4) X(8, 1) X(8, 2) X(8, 4)                        \
    X(16, 1) X(16, 2) X(16, 4) X(32, 1) X(32, 2) X(32, 4) X(32, 8)                                 \
    X(64, 4) X(64, 8) X(128, 2) X(128, 4) X(128, 8) X(256, 2) X(256, 4) X(256, 8)                 \
    X(512, 2) X(512, 4) X(512, 8) X(1024, 2) X(1024, 4)
// --8<-- [end:configs]
#define V4_KERNEL(tag, T, GROUP, K)                                                                \
    SOFTMAX_EXPORT(softmax_v4_g##GROUP##_k##K##_##tag, T,                                          \
                   __launch_bounds__((GROUP <= 32 ? 128 : GROUP), 1), shaped_softmax<T, GROUP, K>)
#define V4_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V4_KERNEL, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V4_CONFIGS(V4_EVERY_DTYPE)
#endif
