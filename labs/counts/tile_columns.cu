// Shared tiles of 32 x 32 floats, the tile of A stored transposed: thread (ty, tx) writes
// As[tx][ty], so a warp (one ty, tx = 0..31) writes a COLUMN of As. Without padding, the 32
// words of a column are 32 floats apart, all in one of the 32 banks. Read "shared stores to As"
// with PAD 0, then with PAD 1 (each row one float longer).
//
//     python -m phase24 check gemm --file labs/counts/tile_columns.cu
#define TILE_M 32
#define TILE_N 32
#define THREADS 1024  // 32 x 32: one thread per element of the tile of C
#define PAD 0

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    __shared__ float As[32][32 + PAD];  // As[k][r]: column k of the tile of A, transposed
    __shared__ float Bs[32][32];
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    const long long tiles_n = (N + TILE_N - 1) / TILE_N;
    const long long row0 = (blockIdx.x / tiles_n) * TILE_M, col0 = (blockIdx.x % tiles_n) * TILE_N;
    const long long row = row0 + ty, col = col0 + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        // a warp reads 32 neighbouring floats of one row of A (coalesced) and writes them down a
        // column of As
        As[tx][ty] = row < M && k0 + tx < K ? a[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = k0 + ty < K && col < N ? b[(long long)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 32; ++k) sum += As[k][ty] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) c[row * N + col] = sum;
}
