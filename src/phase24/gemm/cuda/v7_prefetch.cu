// v7 (cuda-v7): warp tiling whose loads of the next tiles overlap the products of the current
// ones, and whose blocks walk C in groups of rows, so that the tiles running at once share
// their operands in L2.
//
// Changed from v6: (1) shared memory holds two stages of A's and B's tiles; at the start of a
// step each thread issues the global loads of the next step's tiles into registers, computes on
// the current stage while they are in flight, then writes them into the other stage: one
// __syncthreads a step instead of two, and the loads' latency hidden behind BK x (the thread's
// products); (2) block i takes its tile of C in a grouped order: GROUP rows of tiles are walked
// column by column, so the blocks resident together read GROUP row panels of A and a few column
// panels of B, where v6's row-major order reads one panel of A and every panel of B (at 4096^3
// in float32, B is 64 MB: more than the H200's L2).
// Prediction: the fastest SIMT rung at the large sizes; in float32 near 80% of cuBLAS on the
// H200 once tuned. On decode shapes (few rows) nothing changes: one row of tiles has no group
// and the time is B's single read.
// Limit: the loads still pass through registers (cp.async would copy global to shared memory
// directly, with no registers and no second instruction per value), and the FFMA pipe is the
// ceiling of every SIMT rung: the Tensor Cores are the next issue's ladder.
#include "block_tile.cuh"
#include "export.cuh"
#include "tiles16.cuh"
#include "vec16.cuh"

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int GROUP>
__device__ void prefetching_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int LM = 4, LN = 8, SM = LM * TM, SN = LN * TN, RM = WM / SM, RN = WN / SN;
    constexpr int NT = (BM / WM) * (BN / WN) * 32, V = Vec16<T>::size;
    constexpr int A_ALL = BM * BK / V, B_ALL = BK * BN / V;  // runs of V values in the tiles
    constexpr int A_RUNS = (A_ALL + NT - 1) / NT, B_RUNS = (B_ALL + NT - 1) / NT;  // a thread's
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % SM == 0 && WN % SN == 0 &&
                  TM % 4 == 0 && TN % 4 == 0 && BK % V == 0 && BN % V == 0, "tiles as in v6");
    __shared__ __align__(16) float as[2][BK][BM];  // two stages; A transposed as in v5, v6
    __shared__ __align__(16) float bs[2][BK][BN];
    const BlockTile tile = grouped_tile<BM, BN, GROUP>(M, N);
    const long long row0 = tile.row0, col0 = tile.col0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tm0 = (warp / (BN / WN)) * WM + (lane / LN) * TM;
    const int tn0 = (warp % (BN / WN)) * WN + (lane % LN) * TN;
    const bool vec_a = rows_aligned16(a, K), vec_b = rows_aligned16(b, N);
    const bool vec_c = rows_aligned16(c, N);
    float ra[A_RUNS][V], rb[B_RUNS][V];  // the next tiles, on their way to shared memory

    auto load = [&](int k0) {  // global -> registers; zeros past the edges
#pragma unroll
        for (int r = 0; r < A_RUNS; ++r) {
            const int s = threadIdx.x + r * NT, i = s / (BK / V), k = (s % (BK / V)) * V;
            if (s >= A_ALL) break;
            const long long row = row0 + i;
            load_run16(a + row * K + k0 + k, row < M ? K - (k0 + k) : 0, vec_a, ra[r]);
        }
#pragma unroll
        for (int r = 0; r < B_RUNS; ++r) {
            const int s = threadIdx.x + r * NT, k = s / (BN / V), j = (s % (BN / V)) * V;
            if (s >= B_ALL) break;
            const long long col = col0 + j;
            load_run16(b + (long long)(k0 + k) * N + col, k0 + k < K ? (int)(N - col) : 0, vec_b,
                       rb[r]);
        }
    };
    auto store = [&](int stage) {  // registers -> shared memory
#pragma unroll
        for (int r = 0; r < A_RUNS; ++r) {
            const int s = threadIdx.x + r * NT, i = s / (BK / V), k = (s % (BK / V)) * V;
            if (s >= A_ALL) break;
#pragma unroll
            for (int j = 0; j < V; ++j) as[stage][k + j][i] = ra[r][j];
        }
#pragma unroll
        for (int r = 0; r < B_RUNS; ++r) {
            const int s = threadIdx.x + r * NT, k = s / (BN / V), j = (s % (BN / V)) * V;
            if (s >= B_ALL) break;
#pragma unroll
            for (int q = 0; q < V; q += 4)
                *reinterpret_cast<float4*>(&bs[stage][k][j + q]) =
                    make_float4(rb[r][q], rb[r][q + 1], rb[r][q + 2], rb[r][q + 3]);
        }
    };

    float sum[RM * TM][RN * TN] = {};
    load(0);
    store(0);
    __syncthreads();
    for (int k0 = 0, stage = 0; k0 < K; k0 += BK, stage ^= 1) {
        const bool more = k0 + BK < K;
        if (more) load(k0 + BK);  // in flight during the products below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ak[RM * TM], bk[RN * TN];
#pragma unroll
            for (int r = 0; r < RM; ++r)
#pragma unroll
                for (int i = 0; i < TM; i += 4)
                    *reinterpret_cast<float4*>(&ak[r * TM + i]) =
                        *reinterpret_cast<const float4*>(&as[stage][k][tm0 + r * SM + i]);
#pragma unroll
            for (int r = 0; r < RN; ++r)
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    *reinterpret_cast<float4*>(&bk[r * TN + j]) =
                        *reinterpret_cast<const float4*>(&bs[stage][k][tn0 + r * SN + j]);
#pragma unroll
            for (int i = 0; i < RM * TM; ++i)
#pragma unroll
                for (int j = 0; j < RN * TN; ++j) sum[i][j] += ak[i] * bk[j];
        }
        // The other stage was last read in the step before, which every thread has finished
        // (the __syncthreads below it): it can be written now, and read after this step's.
        if (more) store(stage ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RM * TM; ++i) {
        const long long row = row0 + tm0 + (i / TM) * SM + i % TM;
        if (row >= M) continue;
#pragma unroll
        for (int r = 0; r < RN; ++r) {
            const long long col = col0 + tn0 + r * SN;
            store_run<T, TN>(c + row * N + col, (int)(N - col), vec_c, &sum[i][r * TN]);
        }
    }
}
// --8<-- [end:kernel]

#define V7_KERNEL(tag, T, BM, BN, BK, WM, WN, TM, TN, G)                                            \
    GEMM_EXPORT(gemm_v7_bm##BM##_bn##BN##_bk##BK##_wm##WM##_wn##WN##_tm##TM##_tn##TN##_g##G##_##tag, \
                T, __launch_bounds__((BM / WM) * (BN / WN) * 32),                                 \
                prefetching_gemm<T, BM, BN, BK, WM, WN, TM, TN, G>)
#define V7(BM, BN, BK, WM, WN, TM, TN, G) GEMM_EVERY_DTYPE(V7_KERNEL, BM, BN, BK, WM, WN, TM, TN, G)

// --8<-- [start:configs]
// (BM, BN, BK, WM, WN, TM, TN, GROUP): v6's tile sizes, then GROUP rows of tiles per group
// (rung.py reads these lines).
V7(128, 128, 16, 64, 32, 8, 4, 8) V7(128, 128, 8, 64, 32, 8, 4, 8) V7(128, 256, 8, 64, 64, 8, 4, 8)
V7(256, 128, 8, 64, 64, 8, 4, 8) V7(128, 64, 16, 64, 32, 8, 4, 8) V7(64, 64, 16, 32, 32, 4, 4, 8)
// --8<-- [end:configs]
