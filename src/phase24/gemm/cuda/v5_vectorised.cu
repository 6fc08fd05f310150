// v5 (cuda-v5): v4 with 16-byte accesses: tiles copied from global memory 16 bytes at a time,
// A's tile stored transposed in shared memory, a thread's operands read from it as float4s, and
// its outputs written as 8- or 16-byte stores.
//
// Changed from v4: (1) each thread copies runs of 16 bytes (4 floats, 8 halves) along a row of A
// or B: a quarter of v4's load instructions in float32, an eighth in 16-bit types. (2) A's tile
// is stored as as[k][m]: the TM values of A a thread needs at one k are consecutive words, read
// as TM / 4 float4 loads (v4 made TM one-word loads, BK words apart); B's TN values likewise.
// (3) a thread's TN outputs of a row are stored together (16 bytes, or 8 for 16-bit TN = 4).
// The 16-byte path needs rows that start on 16-byte boundaries (K, N a multiple of 4 floats or
// 8 halves, aligned operands): the kernel checks, and otherwise (and at the edges of the
// matrices) copies element by element, so every shape stays correct.
// Prediction: a modest step over v4 in float32 at 4096^3 (fewer instructions per FFMA issued;
// the profile shows LDS.128 and LDG.128); on sizes not a multiple of 4 it falls back to v4-like
// loads, so e.g. K = 4097 runs measurably slower than K = 4096.
// Limit: the threads of a block tile C in one flat grid. With TN = 8 a lane's values of B's tile
// start 8 words after its neighbour's, so a warp's float4 reads of them use half the banks and
// take twice the shared-memory cycles they need; and the transposed copy of A writes V words BM
// apart (bank conflicts on the stores). v6 gives each warp a compact tile of its own.
#include "block_tile.cuh"
#include "export.cuh"
#include "tiles16.cuh"
#include "vec16.cuh"

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int TM, int TN>
__device__ void vectorised_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    static_assert(TM % 4 == 0 && TN % 4 == 0, "operands are read from shared memory as float4");
    constexpr int NT = BM * BN / (TM * TN);
    __shared__ __align__(16) float as[BK][BM];  // transposed: as[k][i] = a[row0 + i][k0 + k]
    __shared__ __align__(16) float bs[BK][BN];
    const BlockTile tile = block_tile<BM, BN>(N);
    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    // Decided once for the whole matrix, so every thread takes the same path.
    const bool vec_a = rows_aligned16(a, K), vec_b = rows_aligned16(b, N);
    const bool vec_c = rows_aligned16(c, N);
    float sum[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        stage_a_transposed<T, BM, BK, NT>(as, a, tile.row0, k0, M, K, vec_a);
        stage_b<T, BK, BN, NT>(bs, b, k0, tile.col0, K, N, vec_b);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ak[TM], bk[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&ak[i]) =
                    *reinterpret_cast<const float4*>(&as[k][ty * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&bk[j]) =
                    *reinterpret_cast<const float4*>(&bs[k][tx * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) sum[i][j] += ak[i] * bk[j];
        }
        __syncthreads();
    }
    const long long col = tile.col0 + tx * TN;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = tile.row0 + ty * TM + i;
        if (row < M) store_run<T, TN>(c + row * N + col, (int)(N - col), vec_c, sum[i]);
    }
}
// --8<-- [end:kernel]

#define V5_KERNEL(tag, T, BM, BN, BK, TM, TN)                                          \
    GEMM_EXPORT(gemm_v5_bm##BM##_bn##BN##_bk##BK##_tm##TM##_tn##TN##_##tag, T,         \
                __launch_bounds__(BM * BN / (TM * TN)), vectorised_gemm<T, BM, BN, BK, TM, TN>)
#define V5(BM, BN, BK, TM, TN) GEMM_EVERY_DTYPE(V5_KERNEL, BM, BN, BK, TM, TN)

// --8<-- [start:configs]
// (BM, BN, BK, TM, TN), as v4's; BK and BN multiples of 16 bytes of the widest element (8), TM
// and TN of 4 (rung.py reads these lines).
V5(128, 128, 8, 8, 8) V5(128, 128, 16, 8, 8) V5(64, 64, 16, 4, 4)
// --8<-- [end:configs]
