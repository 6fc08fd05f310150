// v6 (cuda-v6): fewer instructions per row and more rows in flight per SM.
//
// Changed from v4, after its profile (bf16 32768x8192: compute and memory speed of light level
// with each other, warps waiting to be selected): the GPU was issuing instructions as fast as it
// was moving bytes. (1) The reduction: v4 merges {max, sum} pairs, two exponentials per shuffle
// step; v6 reduces the max with plain shuffles, takes the exponentials against it, then sums
// with plain shuffles (block_merge_lean, in lean_merge.cuh): per warp ~40 instructions instead of
// ~160, which matters when a thread holds only 16 values. (2) __launch_bounds__ asks ptxas to
// fit 2048 threads on an SM when a thread holds 16 values (32 registers): 4 blocks of 512
// threads instead of v4's 3, so more rows are loading while others reduce.
// Prediction: bf16 rows of 2K-32K climb from v4's level towards the copy ceiling that fp32 rows
// of the same length already reach (results/h200/cuda_ladder.md has both).
// Limit: a row must still fit one block's registers; a bf16 row of 32K takes 1024 threads x 32
// floats, one block per SM, which leaves nothing to overlap its barrier with.
#include "export.cuh"
#include "lean_merge.cuh"  // warp_merge_lean, post_warps, block_merge_lean
#include "reduce.cuh"
#include "slots.cuh"

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

#define V6_KERNEL(tag, T, GROUP, K)                                                                \
    SOFTMAX_EXPORT(softmax_v6_g##GROUP##_k##K##_##tag, T,                                          \
                   __launch_bounds__(v6_block(GROUP), v6_min_blocks(GROUP, K * Vec16<T>::size)),   \
                   lean_softmax<T, GROUP, K>)
// softmax_v6_g<GROUP>_k<K>_<dtype>, for every dtype (V6) or float32 alone (V6_F32)
#define V6(GROUP, K) SOFTMAX_EVERY_DTYPE(V6_KERNEL, GROUP, K)
#define V6_F32(GROUP, K) SOFTMAX_FLOAT32(V6_KERNEL, GROUP, K)

// --8<-- [start:configs]
// (GROUP, K): v4's, and one more for fp32 alone: one block of 1024 threads x 32 floats holds a
// row of 32768 (16-bit types would need 64 floats a thread and spill). configs.py lists the same.
V6(1, 1) V6(1, 2) V6(2, 2) V6(4, 1) V6(4, 2) V6(4, 4) V6(8, 1) V6(8, 2) V6(8, 4)
V6(16, 1) V6(16, 2) V6(16, 4) V6(32, 1) V6(32, 2) V6(32, 4) V6(32, 8)
V6(64, 4) V6(64, 8) V6(128, 2) V6(128, 4) V6(128, 8) V6(256, 2) V6(256, 4) V6(256, 8)
V6(512, 2) V6(512, 4) V6(512, 8) V6(1024, 2) V6(1024, 4)
V6_F32(1024, 8)
// --8<-- [end:configs]
