// v2 (cuda-v2): shared-memory tiling: a block stages a TILE x TILE tile of A and one of B in
// shared memory, then every thread reads its row and column of them from there.
//
// Changed from v1: the block is TILE x TILE threads, one per element of a square tile of C. The
// sum over K goes in steps of TILE: each thread loads one element of A's tile and one of B's
// (coalesced: lanes along a row), the block waits (__syncthreads), each thread adds TILE products
// read from shared memory, the block waits again before the next tiles overwrite these. Why: an
// element brought from global memory now serves TILE outputs, so global traffic falls by TILE.
// Prediction: a clear step over v1 on large squares, but well short of the FFMA peak: the inner
// loop issues two shared-memory loads per FFMA (a[ty][k] is a broadcast, b[k][tx] conflict-free),
// so the shared-memory pipe, not the FMA pipe, sets the pace (the profile: MIO throttle stalls).
// Limit: one output per thread, so every FFMA of a warp needs 128 bytes of B from shared memory
// (one per lane), plus a quarter of a 16-byte broadcast of A (ptxas merges four k of a row of as).
// An SM of 128 FP32 lanes (Hopper, Ada) issues four warps' FFMA a clock but reads 128 bytes of
// shared memory a clock: at most 1 / (4 x 1.25) = 20% of the FFMA peak, whatever the tile. And
// the block (1024 threads) waits twice a tile.
#include "block_tile.cuh"
#include "elements.cuh"
#include "export.cuh"

// --8<-- [start:kernel]
template <typename T, int TILE>
__device__ void shared_tiled_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    __shared__ float as[TILE][TILE];  // as[i][k] = a[row0 + i][k0 + k], as float
    __shared__ float bs[TILE][TILE];  // bs[k][j] = b[k0 + k][col0 + j]
    const BlockTile tile = block_tile<TILE, TILE>(N);
    const int ty = threadIdx.x / TILE, tx = threadIdx.x % TILE;
    const long long row = tile.row0 + ty, col = tile.col0 + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Zeros past the edges of A and B: a partial tile adds nothing for its missing part.
        as[ty][tx] = load_or_zero(a, row, (long long)k0 + tx, M, K);
        bs[ty][tx] = load_or_zero(b, (long long)k0 + ty, col, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();  // everyone is done with these tiles before the next load overwrites them
    }
    if (row < M && col < N) c[row * N + col] = from_float<T>(sum);
}
// --8<-- [end:kernel]

#define V2_KERNEL(tag, T, TILE) \
    GEMM_EXPORT(gemm_v2_t##TILE##_##tag, T, __launch_bounds__(TILE * TILE), shared_tiled_gemm<T, TILE>)
#define V2(TILE) GEMM_EVERY_DTYPE(V2_KERNEL, TILE)  // gemm_v2_t<TILE>_<dtype>

// --8<-- [start:configs]
// (TILE,): square tiles of TILE x TILE, one thread per output (rung.py reads these lines).
V2(32) V2(16)
// --8<-- [end:configs]
