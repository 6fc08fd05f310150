// One thread per element of C, consecutive threads on consecutive ROWS of C: a warp's 32
// threads read a[row * K + k] for 32 different rows, K floats apart. Correct, and slow.
// Run it emulated and read the line "loads of a": how many 32-byte sectors per request?
//
//     python -m phase24 check gemm --file labs/counts/naive_rows.cu
#define TILE_M 32   // a block: 32 rows x 8 columns of C, threadIdx.x % 32 the row
#define TILE_N 8
#define THREADS 256

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    const long long tiles_n = (N + TILE_N - 1) / TILE_N;
    const long long row = (blockIdx.x / tiles_n) * TILE_M + threadIdx.x % TILE_M;
    const long long col = (blockIdx.x % tiles_n) * TILE_N + threadIdx.x / TILE_M;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += a[row * K + k] * b[(long long)k * N + col];
    c[row * N + col] = sum;
}
