// v11 (cuda-v11): persistent blocks: one block per SM stays for the whole product and walks the
// tiles of C, its producer loading the next tile while the consumers finish the last. sm_90a only;
// float16 and bfloat16.
//
// Changed from v10: the grid is one block per SM (at most as many as there are tiles), and block
// b computes tiles b, b + gridDim.x, b + 2 gridDim.x, ... of the grouped order, so the blocks
// running at once always work on consecutive tiles of it and share their panels of A and B in L2.
// The slots and their barriers live across tiles: a step counter that runs over all of a block's
// tiles gives each step its slot and round, so the producer never drains the pipeline between
// tiles. It starts the next tile's loads as soon as slots are free, while the consumers wait for
// their last products and store C; and no block has to start, set up its barriers and fill its
// pipeline again for each tile. Why: at 4096^3 with 128 x 256 tiles v10 runs 512 blocks, each
// storing its 128 x 256 values with the tensor pipe idle and then leaving its SM to a block that
// starts with an empty pipeline.
// Prediction: a few per cent over v10 on the large squares, most where K is small (fewer steps
// per tile to hide a tile's start and end behind); no gain where the tiles are fewer than the SMs.
// Limit: the consumers still store C from registers while no wgmma runs (only the loads overlap
// the epilogue); two consumer groups taking turns on tiles, a TMA store of C through shared
// memory, and clusters that share A's and B's boxes (TMA multicast) are what remain.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../../core/cuda/shared_address.cuh"
#include "block_tile.cuh"
#include "sw128.cuh"
#include "tma.cuh"
#include "vec16.cuh"
#include "wgmma.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "v11_persistent.cu uses TMA, wgmma and setmaxnreg, only sm_90a has them: build it for sm_90a"
#endif

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int STAGES, int GROUP>
__device__ void persistent_gemm(const CUtensorMap* ta, const CUtensorMap* tb, T* c, int M, int N,
                                int K) {
    constexpr int CONSUMERS = BM / 64;  // a consumer warpgroup per 64 rows of the tile
    constexpr uint32_t A_BYTES = BM * BK * 2, PANEL = BK * 64 * 2, B_BYTES = BK * BN * 2;
    static_assert(BK == 64, "a row of the 128-byte swizzle (and of a box) is 64 16-bit values");
    static_assert((BM == 64 || BM == 128) && BN % 64 == 0 && BN <= 256, "whole wgmma tiles");
    extern __shared__ unsigned char smem[];  // STAGES slots of A, then of B, 1024-byte aligned
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const uint32_t base = (shared_address(smem) + 1023) & ~1023u;
    auto a_tile = [&](int st) { return base + st * A_BYTES; };
    auto b_tile = [&](int st) { return base + STAGES * A_BYTES + st * B_BYTES; };
    const long long tiles = ((M + BM - 1LL) / BM) * ((N + BN - 1LL) / BN);  // 64-bit counts
    const int steps = (K + BK - 1) / BK;

    init_slots(full, empty, CONSUMERS);  // full: the producer and the TMA; empty: consumers

    // The block's step `it` (counted over all its tiles) uses slot it % STAGES in round
    // it / STAGES; a barrier's phase r is round r's.
    const int wg = threadIdx.x / 128;
    if (wg == 0) {  // the producer: one thread issues every copy of every tile
        if constexpr (CONSUMERS == 2) regs_down<40>();
        if (threadIdx.x == 0) {
            long long it = 0;
            for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
                const BlockTile tile = grouped_tile_at<BM, BN, GROUP>(t, M, N);
                const int row0 = tile.row0, col0 = tile.col0;  // TMA's coordinates are ints
                for (int step = 0; step < steps; ++step, ++it) {
                    const int st = it % STAGES;
                    mbar_wait(shared_address(&empty[st]), ((it / STAGES) & 1) ^ 1);  // round - 1
                    const uint32_t bar = shared_address(&full[st]);
                    mbar_expect_bytes(bar, A_BYTES + B_BYTES);
                    tma_load(a_tile(st), ta, bar, step * BK, row0);
#pragma unroll
                    for (int p = 0; p < BN / 64; ++p)
                        tma_load(b_tile(st) + p * PANEL, tb, bar, col0 + p * 64, step * BK);
                }
            }
        }
        return;
    }
    if constexpr (CONSUMERS == 2) regs_up<232>();

    // Consumer cw multiplies rows 64 cw .. 64 cw + 63 of each tile by all BN columns.
    const int cw = wg - 1;
    float acc[BN / 2];
    long long it = 0;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const BlockTile tile = grouped_tile_at<BM, BN, GROUP>(t, M, N);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
        hold(acc);
        for (int step = 0; step < steps; ++step, ++it) {
            const int st = it % STAGES;
            mbar_wait(shared_address(&full[st]), (it / STAGES) & 1);  // this round's bytes are in
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK; kk += 16)
                wgmma_async<BN, T>(acc, sw128::a_desc(a_tile(st), cw * 64, kk),
                                   sw128::b_desc(b_tile(st), kk, BK));
            wgmma_commit();
            wgmma_wait<1>();  // the step before is done: its slot may be refilled
            if (step > 0 && threadIdx.x % 128 == 0)
                mbar_arrive(shared_address(&empty[(it - 1) % STAGES]));
        }
        wgmma_wait<0>();
        hold(acc);
        if (threadIdx.x % 128 == 0)  // the tile's last slot too: the producer is already on
            mbar_arrive(shared_address(&empty[(it - 1) % STAGES]));  // the next tile
        store_acc<BN>(acc, c, tile.row0 + cw * 64, tile.col0, M, N);
    }
}
// --8<-- [end:kernel]

// v11's kernels take the tensor maps of A and B, as v10's do; the grid is the launcher's choice
// (one block per SM, at most one per tile), each block looping over its tiles.
#define V11_KERNEL(tag, T, BM, BN, BK, S, G)                                                      \
    extern "C" __global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)                          \
        gemm_v11_bm##BM##_bn##BN##_bk##BK##_s##S##_g##G##_##tag(                                  \
            const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,       \
            T* __restrict__ c, int M, int N, int K) {                                             \
        persistent_gemm<T, BM, BN, BK, S, G>(&ta, &tb, c, M, N, K);                               \
    }
#define V11(BM, BN, BK, S, G)                         \
    V11_KERNEL(f16, __half, BM, BN, BK, S, G)         \
    V11_KERNEL(bf16, __nv_bfloat16, BM, BN, BK, S, G)

// --8<-- [start:configs]
// (BM, BN, BK, STAGES, GROUP): v10's, with the largest tiles first (rung.py reads these lines
// and gives the launch its shared memory: STAGES (BM + BN) BK 2-byte values, 1 KB to align them).
V11(128, 256, 64, 4, 8) V11(128, 256, 64, 3, 8) V11(128, 128, 64, 6, 8) V11(64, 256, 64, 5, 8)
V11(64, 128, 64, 8, 8)
// --8<-- [end:configs]
