// v1 (cuda-v1): v0 with the threads turned: a warp's 32 lanes run along a row of C (along N).
//
// Changed from v0: a block's tile of C is 8 rows x 32 columns, and the lanes of a warp take 32
// consecutive columns of one row. Why: at every step of the sum the 32 lanes now read
// b[k][col .. col + 31], 128 contiguous bytes of float32 (one transaction where v0 made 32),
// all read the same a[row][k] (a broadcast), and the stores of C are contiguous too.
// Prediction: several times v0's speed on large squares (the profile's sectors per request drop
// from ~32 to ~4 for the loads of B), still a small fraction of the FFMA peak.
// Limit: still no reuse on chip: each element of A and B is loaded once per output that needs
// it, and each FFMA waits on two loads, so the rung is bound by L1/L2 traffic and its latency.
#include "block_tile.cuh"
#include "elements.cuh"
#include "export.cuh"

// --8<-- [start:kernel]
template <typename T>
__device__ void coalesced_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int ROWS = 8, COLS = 32;  // the block's tile of C: lanes along N, warps along M
    const BlockTile tile = block_tile<ROWS, COLS>(N);
    const long long row = tile.row0 + threadIdx.x / COLS;
    const long long col = tile.col0 + threadIdx.x % COLS;  // adjacent lanes: adjacent columns
    if (row >= M || col >= N) return;
    const T* a_row = a + row * K;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += to_float(a_row[k]) * to_float(b[(long long)k * N + col]);
    c[row * N + col] = from_float<T>(sum);
}
// --8<-- [end:kernel]

// One kernel per dtype, no configuration: gemm_v1_<dtype>, 256 threads a block.
#define V1_KERNEL(tag, T, ...) GEMM_EXPORT(gemm_v1_##tag, T, __launch_bounds__(256), coalesced_gemm<T>)
GEMM_EVERY_DTYPE(V1_KERNEL)
