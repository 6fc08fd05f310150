// One thread per element of C, consecutive threads on consecutive COLUMNS of C: a warp's 32
// threads read one a[row * K + k] (the same address: a broadcast) and 32 neighbouring floats of
// b. Read "loads of a" and "loads of b" beside naive_rows.cu's.
//
//     python -m phase24 check gemm --file labs/counts/coalesced.cu
#define TILE_M 8    // a block: 8 rows x 32 columns of C, threadIdx.x % 32 the column
#define TILE_N 32
#define THREADS 256

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    const long long tiles_n = (N + TILE_N - 1) / TILE_N;
    const long long row = (blockIdx.x / tiles_n) * TILE_M + threadIdx.x / TILE_N;
    const long long col = (blockIdx.x % tiles_n) * TILE_N + threadIdx.x % TILE_N;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += a[row * K + k] * b[(long long)k * N + col];
    c[row * N + col] = sum;
}
