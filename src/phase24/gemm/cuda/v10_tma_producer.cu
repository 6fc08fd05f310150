// v10 (cuda-v10): TMA copies into an mbarrier pipeline, filled by a producer warpgroup for
// consumer warpgroups that only multiply: Hopper's own way to feed wgmma, built for sm_90a only.
// float16 and bfloat16.
//
// Changed from v9: (1) the copies: one thread of the producer warpgroup asks the TMA for each
// stage's tiles, one box of A (BM rows x 64 values of K) and BN / 64 boxes of B (64 rows of K x 64
// columns), each a single instruction; the TMA computes every address, writes the 128-byte
// swizzle v9 wrote by hand, and fills what lies outside the matrices with zeros; (2) the
// synchronisation: no block-wide barrier in the loop: each slot has two mbarriers, "full" (the TMA
// counts its bytes off it) and "empty" (each consumer warpgroup arrives once it has finished
// reading the slot), so the producer runs up to STAGES steps ahead and each consumer waits only
// for the data it needs; (3) the registers: the producer gives its registers back (setmaxnreg) so
// the two consumers can each hold a 64 x 256 float32 accumulator (128 registers a thread).
// Prediction: at 4096^3 in bfloat16 well past v9's share of cuBLAS, towards 80%: the tensor pipe
// no longer waits for a barrier that every thread reaches after its own copies.
// Limit: the consumers still store C straight from registers at the end, while no wgmma runs, and
// each block computes one tile, so the next tile's loads start only when a new block does:
// persistent blocks and an epilogue that overlaps the next tile's main loop are the next steps,
// then clusters that share A's and B's boxes among blocks (TMA multicast).
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
#error "v10_tma_producer.cu uses TMA, wgmma and setmaxnreg, which only sm_90a has: build it for sm_90a"
#endif

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int STAGES, int GROUP>
__device__ void tma_gemm(const CUtensorMap* ta, const CUtensorMap* tb, T* c, int M, int N, int K) {
    constexpr int CONSUMERS = BM / 64;  // a consumer warpgroup per 64 rows of the tile
    constexpr uint32_t A_BYTES = BM * BK * 2, PANEL = BK * 64 * 2, B_BYTES = BK * BN * 2;
    static_assert(BK == 64, "a row of the 128-byte swizzle (and of a box) is 64 16-bit values");
    static_assert((BM == 64 || BM == 128) && BN % 64 == 0 && BN <= 256, "whole wgmma tiles");
    // STAGES slots of A's tile, then STAGES of B's, from the first 1024-byte boundary (the
    // launch asks for 1 KB more than the slots take); the barriers are static.
    extern __shared__ unsigned char smem[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const uint32_t base = (shared_address(smem) + 1023) & ~1023u;
    auto a_tile = [&](int st) { return base + st * A_BYTES; };
    auto b_tile = [&](int st) { return base + STAGES * A_BYTES + st * B_BYTES; };
    const BlockTile tile = grouped_tile<BM, BN, GROUP>(M, N);  // v7's order
    const int row0 = tile.row0, col0 = tile.col0;  // below 2^31: TMA's coordinates are ints
    const int steps = (K + BK - 1) / BK;

    init_slots(full, empty, CONSUMERS);  // full: the producer and the TMA; empty: consumers

    // Step s uses slot s % STAGES in round s / STAGES; a barrier's phase r is round r's.
    const int wg = threadIdx.x / 128;
    if (wg == 0) {  // the producer: one thread issues every copy
        if constexpr (CONSUMERS == 2) regs_down<40>();
        if (threadIdx.x == 0) {
            for (int step = 0; step < steps; ++step) {
                const int st = step % STAGES;
                mbar_wait(shared_address(&empty[st]), ((step / STAGES) & 1) ^ 1);  // round - 1 read
                const uint32_t bar = shared_address(&full[st]);
                mbar_expect_bytes(bar, A_BYTES + B_BYTES);
                tma_load(a_tile(st), ta, bar, step * BK, row0);
#pragma unroll
                for (int p = 0; p < BN / 64; ++p)
                    tma_load(b_tile(st) + p * PANEL, tb, bar, col0 + p * 64, step * BK);
            }
        }
        return;
    }
    if constexpr (CONSUMERS == 2) regs_up<232>();

    // Consumer cw multiplies rows 64 cw .. 64 cw + 63 of the tile by all BN columns.
    const int cw = wg - 1;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
    hold(acc);
    for (int step = 0; step < steps; ++step) {
        const int st = step % STAGES;
        mbar_wait(shared_address(&full[st]), (step / STAGES) & 1);  // this round's bytes are in
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16)
            wgmma_async<BN, T>(acc, sw128::a_desc(a_tile(st), cw * 64, kk),
                               sw128::b_desc(b_tile(st), kk, BK));
        wgmma_commit();
        wgmma_wait<1>();  // step - 1's group is done: its slot may be refilled
        if (step > 0 && threadIdx.x % 128 == 0)
            mbar_arrive(shared_address(&empty[(step - 1) % STAGES]));
    }
    wgmma_wait<0>();
    hold(acc);

    store_acc<BN>(acc, c, row0 + cw * 64, col0, M, N);
}
// --8<-- [end:kernel]

// v10's kernels take the tensor maps of A and B (by value, in the kernel's parameter space) in
// place of their addresses; the rest of the lab's GEMM ABI (export.cuh) holds.
#define V10_KERNEL(tag, T, BM, BN, BK, S, G)                                                      \
    extern "C" __global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)                          \
        gemm_v10_bm##BM##_bn##BN##_bk##BK##_s##S##_g##G##_##tag(                                  \
            const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,       \
            T* __restrict__ c, int M, int N, int K) {                                             \
        tma_gemm<T, BM, BN, BK, S, G>(&ta, &tb, c, M, N, K);                                      \
    }
#define V10(BM, BN, BK, S, G)                         \
    V10_KERNEL(f16, __half, BM, BN, BK, S, G)         \
    V10_KERNEL(bf16, __nv_bfloat16, BM, BN, BK, S, G)

// --8<-- [start:configs]
// (BM, BN, BK, STAGES, GROUP): a BM x BN tile of C per block, BM / 64 consumer warpgroups and a
// producer, K in steps of BK = 64, STAGES slots in (dynamic) shared memory: STAGES (BM + BN) BK
// 2-byte values and 1 KB to align them (rung.py reads these lines and gives the launch its size).
V10(128, 256, 64, 4, 8) V10(128, 256, 64, 3, 8) V10(128, 128, 64, 6, 8) V10(64, 256, 64, 5, 8)
V10(64, 128, 64, 8, 8)
// --8<-- [end:configs]
