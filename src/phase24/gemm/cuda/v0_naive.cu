// v0 (cuda-naive): one thread per element of C, each a dot product of a row of A and a column of
// B read straight from global memory; a warp's 32 threads run down a column of C (along M).
//
// The correct, slow starting point. A block of 256 threads covers 32 rows x 8 columns of C, and
// the 32 lanes of a warp take 32 consecutive rows of one column. At every step of the sum each
// lane reads a[row][k]: 32 addresses K elements apart, 32 separate memory transactions for 128
// useful bytes; all lanes read the same b[k][col] (one broadcast); the stores of C are N apart.
// Prediction: the slowest rung by far, a fraction of a TFLOP/s in float32 at 4096^3, far below
// both the memory and the FFMA ceilings: the loads of A waste most of every transaction (sector
// utilisation in a profile: about 1/8), and nothing read is reused from on-chip memory.
// Limit: uncoalesced loads of A and stores of C, and every element of A and B is fetched from
// global memory (or L2) once per output that uses it: 2 K loads per 2 K flops.
#include "block_tile.cuh"
#include "elements.cuh"
#include "export.cuh"

// --8<-- [start:kernel]
template <typename T>
__device__ void naive_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int ROWS = 32, COLS = 8;  // the block's tile of C: lanes along M, warps along N
    const BlockTile tile = block_tile<ROWS, COLS>(N);
    const long long row = tile.row0 + threadIdx.x % ROWS;  // adjacent lanes: adjacent rows
    const long long col = tile.col0 + threadIdx.x / ROWS;
    if (row >= M || col >= N) return;
    const T* a_row = a + row * K;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += to_float(a_row[k]) * to_float(b[(long long)k * N + col]);
    c[row * N + col] = from_float<T>(sum);
}
// --8<-- [end:kernel]

// One kernel per dtype, no configuration: gemm_v0_<dtype>, 256 threads a block.
#define V0_KERNEL(tag, T, ...) GEMM_EXPORT(gemm_v0_##tag, T, __launch_bounds__(256), naive_gemm<T>)
GEMM_EVERY_DTYPE(V0_KERNEL)
