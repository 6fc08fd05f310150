// v4 (cuda-v4): the launch shape follows N: a few lanes per row for short rows, a whole block
// for long ones; one fused reduction of {max, sum}.
//
// Changed from v3: (1) GROUP threads share a row, GROUP in 1..1024 chosen from N, so a
// 128-element row uses 8 lanes instead of 256 threads, and several rows share a block.
// Groups of at most 32 lanes reduce with shuffles alone, no barrier. (2) Each thread first
// computes exp(x - m_own) against its own maximum and the partial sum; the partials merge as
// {max, sum} pairs in ONE reduction (v3 needed two, each with barriers); a final multiply by
// exp(m_own - M) / S fixes the scale. (3) The launcher picks the (GROUP, K) pair per shape
// from measurements on the H200 (scripts/tune.py softmax cuda). (4) exp is one MUFU.EX2
// instruction (fast_exp2) and results are packed two at a time: fewer instructions per
// element, which 16-bit types need (8 elements per 16-byte load). Rows up to 1024 * 4 * 4 = 16384 fp32 / 1024 * 4 * 8 = 32768
// 16-bit elements fit; longer rows go to v5 (Hopper) or v2.
// Prediction: short rows climb from v3's level to the copy ceiling; long rows gain little.
// Limit: a row must fit one block's registers, and the merge of {max, sum} pairs costs two
// exponentials per shuffle step, which 16-bit rows (few values a thread) feel.
#include "export.cuh"
#include "group_merge.cuh"  // exp_in_place, group_merge, rescale
#include "slots.cuh"
#include "vec16.cuh"

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

#define V4_KERNEL(tag, T, GROUP, K)                                                                \
    SOFTMAX_EXPORT(softmax_v4_g##GROUP##_k##K##_##tag, T,                                          \
                   __launch_bounds__((GROUP <= 32 ? 128 : GROUP), 1), shaped_softmax<T, GROUP, K>)
#define V4(GROUP, K) SOFTMAX_EVERY_DTYPE(V4_KERNEL, GROUP, K)  // softmax_v4_g<GROUP>_k<K>_<dtype>

// --8<-- [start:configs]
// (GROUP, K): GROUP threads share a row (a whole block from 64 on), each holding K slots of 16
// bytes (configs.py lists the same). __launch_bounds__ keeps registers x block within the SM's
// 65536 (tests/test_bridge.py checks it) and ptxas reports no spills.
V4(1, 1) V4(1, 2) V4(2, 2) V4(4, 1) V4(4, 2) V4(4, 4) V4(8, 1) V4(8, 2) V4(8, 4)
V4(16, 1) V4(16, 2) V4(16, 4) V4(32, 1) V4(32, 2) V4(32, 4) V4(32, 8)
V4(64, 4) V4(64, 8) V4(128, 2) V4(128, 4) V4(128, 8) V4(256, 2) V4(256, 4) V4(256, 8)
V4(512, 2) V4(512, 4) V4(512, 8) V4(1024, 2) V4(1024, 4)
// --8<-- [end:configs]
