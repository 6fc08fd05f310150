// My CUDA C GEMM, rung 2: tiles of A and B staged in shared memory. Lab 02 (GEMM), exercise
// "Write v2". The ABI is my_gemm.cu's.
//
//     python -m phase24 check gemm --file labs/starters/my_gemm_v2.cu
//
// What changes from your lab 01 kernel: there, every thread reads its K values of A and of B
// from global memory, and each value is read by TILE threads of a block. Here a block's threads
// first copy a TILE x TILE tile of A and one of B into shared memory (one element each), wait for
// each other, and then each reads its TILE products' operands from the tiles. As given, nothing
// is staged and sum stays 0: the file compiles, runs and fails. The solution:
// labs/solutions/my_gemm_v2.cu.
#define TILE 32
#define TILE_M TILE
#define TILE_N TILE
#define THREADS (TILE * TILE)

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    __shared__ float as[TILE][TILE];  // as[r][k] = a[row0 + r][k0 + k]
    __shared__ float bs[TILE][TILE];  // bs[k][j] = b[k0 + k][col0 + j]
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const long long tiles_n = (N + TILE - 1) / TILE;
    const long long row = (blockIdx.x / tiles_n) * TILE + ty;
    const long long col = (blockIdx.x % tiles_n) * TILE + tx;
    // No early return: a thread past the edge of C still loads its share of the tiles and
    // reaches every barrier.
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // TODO 1: stage the tiles: as[ty][tx] = a[row][k0 + tx] and bs[ty][tx] = b[k0 + ty][col],
        //         0.0f past an edge of A or B (then it adds nothing).
        // TODO 2: a barrier: no thread may read a tile before every thread has written its part.
        // TODO 3: sum += as[ty][k] * bs[k][tx] for k = 0 .. TILE - 1.
        // TODO 4: a barrier: no thread may overwrite a tile (next k0) that another still reads.
    }
    if (row < M && col < N) c[row * N + col] = sum;
}
