// v4 (cuda-v4): 2-D register blocking: each thread computes a TM x TN block of outputs, so every
// value it reads from shared memory serves TM or TN products.
//
// Changed from v3: a thread owns rows ty*TM .. +TM and columns tx*TN .. +TN of the block's tile.
// At each k it copies its TM values of A's tile and TN values of B's tile into registers, then
// makes TM x TN FFMAs from them (an outer product). Why: shared-memory loads per FFMA fall
// from (TM + 1) / TM to (TM + TN) / (TM x TN): from 1.125 to 0.25 with 8 x 8; a block of 256
// threads now covers 128 x 128 outputs and loads 128 x 8 elements of each operand per barrier.
// Prediction: about twice v3's speed in float32 at 4096^3; the profile's limiter moves from
// shared-memory throughput towards FFMA issue, with bank conflicts on B's reads (lanes read words
// TN apart) and A's column read word by word from its row-major tile visible among the stalls.
// Limit: every global load is one element (4 bytes of float32, 2 of a 16-bit type), and reading
// a column of A's row-major tile takes TM loads of one word, BK words apart; v5 fixes both.
#include "block_tile.cuh"
#include "elements.cuh"
#include "export.cuh"
#include "tiles.cuh"

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int TM, int TN>
__device__ void register_block_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int NT = BM * BN / (TM * TN);  // threads a block
    __shared__ float as[BM][BK];
    __shared__ float bs[BK][BN];
    const BlockTile tile = block_tile<BM, BN>(N);
    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    float sum[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        stage_tile<T, BM, BK, NT>(as, a, tile.row0, k0, M, K);
        stage_tile<T, BK, BN, NT>(bs, b, k0, tile.col0, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ak[TM], bk[TN];  // this thread's column of A's tile and row of B's, at k
#pragma unroll
            for (int i = 0; i < TM; ++i) ak[i] = as[ty * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) bk[j] = bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) sum[i][j] += ak[i] * bk[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = tile.row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long col = tile.col0 + tx * TN + j;
            if (row < M && col < N) c[row * N + col] = from_float<T>(sum[i][j]);
        }
    }
}
// --8<-- [end:kernel]

#define V4_KERNEL(tag, T, BM, BN, BK, TM, TN)                                          \
    GEMM_EXPORT(gemm_v4_bm##BM##_bn##BN##_bk##BK##_tm##TM##_tn##TN##_##tag, T,         \
                __launch_bounds__(BM * BN / (TM * TN)), register_block_gemm<T, BM, BN, BK, TM, TN>)
#define V4(BM, BN, BK, TM, TN) GEMM_EVERY_DTYPE(V4_KERNEL, BM, BN, BK, TM, TN)

// --8<-- [start:configs]
// (BM, BN, BK, TM, TN): a BM x BN tile of C per block, K in steps of BK, TM x TN outputs a
// thread (rung.py reads these lines).
V4(128, 128, 8, 8, 8) V4(128, 64, 8, 8, 8) V4(64, 64, 8, 4, 4)
// --8<-- [end:configs]
