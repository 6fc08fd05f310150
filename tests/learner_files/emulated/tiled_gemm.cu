// A correct shared-tile GEMM (lab 01 GEMM's second kernel): 16 x 16 tiles of A and B staged in
// shared memory, one thread per element of C. tests/test_emulator.py removes its second barrier.
#define TILE_M 16
#define TILE_N 16
#define THREADS 256
#define T 16

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    __shared__ float As[T][T], Bs[T][T];
    const int tx = threadIdx.x % T, ty = threadIdx.x / T;
    const long long tiles_n = (N + T - 1) / T;
    const long long row = (blockIdx.x / tiles_n) * T + ty, col = (blockIdx.x % tiles_n) * T + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = row < M && k0 + tx < K ? a[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = k0 + ty < K && col < N ? b[(long long)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();  // the tiles are loaded
        for (int k = 0; k < T; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();  // the tiles are read: the next step may overwrite them
    }
    if (row < M && col < N) c[row * N + col] = sum;
}
