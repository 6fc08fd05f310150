// v6 (cuda-v6): warp tiling: the block's tile of C is split into one WM x WN tile per warp, and a
// warp's tile into sub-tiles its 32 lanes cover as a 4 x 8 grid of TM x TN blocks; each thread
// computes the same TM x TN place in every sub-tile of its warp.
//
// Changed from v5: v5 laid threads over the block's tile in one flat grid; here (1) each warp
// owns a compact WM x WN tile (e.g. 64 x 64 of a 128 x 128 block tile), and its lanes form a
// 4 x 8 grid: at each k a value of A's tile is read by 8 lanes at once (a broadcast) and the 8
// lanes of a row read 8 x TN consecutive words of B's (TN = 4: every bank once, no conflict);
// (2) a thread computes RM x RN blocks of TM x TN (RM = WM / (4 TM), RN = WN / (8 TN)), so it
// holds more sums and reads (RM TM + RN TN) / 4 float4s per RM TM RN TN FFMAs (6 per 128 with
// the first configuration); (3) every size (BM, BN, BK, WM, WN, TM, TN) is a template parameter,
// so a tuner can pick the tile per GPU and shape (tuned_configs.json).
// Prediction: the fastest SIMT rung in float32 at 4096^3, within reach of cuBLAS's float32 (the
// lab's target: 80% of it or more on the H200, once tuned); the profile shows the FMA pipe as the busiest unit and
// few shared-memory stalls. In 16-bit types it stays at float32's FFMA rate, far below cuBLAS,
// which uses the Tensor Cores.
// Limit: the copy of the next tiles waits for the last products of the current ones (one stage
// in shared memory, the loads go through registers), and the blocks walk C in row-major order
// (no grouping for L2 reuse). A pipelined copy (cp.async into two stages) would hide the first;
// a grouped order of tiles the second.
#include "block_tile.cuh"
#include "export.cuh"
#include "tiles16.cuh"
#include "vec16.cuh"

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN>
__device__ void warp_tiled_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int LM = 4, LN = 8;              // a warp's lanes over its sub-tile: 4 x 8
    constexpr int SM = LM * TM, SN = LN * TN;  // a sub-tile of the warp's tile
    constexpr int RM = WM / SM, RN = WN / SN;  // sub-tiles a warp tile has, down and across
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % SM == 0 && WN % SN == 0,
                  "a block tile splits into warp tiles, a warp tile into 4 TM x 8 TN sub-tiles");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "operands are read from shared memory as float4");
    __shared__ __align__(16) float as[BK][BM];  // transposed: as[k][i] = a[row0 + i][k0 + k]
    __shared__ __align__(16) float bs[BK][BN];
    const BlockTile tile = block_tile<BM, BN>(N);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;  // the warp's tile
    const int tm0 = wm0 + (lane / LN) * TM, tn0 = wn0 + (lane % LN) * TN;   // in sub-tile 0
    const bool vec_a = rows_aligned16(a, K), vec_b = rows_aligned16(b, N);
    const bool vec_c = rows_aligned16(c, N);
    float sum[RM * TM][RN * TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        stage_a_transposed<T, BM, BK, NT>(as, a, tile.row0, k0, M, K, vec_a);
        stage_b<T, BK, BN, NT>(bs, b, k0, tile.col0, K, N, vec_b);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ak[RM * TM], bk[RN * TN];  // this thread's operands at k, every sub-tile
#pragma unroll
            for (int r = 0; r < RM; ++r)
#pragma unroll
                for (int i = 0; i < TM; i += 4)
                    *reinterpret_cast<float4*>(&ak[r * TM + i]) =
                        *reinterpret_cast<const float4*>(&as[k][tm0 + r * SM + i]);
#pragma unroll
            for (int r = 0; r < RN; ++r)
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    *reinterpret_cast<float4*>(&bk[r * TN + j]) =
                        *reinterpret_cast<const float4*>(&bs[k][tn0 + r * SN + j]);
#pragma unroll
            for (int i = 0; i < RM * TM; ++i)
#pragma unroll
                for (int j = 0; j < RN * TN; ++j) sum[i][j] += ak[i] * bk[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RM * TM; ++i) {
        const long long row = tile.row0 + tm0 + (i / TM) * SM + i % TM;
        if (row >= M) continue;
#pragma unroll
        for (int r = 0; r < RN; ++r) {
            const long long col = tile.col0 + tn0 + r * SN;
            store_run<T, TN>(c + row * N + col, (int)(N - col), vec_c, &sum[i][r * TN]);
        }
    }
}
// --8<-- [end:kernel]

#define V6_KERNEL(tag, T, BM, BN, BK, WM, WN, TM, TN)                                             \
    GEMM_EXPORT(gemm_v6_bm##BM##_bn##BN##_bk##BK##_wm##WM##_wn##WN##_tm##TM##_tn##TN##_##tag, T, \
                __launch_bounds__((BM / WM) * (BN / WN) * 32),                                   \
                warp_tiled_gemm<T, BM, BN, BK, WM, WN, TM, TN>)
#define V6(BM, BN, BK, WM, WN, TM, TN) GEMM_EVERY_DTYPE(V6_KERNEL, BM, BN, BK, WM, WN, TM, TN)

// --8<-- [start:configs]
// (BM, BN, BK, WM, WN, TM, TN): a BM x BN tile of C per block, K in steps of BK, one WM x WN tile
// per warp, TM x TN outputs per thread and sub-tile (rung.py reads these lines).
V6(128, 128, 16, 64, 64, 8, 4) V6(128, 128, 8, 64, 32, 8, 4) V6(128, 64, 16, 64, 32, 8, 4)
V6(64, 128, 16, 32, 64, 8, 4) V6(64, 64, 16, 32, 32, 4, 4) V6(32, 64, 16, 32, 32, 4, 4)
// --8<-- [end:configs]
