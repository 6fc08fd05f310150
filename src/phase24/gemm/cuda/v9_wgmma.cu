// v9 (cuda-v9): Hopper's own Tensor Core instruction, wgmma, built for sm_90a only (Ampere and
// Ada run v8): each warpgroup (4 warps, 128 threads) multiplies a 64 x 16 slice of A by a 16 x BN
// slice of B with one wgmma.mma_async, both read by the Tensor Cores straight from shared
// memory, asynchronously, into float32 sums held in the warpgroup's registers. float16 and
// bfloat16 only.
//
// Changed from v8: (1) the instruction: v8's warps issue m16n8k16 mma.sync, 2048 multiply-adds each,
// and wait for each; a warpgroup's m64nNk16 wgmma computes 64 x 256 x 16 = 262144 multiply-adds in
// one issue and runs while the threads go on (issue, commit, wait for the group before last);
// (2) the operands: no ldmatrix and no fragments in registers; wgmma reads A's and B's tiles where
// the copies left them, described by two 64-bit descriptors (start, strides, swizzle); (3) the
// layout: the one wgmma reads, 128-byte rows with the 128-byte swizzle (sw128.cuh): A's tile
// K-major as it lies in A, B's tile in panels of 64 columns, MN-major, read with wgmma's
// transpose of B, so B is never transposed or copied on the host; (4) the pipeline: STAGES
// slots, cp.async copies STAGES - 2 steps ahead, since the slot the group before last read is
// refilled only after wgmma_wait<1> says that group is done. Two warpgroups share a block, one
// per 64 rows of the 128-row tile. Partial tiles read zeros (cp.async's source size 0), and the
// launcher pads rows that are not a multiple of 16 bytes, as for v8.
// Prediction: at 4096^3 in bfloat16 well past v8 (wgmma is Hopper's full-rate Tensor Core
// path, which mma.sync reaches at a fraction) but below cuBLAS's TMA kernels; the profile shows
// the tensor pipe idle while the warps issue cp.async and wait at the block's barrier each step.
// Limit: the same threads copy and multiply, and every thread waits at one barrier per step; the
// copies go through the load/store unit, 16 bytes an instruction. TMA (one thread copies a whole
// tile, an mbarrier says when it is in) and warp specialisation (a producer warpgroup, consumer
// warpgroups) remove both: the next rungs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../../core/cuda/shared_address.cuh"
#include "block_tile.cuh"
#include "export.cuh"
#include "sw128.cuh"
#include "vec16.cuh"
#include "wgmma.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "v9_wgmma.cu uses wgmma, which only sm_90a has: build it for sm_90a (Hopper)"
#endif

// 16 bytes from global memory to shared address `dst`, asynchronously; zeros where `full` is false.
__device__ __forceinline__ void copy16(uint32_t dst, const void* src, bool full) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(full ? 16 : 0));
}

// --8<-- [start:kernel]
template <typename T, int BM, int BN, int BK, int STAGES, int GROUP>
__device__ void wgmma_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int NT = (BM / 64) * 128;  // a warpgroup per 64 rows of the tile
    constexpr int CA = BK / 8, CB = BN / 8;  // 16-byte chunks in a row of A's and of B's tile
    constexpr int LA = BM * CA / NT, LB = BK * CB / NT;  // a thread's chunks of each tile
    constexpr uint32_t A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
    static_assert(BK == 64, "a row of the 128-byte swizzle is 64 16-bit values of K");
    static_assert(BM % 64 == 0 && BN % 64 == 0 && BN <= 256 && STAGES >= 3, "whole wgmma tiles");
    static_assert((NT / CA) % 8 == 0 && (NT / CB) % 8 == 0 && LA * NT == BM * CA &&
                      LB * NT == BK * CB,
                  "a thread copies one chunk column, in rows a whole swizzle period apart");
    // STAGES slots of A's tile, then STAGES of B's, from the first 1024-byte boundary (the
    // launch asks for 1 KB more than the slots take).
    extern __shared__ unsigned char smem[];
    const uint32_t base = (shared_address(smem) + 1023) & ~1023u;
    auto a_tile = [&](int st) { return base + st * A_BYTES; };
    auto b_tile = [&](int st) { return base + STAGES * A_BYTES + st * B_BYTES; };
    const BlockTile tile = grouped_tile<BM, BN, GROUP>(M, N);  // v7's order
    const long long row0 = tile.row0, col0 = tile.col0;
    const int steps = (K + BK - 1) / BK;

    // A thread copies chunk column ca of rows ra, ra + NT / CA, ... of A's tile and chunk column
    // cb of rows rb, rb + NT / CB, ... of B's: rows 8 apart have the same swizzle, so each
    // shared address is one offset plus a multiple of a row; the global ones move BK along K.
    const int ca = threadIdx.x % CA, ra = threadIdx.x / CA;
    const int cb = threadIdx.x % CB, rb = threadIdx.x / CB;
    const uint32_t a_off = sw128::chunk_at(ra, ca), b_off = sw128::panel_chunk_at(rb, cb, BK);
    const T* ga = a + (row0 + ra) * K + ca * 8;
    const T* gb = b + (long long)rb * N + col0 + cb * 8;
    const bool b_col_in = col0 + cb * 8 < N;
    auto load = [&](int stage, int step) {  // cp.async of one step's tiles (zeros off the edges)
        const int k0 = step * BK;
        const bool a_k_in = k0 + ca * 8 < K;
#pragma unroll
        for (int i = 0; i < LA; ++i) {
            const bool in = a_k_in && row0 + ra + i * (NT / CA) < M;
            const T* src = ga + (long long)i * (NT / CA) * K + k0;
            copy16(a_tile(stage) + a_off + i * (NT / CA) * sw128::ROW, in ? src : a, in);
        }
#pragma unroll
        for (int i = 0; i < LB; ++i) {
            const bool in = b_col_in && k0 + rb + i * (NT / CB) < K;
            const T* src = gb + (long long)(k0 + i * (NT / CB)) * N;
            copy16(b_tile(stage) + b_off + i * (NT / CB) * sw128::ROW, in ? src : b, in);
        }
    };

    // Warpgroup wg multiplies rows 64 wg .. 64 wg + 63 of the tile by all BN columns.
    const int wg = threadIdx.x / 128;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
    hold(acc);  // the zeros are set here, once, not on each path to the first wgmma or the wait
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < steps) load(s, s);
        asm volatile("cp.async.commit_group;\n");
    }
    for (int step = 0; step < steps; ++step) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 3));  // this step's copies...
        fence_proxy_async();  // ... made visible to wgmma's reads (the async proxy) ...
        __syncthreads();      // ... by every thread; and every warpgroup's step - 2 is done
        const int ahead = step + STAGES - 2;  // its slot is step - 2's, free now
        if (ahead < steps) load(ahead % STAGES, ahead);
        asm volatile("cp.async.commit_group;\n");
        const int st = step % STAGES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16)
            wgmma_async<BN, T>(acc, sw128::a_desc(a_tile(st), wg * 64, kk),
                               sw128::b_desc(b_tile(st), kk, BK));
        wgmma_commit();
        wgmma_wait<1>();  // step - 1's group is done (this one may still run)
    }
    wgmma_wait<0>();
    hold(acc);
    asm volatile("cp.async.wait_group 0;\n");

    store_acc<BN>(acc, c, row0 + wg * 64, col0, M, N);
}
// --8<-- [end:kernel]

#define V9_KERNEL(tag, T, BM, BN, BK, S, G)                                                       \
    GEMM_EXPORT(gemm_v9_bm##BM##_bn##BN##_bk##BK##_s##S##_g##G##_##tag, T,                        \
                __launch_bounds__((BM / 64) * 128, 1), wgmma_gemm<T, BM, BN, BK, S, G>)
#define V9(BM, BN, BK, S, G)                         \
    V9_KERNEL(f16, __half, BM, BN, BK, S, G)         \
    V9_KERNEL(bf16, __nv_bfloat16, BM, BN, BK, S, G)

// --8<-- [start:configs]
// (BM, BN, BK, STAGES, GROUP): a BM x BN tile of C per block, BM / 64 warpgroups, K in steps of
// BK = 64 (one 128-byte row), STAGES slots in (dynamic) shared memory: STAGES (BM + BN) BK 2-byte
// values and 1 KB to align them, up to 193 KB (rung.py reads these lines and gives the launch
// its size). Copies run STAGES - 2 steps ahead.
V9(128, 128, 64, 4, 8) V9(128, 128, 64, 6, 8) V9(128, 256, 64, 4, 8) V9(128, 128, 64, 3, 8)
V9(128, 64, 64, 4, 8)
// --8<-- [end:configs]
