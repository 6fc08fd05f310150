// Solution of labs/starters/my_gemm_v2.cu (lab 02, GEMM v2): TILE x TILE tiles of A and B staged
// in shared memory, one thread per element of C. Each element of A and B a block needs crosses
// the bus once per block instead of once per thread that uses it: TILE times less global traffic.
//
//     python -m phase24 check gemm --file labs/solutions/my_gemm_v2.cu
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
        as[ty][tx] = row < M && k0 + tx < K ? a[row * K + k0 + tx] : 0.0f;
        bs[ty][tx] = k0 + ty < K && col < N ? b[(long long)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();  // both tiles written before any thread reads them
        for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();  // both tiles read before the next step overwrites them
    }
    if (row < M && col < N) c[row * N + col] = sum;
}
