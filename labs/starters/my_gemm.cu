// My CUDA C GEMM, C = A @ B: a starter file for the Phase 24 lab.
//
// Grade it with
//
//     python -m phase24 check gemm --file labs/starters/my_gemm.cu
//
// On a machine with an NVIDIA GPU the checker compiles it for that GPU, runs it on every test
// case and compares it with the product in float64. Without a GPU it runs it in the lab's CUDA C
// emulator (each CUDA thread a coroutine, every memory access checked) on the same cases, and
// prints what its loads and stores cost: correctness and counts, no timing. Either way it runs
// the file's code with your rights.
//
// Once yours passes, or if you are stuck, compare with labs/solutions/my_gemm.cu.
//
// The kernel ABI the checker expects (the same one the lab's own GEMM kernels follow):
//
// * extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c,
//                                       int M, int N, int K);
//   a is M x K, b is K x N, c is M x N, all row-major and contiguous: a[r * K + k],
//   b[k * N + col], c[r * N + col]. Any M, N, K >= 1 (multiples of nothing; K may be 1).
//   Sum the products in float32 (no TF32) and write every one of the M * N outputs.
// * #define TILE_M, TILE_N  the tile of C one block computes  (the checker's default: 16 x 16)
// * #define THREADS         threads per block                 (default: 256)
//   The grid is one-dimensional: ceil(M / TILE_M) * ceil(N / TILE_N) blocks, and block i
//   computes the tile at rows (i / tiles_n) * TILE_M and columns (i % tiles_n) * TILE_N,
//   tiles_n = ceil(N / TILE_N) (block_tile.cuh, which you may include, computes this).
// * Optional: gemm_f16 (__half) and gemm_bf16 (__nv_bfloat16) with the same arguments, summing
//   in float32 and rounding once when storing; the checker grades every dtype the file defines.
//
// The checker fills c with NaN (and then with 42) before calling you, so an element you forget
// to write shows up as wrong; a NaN or inf in a or b must give what float64 gives.

#define TILE_M 16
#define TILE_N 16
#define THREADS 256

// --8<-- [start:starter]
extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    const long long tiles_n = (N + TILE_N - 1) / TILE_N;
    const long long row = (blockIdx.x / tiles_n) * TILE_M + threadIdx.x / TILE_N;
    const long long col = (blockIdx.x % tiles_n) * TILE_N + threadIdx.x % TILE_N;
    if (row >= M || col >= N) return;

    // TODO: the dot product of row `row` of a and column `col` of b, in float32:
    //       sum over k of a[row * K + k] * b[k * N + col] (64-bit offsets: M * K can pass 2^31).
    // As given, the kernel writes 0: it compiles and runs, and the checker fails it.
    float sum = 0.0f;

    c[row * N + col] = sum;
}
// --8<-- [end:starter]
