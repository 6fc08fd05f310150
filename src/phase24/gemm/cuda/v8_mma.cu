// v8 (cuda-v8): the Tensor Cores, as Ampere and Ada have them: each warp multiplies 16 x 16
// tiles of A by 16 x 8 tiles of B with one mma.sync instruction, its operands read from shared
// memory by ldmatrix, the tiles copied from global memory by cp.async in STAGES stages (dynamic
// shared memory, up to 144 KB), stored in a swizzled layout that no ldmatrix reads with a bank
// conflict. float16 and bfloat16 only.
//
// Changed from v7: (1) the products: an FFMA computes one product a thread; an m16n8k16
// mma.sync computes 16 x 8 x 16 = 2048 of them a warp, in float32 (the H200's Tensor Cores
// run bfloat16 at about 15 times its FFMA rate); (2) the copies: cp.async moves 16 bytes from
// global to shared memory with no register on the way and without waiting, so STAGES - 1 tiles
// are in flight while the warps compute on one; (3) the layout: a row of A's tile is 64 or 128
// bytes, of B's 128 to 512, so the 8 rows ldmatrix reads at once would share banks; the 16-byte
// chunk c of row r is stored at c ^ f(r) instead, which spreads any 8 consecutive rows over all
// 32 banks.
// Every size and alignment is taken: the launcher copies operands whose rows are not a multiple
// of 16 bytes (K or N not a multiple of 8) into padded ones, and partial tiles read zeros.
// Prediction: at 4096^3 in bfloat16 several times v7 and at least half of cuBLAS (whose Hopper
// kernels use wgmma, which mma.sync cannot reach); the profile shows the tensor pipe busy and
// stalls on the barrier that waits for the next stage.
// Limit: on Hopper mma.sync issues a quarter of what wgmma does, and each warp's operands pass
// through its registers (ldmatrix); TMA and wgmma (the next rungs) read them from shared memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "../../core/cuda/shared_address.cuh"
#include "block_tile.cuh"
#include "export.cuh"
#include "vec16.cuh"

// 16 bytes from global to shared memory, asynchronously; zeros where `full` is false.
__device__ __forceinline__ void copy16(void* dst, const void* src, bool full) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)),
                 "l"(src), "r"(full ? 16 : 0));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(p)));
}

// d += a (16 x 16, row-major) x b (16 x 8, column-major), float32 sums.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// --8<-- [start:kernel]
// Chunk c (16 bytes) of row r of a tile whose rows have CH chunks is stored at chunk
// c ^ f(r): 8 consecutive rows of one chunk, as ldmatrix reads them, then fall in 8 different
// 16-byte columns of the 128-byte bank window. Rows of 4 chunks (64 bytes) pair up in a window.
template <int CH>
__device__ __forceinline__ int swizzled(int r, int c) {
    constexpr int W = CH < 8 ? CH : 8;
    return c ^ ((r / (8 / W)) % W);
}

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP>
__device__ void mma_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32, CA = BK / 8, CB = BN / 8;  // chunks a row
    constexpr int FM = WM / 16, FN = WN / 8;  // a warp's mma tiles, down and across
    constexpr int LA = BM * CA / NT, LB = BK * CB / NT;  // a thread's chunks of each tile
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 32 == 0 && BN % 64 == 0,
                  "whole mma and ldmatrix tiles, rows of at least 64 bytes");
    static_assert(NT % CA == 0 && NT % CB == 0 && (NT / CA) % 8 == 0 && (NT / CB) % 8 == 0 &&
                      (BM * CA) % NT == 0 && (BK * CB) % NT == 0,
                  "a thread copies one chunk column, in rows a whole swizzle period apart");
    extern __shared__ __align__(128) unsigned char smem[];  // STAGES tiles of A, then of B
    T* as = reinterpret_cast<T*>(smem);                     // as[stage][BM][BK]
    T* bs = as + STAGES * BM * BK;                          // bs[stage][BK][BN]
    const BlockTile tile = grouped_tile<BM, BN, GROUP>(M, N);  // v7's order
    const long long row0 = tile.row0, col0 = tile.col0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int steps = (K + BK - 1) / BK;
    auto a_at = [&](int st, int r, int ch) { return as + (st * BM + r) * BK + swizzled<CA>(r, ch) * 8; };
    auto b_at = [&](int st, int r, int ch) { return bs + (st * BK + r) * BN + swizzled<CB>(r, ch) * 8; };

    // A thread copies chunk column ca of rows ra, ra + NT / CA, ... of A's tile and chunk column
    // cb of rows rb, rb + NT / CB, ... of B's: rows 8 apart have the same swizzle, so the shared
    // addresses are one offset plus a multiple of the row; the global ones move BK along K.
    const int ca = threadIdx.x % CA, ra = threadIdx.x / CA;
    const int cb = threadIdx.x % CB, rb = threadIdx.x / CB;
    const T* ga = a + (row0 + ra) * K + ca * 8;
    const T* gb = b + (long long)rb * N + col0 + cb * 8;
    const bool b_col_in = col0 + cb * 8 < N;
    auto load = [&](int stage, int step) {  // cp.async of one step's tiles (zeros off the edges)
        const int k0 = step * BK;
        const bool a_k_in = k0 + ca * 8 < K;
#pragma unroll
        for (int i = 0; i < LA; ++i) {
            const int r = ra + i * (NT / CA);
            const bool in = a_k_in && row0 + r < M;
            const T* src = ga + (long long)i * (NT / CA) * K + k0;
            copy16(a_at(stage, ra, ca) + i * (NT / CA) * BK, in ? src : a, in);
        }
#pragma unroll
        for (int i = 0; i < LB; ++i) {
            const int r = rb + i * (NT / CB);
            const bool in = b_col_in && k0 + r < K;
            const T* src = gb + (long long)(k0 + i * (NT / CB)) * N;
            copy16(b_at(stage, rb, cb) + i * (NT / CB) * BN, in ? src : b, in);
        }
    };
    // A warp's fragments for the 16 values of K from kk of stage st: FM tiles of A (ldmatrix,
    // lanes 0-15 rows at kk, lanes 16-31 at kk + 8), FN of B (two a load, transposed).
    auto fragments = [&](uint32_t (&fa)[FM][4], uint32_t (&fb)[FN][2], int st, int kk) {
#pragma unroll
        for (int i = 0; i < FM; ++i)
            ldmatrix_x4(fa[i], a_at(st, wm0 + i * 16 + lane % 16, kk / 8 + lane / 16));
#pragma unroll
        for (int j = 0; j < FN; j += 2) {
            uint32_t t[4];
            ldmatrix_x4_trans(t, b_at(st, kk + lane % 16, (wn0 + j * 8) / 8 + lane / 16));
            fb[j][0] = t[0], fb[j][1] = t[1], fb[j + 1][0] = t[2], fb[j + 1][1] = t[3];
        }
    };

    float acc[FM][FN][4] = {};
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < steps) load(s, s);
        asm volatile("cp.async.commit_group;\n");
    }
    uint32_t fa[2][FM][4], fb[2][FN][2];  // two sets: the next 16 of K load while these multiply
    for (int step = 0; step < steps; ++step) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();  // this step's tiles are in; every warp is done with the last step's
        const int st = step % STAGES;
        fragments(fa[0], fb[0], st, 0);
        if (step + STAGES - 1 < steps) load((step + STAGES - 1) % STAGES, step + STAGES - 1);
        asm volatile("cp.async.commit_group;\n");
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            const int cur = (kk / 16) % 2;
            if (kk + 16 < BK) fragments(fa[cur ^ 1], fb[cur ^ 1], st, kk + 16);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    mma16816<T>(acc[i][j], fa[cur][i], fb[cur][j][0], fb[cur][j][1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n");
    // Thread t holds, of each 16 x 8 tile, rows t/4 and t/4 + 8, columns 2 (t%4) and 2 (t%4) + 1.
    const bool vec_c = reinterpret_cast<uintptr_t>(c) % 4 == 0 && N % 2 == 0;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const long long row = row0 + wm0 + i * 16 + lane / 4 + h * 8;
                const long long col = col0 + wn0 + j * 8 + (lane % 4) * 2;
                if (row >= M || col >= N) continue;
                T* p = c + row * N + col;
                const float* v = &acc[i][j][2 * h];
                if (vec_c && col + 1 < N)  // both values in one 4-byte store
                    *reinterpret_cast<uint32_t*>(p) = pack2(v[0], v[1], (T*)nullptr);
                else
                    for (int q = 0; q < 2 && col + q < N; ++q) p[q] = from_float<T>(v[q]);
            }
}
// --8<-- [end:kernel]

#define V8_KERNEL(tag, T, BM, BN, BK, WM, WN, S, G)                                              \
    GEMM_EXPORT(gemm_v8_bm##BM##_bn##BN##_bk##BK##_wm##WM##_wn##WN##_s##S##_g##G##_##tag, T,     \
                __launch_bounds__((BM / WM) * (BN / WN) * 32),                                  \
                mma_gemm<T, BM, BN, BK, WM, WN, S, G>)
#define V8(BM, BN, BK, WM, WN, S, G)                         \
    V8_KERNEL(f16, __half, BM, BN, BK, WM, WN, S, G)         \
    V8_KERNEL(bf16, __nv_bfloat16, BM, BN, BK, WM, WN, S, G)

// --8<-- [start:configs]
// (BM, BN, BK, WM, WN, STAGES, GROUP): a BM x BN tile of C per block, K in steps of BK, one
// WM x WN tile per warp, STAGES steps' tiles in (dynamic) shared memory: STAGES (BM + BN) BK
// 2-byte values, up to 144 KB (configs.py lists the same and gives the launch its size).
V8(128, 128, 32, 64, 64, 3, 8) V8(128, 256, 32, 64, 64, 4, 8) V8(256, 128, 64, 64, 64, 3, 8)
V8(128, 128, 64, 64, 64, 3, 8) V8(128, 256, 64, 64, 64, 3, 8) V8(128, 128, 64, 64, 64, 4, 8)
V8(256, 128, 32, 64, 64, 4, 8) V8(128, 128, 32, 64, 64, 5, 8) V8(128, 128, 32, 64, 32, 3, 8)
V8(128, 64, 32, 64, 32, 4, 8) V8(64, 64, 32, 32, 32, 4, 8)
// --8<-- [end:configs]
