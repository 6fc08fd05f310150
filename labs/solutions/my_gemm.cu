// Solution of labs/starters/my_gemm.cu (lab 01, GEMM): one thread per element of C, consecutive
// threads on consecutive columns, so that a warp's loads of b are 32 neighbouring floats (one
// request, four 32-byte sectors) and its loads of a are one address (a broadcast).
//
//     python -m phase24 check gemm --file labs/solutions/my_gemm.cu
#define TILE_M 16
#define TILE_N 16
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
