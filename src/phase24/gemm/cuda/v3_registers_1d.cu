// v3 (cuda-v3): 1-D register blocking: each thread computes TM outputs of one column of C, so a
// value of B read from shared memory serves TM products.
//
// Changed from v2: the block's tile of C is BM x BN (not square), the sum steps BK at a time
// (BK < BM, BN), and the block has BM x BN / TM threads. Each thread keeps TM sums in registers,
// for rows ty*TM .. ty*TM + TM - 1 of its column tx. At each k it reads b[k][tx] from shared
// memory once and a[ty*TM + i][k] for its TM rows (the same word for every lane of a warp: a
// broadcast), then makes TM FFMAs. Why: v2 made two shared-memory loads per FFMA; here it is
// (TM + 1) / TM, and a block loads more of the matrix per barrier.
// Prediction: two to three times v2's speed at 4096^3 in float32; the profile shows fewer
// shared-memory instructions per FFMA and fewer barrier stalls, still far from the FFMA peak.
// Limit: in the source, TM + 1 shared-memory loads per TM FFMAs; ptxas does better, merging four
// consecutive k of a row of as into one 16-byte broadcast load (64x32x32, TM 8: 32 + 64 loads for
// 256 FFMAs in the SASS). What remains is latency: every BK steps of K a block stops at two
// barriers after a global load, with nothing else to do; a larger BK and more blocks an SM hide
// part of it. The next rung blocks in both directions.
#include "block_tile.cuh"
#include "elements.cuh"
#include "export.cuh"
#include "tiles.cuh"

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int TM>
__device__ void register_column_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int NT = BM * BN / TM;  // threads a block
    __shared__ float as[BM][BK];      // as[i][k] = a[row0 + i][k0 + k]
    __shared__ float bs[BK][BN];      // bs[k][j] = b[k0 + k][col0 + j]
    const BlockTile tile = block_tile<BM, BN>(N);
    const int tx = threadIdx.x % BN, ty = threadIdx.x / BN;  // column tx, rows ty*TM + i
    float sum[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        stage_tile<T, BM, BK, NT>(as, a, tile.row0, k0, M, K);
        stage_tile<T, BK, BN, NT>(bs, b, k0, tile.col0, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float bk = bs[k][tx];  // one load from shared memory for TM products
#pragma unroll
            for (int i = 0; i < TM; ++i) sum[i] += as[ty * TM + i][k] * bk;
        }
        __syncthreads();
    }
    const long long col = tile.col0 + tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = tile.row0 + ty * TM + i;
        if (row < M && col < N) c[row * N + col] = from_float<T>(sum[i]);
    }
}
// --8<-- [end:kernel]

#define V3_KERNEL(tag, T, BM, BN, BK, TM)                                            \
    GEMM_EXPORT(gemm_v3_bm##BM##_bn##BN##_bk##BK##_tm##TM##_##tag, T,                \
                __launch_bounds__(BM * BN / TM), register_column_gemm<T, BM, BN, BK, TM>)
#define V3(BM, BN, BK, TM) GEMM_EVERY_DTYPE(V3_KERNEL, BM, BN, BK, TM)

// --8<-- [start:configs]
// (BM, BN, BK, TM): a BM x BN tile of C per block, K in steps of BK, TM outputs a thread
// (rung.py reads these lines).
V3(64, 32, 32, 8) V3(32, 64, 32, 4) V3(32, 32, 32, 4) V3(64, 32, 16, 8) V3(64, 64, 8, 8)
V3(32, 64, 8, 4) V3(64, 32, 8, 8) V3(128, 32, 8, 16)
// --8<-- [end:configs]
