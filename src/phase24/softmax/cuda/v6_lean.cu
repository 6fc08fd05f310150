// v6 (cuda-v6): fewer instructions per row and more rows in flight per SM.
//
// Changed from v4, after its profile (bf16 32768x8192: compute and memory speed of light both
// ~77%, warps waiting to be selected): the GPU was issuing instructions as fast as it was
// moving bytes. (1) The reduction: v4 merges {max, sum} pairs, two exponentials per shuffle
// step; v6 reduces the max with plain shuffles, takes the exponentials against it, then sums
// with plain shuffles (block_merge_lean, below): per warp ~40 instructions instead of
// ~160, which matters when a thread holds only 16 values. (2) __launch_bounds__ asks ptxas to
// fit 2048 threads on an SM when a thread holds 16 values (32 registers): 4 blocks of 512
// threads instead of v4's 3, so more rows are loading while others reduce.
// Prediction: bf16 rows of 2K-32K climb from v4's 79-89% of copy in its tuning
// towards fp32's 97%.
// Outcome: bf16 rows of 2K-16K at 96-98.5% of copy; 32K (1024 threads x 32 floats, one block
// per SM) stays at ~86%, which v7 addresses.
#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include "softmax_v4_shape_specialised.cu"  // v4's launch shapes (V4_CONFIGS)
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 1766-4248 GB/s (median 4152); bf16 1071-4196 GB/s (median 4121).

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

// --8<-- [start:kernel]
template <typename T, int GROUP, int K>
__device__ void lean_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    constexpr int BLOCK = GROUP <= 32 ? 128 : GROUP;  // a group of 64+ is a whole block
    constexpr int ROWS = BLOCK / GROUP;
    constexpr int LANES = GROUP < 32 ? GROUP : 32;    // lanes of one warp on the same row
    const int t = threadIdx.x % GROUP;
    const bool vec = rows_aligned16(x, y, N, x_stride);
    float v[K][V];
    int parity = 0;
    for (long long base = blockIdx.x * (long long)ROWS; base < M; base += gridDim.x * (long long)ROWS) {
        long long row = base + threadIdx.x / GROUP;
        bool live = row < M;
        load_slots<T, K, GROUP>(x + row * x_stride, 0, live ? N : 0, t, vec, v);
        MaxSum w;  // this warp's part of the row (all of it when GROUP <= 32)
        w.m = warp_max(held_max(v), LANES);
        w.s = warp_sum(exp_sum_in_place(v, w.m), LANES);
        float f;
        if constexpr (GROUP <= 32) {
            f = 1.f / w.s;
        } else {
            MaxSum row_total = block_merge_lean<GROUP / 32>(w, parity);
            parity ^= 1;
            f = weight(w.m, row_total.m) / row_total.s;
        }
        scale(v, f);
        if (live) store_slots<T, K, GROUP>(y + row * (long long)N, 0, N, t, vec, v);
    }
}
// --8<-- [end:kernel]

// Blocks per SM that ptxas must leave room for: 2048 threads when a thread holds at most 16
// values (then 32 registers each), else whatever fits.
constexpr int v6_block(int group) { return group <= 32 ? 128 : group; }
constexpr int v6_min_blocks(int group, int values) {
    return values <= 16 ? 2048 / v6_block(group) : 1;
}

// --8<-- [start:configs]
// (GROUP, K): v4's, and one more for fp32 alone: one block of 1024 threads x 32 floats holds a
// row of 32768 (16-bit types would need 64 floats a thread and spill).
#define V6_CONFIGS(X) V4_CONFIGS(X)
#define V6_CONFIGS_F32(X) X(1024, 8)
// --8<-- [end:configs]
#define V6_KERNEL(tag, T, GROUP, K)                                                                \
    SOFTMAX_EXPORT(softmax_v6_g##GROUP##_k##K##_##tag, T,                                          \
                   __launch_bounds__(v6_block(GROUP), v6_min_blocks(GROUP, K * Vec16<T>::size)),   \
                   lean_softmax<T, GROUP, K>)
#define V6_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V6_KERNEL, __VA_ARGS__)
#define V6_FLOAT32(...) V6_KERNEL(f32, float, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V6_CONFIGS(V6_EVERY_DTYPE)
V6_CONFIGS_F32(V6_FLOAT32)
#endif
