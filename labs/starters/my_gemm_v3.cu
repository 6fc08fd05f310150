// My CUDA C GEMM, rung 3: 1-D register blocking. Lab 02 (GEMM), exercise "Write v3": the rung
// that crosses the bar (30% of cuBLAS in float32 at 4096^3). The ABI is my_gemm.cu's.
//
//     python -m phase24 check gemm --file labs/starters/my_gemm_v3.cu
//
// What changes from v2: v2 makes two shared-memory loads per product. Here a block computes a
// BM x BN tile of C with BM * BN / TM threads, and each thread keeps TM sums in registers, for
// rows ty * TM .. + TM - 1 of column tx: a value of B read from shared memory serves TM products.
// The staging is given (A's tile is stored transposed, as[k][r], so a thread's TM values of A
// at one k are consecutive words). As given, the sums stay 0: the file compiles, runs and fails.
// The solution: labs/solutions/my_gemm_v3.cu.
#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define TILE_M BM
#define TILE_N BN
#define THREADS (BM * BN / TM)  // 512: one element of each tile staged per thread

extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, int M, int N,
                                    int K) {
    __shared__ float as[BK][BM];  // as[k][r] = a[row0 + r][k0 + k]: A's tile, transposed
    __shared__ float bs[BK][BN];  // bs[k][j] = b[k0 + k][col0 + j]
    const long long tiles_n = (N + BN - 1) / BN;
    const long long row0 = (blockIdx.x / tiles_n) * BM, col0 = (blockIdx.x % tiles_n) * BN;
    const int tx = threadIdx.x % BN, ty = threadIdx.x / BN;  // column tx, rows ty*TM .. +TM
    const int ar = threadIdx.x / BK, ak = threadIdx.x % BK;  // the element of A this one stages
    const int bk = threadIdx.x / BN, bj = threadIdx.x % BN;  // and of B
    float sum[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const long long r = row0 + ar, j = col0 + bj;
        as[ak][ar] = r < M && k0 + ak < K ? a[r * K + k0 + ak] : 0.0f;
        bs[bk][bj] = k0 + bk < K && j < N ? b[(long long)(k0 + bk) * N + j] : 0.0f;
        __syncthreads();
        // TODO: for k = 0 .. BK - 1: read bs[k][tx] once into a register, then add its product
        //       with as[k][ty * TM + i] to sum[i] for each of the TM rows i.
        __syncthreads();
    }
    const long long col = col0 + tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = row0 + ty * TM + i;
        if (row < M && col < N) c[row * N + col] = sum[i];
    }
}
