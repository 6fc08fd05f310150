// My CUDA C GEMM, rung 4: 2-D register blocking. Lab 02 (GEMM), exercise "Write v4". The ABI
// is my_gemm.cu's.
//
//     python -m phase24 check gemm --file labs/starters/my_gemm_v4.cu
//
// What changes from v3: each of a block's 256 threads computes a TM x TN block of C (rows
// ty * TM .., columns tx * TN ..). At each k it copies its TM values of A's tile and TN of B's
// into registers and makes all TM * TN products from them, an outer product: shared-memory loads
// per product fall from (TM + 1) / TM to (TM + TN) / (TM * TN). The staging is given. As given,
// the sums stay 0: the file compiles, runs and fails. The solution: labs/solutions/my_gemm_v4.cu.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define TILE_M BM
#define TILE_N BN
#define THREADS (BM * BN / (TM * TN))  // 256
#define PER_THREAD (BM * BK / THREADS)   // elements of each tile a thread stages: 4

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    __shared__ float as[BK][BM];  // as[k][r] = a[row0 + r][k0 + k]: A's tile, transposed
    __shared__ float bs[BK][BN];  // bs[k][j] = b[k0 + k][col0 + j]
    const long long tiles_n = (N + BN - 1) / BN;
    const long long row0 = (blockIdx.x / tiles_n) * BM, col0 = (blockIdx.x % tiles_n) * BN;
    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    float sum[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int p = 0; p < PER_THREAD; ++p) {
            const int e = threadIdx.x + p * THREADS;  // consecutive threads, consecutive words
            const int ar = e / BK, ak = e % BK, bk = e / BN, bj = e % BN;
            const long long r = row0 + ar, j = col0 + bj;
            as[ak][ar] = r < M && k0 + ak < K ? a[r * K + k0 + ak] : 0.0f;
            bs[bk][bj] = k0 + bk < K && j < N ? b[(long long)(k0 + bk) * N + j] : 0.0f;
        }
        __syncthreads();
        // TODO: for k = 0 .. BK - 1: copy av[i] = as[k][ty * TM + i] (TM values) and
        //       bv[j] = bs[k][tx * TN + j] (TN values) into register arrays, then
        //       sum[i][j] += av[i] * bv[j] for every i, j.
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long col = col0 + tx * TN + j;
            if (row < M && col < N) c[row * N + col] = sum[i][j];
        }
    }
}
