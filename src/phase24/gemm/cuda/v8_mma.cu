// v8 (cuda-v8): the Tensor Cores, as Ampere and Ada have them: each warp multiplies 16 x 16
// tiles of A by 16 x 8 tiles of B with one mma.sync instruction, its operands read from shared
// memory by ldmatrix, the tiles copied from global memory by cp.async in STAGES stages (dynamic
// shared memory, up to 144 KB), stored in a swizzled layout that no ldmatrix reads with a bank
// conflict. float16 and bfloat16 only.
//
// Changed from v7: (1) the products: an FFMA computes one product a thread; an m16n8k16 mma.sync
// computes 16 x 8 x 16 = 2048 of them a warp, in float32 (by the datasheet, the H200's Tensor Cores
// run bfloat16 at about 15 times its FFMA rate); (2) the copies: cp.async moves 16 bytes from
// global to shared memory with no register on the way and without waiting, so STAGES - 1 tiles are
// in flight while the warps compute on one; (3) the layout: a row of A's tile is 64 or 128 bytes,
// of B's 128 to 512, so the 8 rows ldmatrix reads at once would share banks; the 16-byte chunk c of
// row r is stored at c ^ f(r) instead, which spreads any 8 consecutive rows over all 32 banks; (4)
// the schedule: a warp issues an mma.sync every few cycles at best, and the slots between them are
// free; the copies (an address, a bound check, the cp.async) are placed there, a few after each
// group of mma.sync's, and the barrier comes before the step's last 16 of K, so that the next
// step's first fragments load while those multiply.
// Every size and alignment is taken: the launcher copies operands whose rows are not a multiple
// of 16 bytes (K or N not a multiple of 8) into padded ones, and partial tiles read zeros.
// Prediction: at 4096^3 in bfloat16 several times v7 and at least half of cuBLAS (whose Hopper
// kernels use wgmma); the profile shows the tensor pipe busy most of the time.
// Limit: mma.sync is Ampere's instruction; on Hopper it reaches only part of the Tensor Cores'
// rate, which only wgmma reaches in full (results/h200/gemm/profiles/ has v8's profile beside
// cuBLAS's: how busy each keeps the tensor pipe), and each warp's operands pass through its
// registers (ldmatrix); wgmma (the next rungs) reads them from shared memory, a
// warpgroup at a time.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "../../core/cuda/shared_address.cuh"
#include "block_tile.cuh"
#include "export.cuh"
#include "vec16.cuh"

// 16 bytes from global to shared memory, asynchronously; zeros where `full` is false.
__device__ __forceinline__ void copy16(uint32_t dst, const void* src, bool full) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(full ? 16 : 0));
}

// Four 8 x 8 matrices of 16-bit values from shared memory (lane l gives the address of row l % 8
// of matrix l / 8); .trans loads each transposed.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(p));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(p));
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
// f repeats every 8 rows.
template <int CH>
__device__ __forceinline__ int swizzled(int r, int c) {
    constexpr int W = CH < 8 ? CH : 8;
    return c ^ ((r / (8 / W)) % W);
}

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP>
__device__ void mma_gemm(const T* a, const T* b, T* c, int M, int N, int K) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32, CA = BK / 8, CB = BN / 8;  // chunks a row
    constexpr int FM = WM / 16, FN = WN / 8, KS = BK / 16;  // a warp's mma tiles; 16s of K a step
    constexpr int RA = NT / CA, RB = NT / CB;               // rows between a thread's chunks
    constexpr int LA = BM / RA, LB = BK / RB, COPIES = LA + LB;  // a thread's chunks a step
    constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;  // one stage of each tile
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 32 == 0 && BN % 64 == 0,
                  "whole mma and ldmatrix tiles, rows of at least 64 bytes");
    static_assert(NT % CA == 0 && NT % CB == 0 && RA % 8 == 0 && RB % 8 == 0 && BM % RA == 0 &&
                      BK % RB == 0, "a thread copies one chunk column, in rows 8k apart");
    extern __shared__ __align__(128) unsigned char smem[];  // STAGES tiles of A, then of B
    const uint32_t as = shared_address(smem), bs = as + STAGES * A_BYTES;
    const BlockTile tile = grouped_tile<BM, BN, GROUP>(M, N);  // v7's order
    const long long row0 = tile.row0, col0 = tile.col0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int steps = (K + BK - 1) / BK;

    // The copies. A thread copies chunk column ca of rows ra, ra + RA, ... of A's tile and chunk
    // column cb of rows rb, rb + RB, ... of B's; f repeats every 8 rows, so the shared address of
    // chunk i is the first one's plus i rows. A step's copies are begun by `copies_of` and issued
    // one by one by `copy`, between the mma.sync's, so that their address arithmetic fills the
    // issue slots the Tensor Cores leave free.
    const int ca = threadIdx.x % CA, ra = threadIdx.x / CA;
    const int cb = threadIdx.x % CB, rb = threadIdx.x / CB;
    const uint32_t to_a = as + (ra * BK + swizzled<CA>(ra, ca) * 8) * 2;
    const uint32_t to_b = bs + (rb * BN + swizzled<CB>(rb, cb) * 8) * 2;
    const T* from_a = a + (row0 + ra) * K + ca * 8;       // chunk 0 at step 0
    const T* from_b = b + (long long)rb * N + col0 + cb * 8;
    unsigned a_rows = 0;  // bit i: A's chunk i is in a row of A
#pragma unroll
    for (int i = 0; i < LA; ++i) a_rows |= unsigned(row0 + ra + i * RA < M) << i;
    const bool b_col = col0 + cb * 8 < N;
    const T *pa, *pb;             // the next chunk's source
    uint32_t sa, sb, in_a, in_b;  // chunk 0's place in the stage; bit i: chunk i is in the matrix
    auto copies_of = [&](int step, int stage) {  // (zeros where a chunk is off the matrix)
        const long long k0 = (long long)step * BK, rows_b = K - k0 - rb;  // B's rows from rb on
        pa = from_a + k0, pb = from_b + k0 * N;
        sa = to_a + stage * A_BYTES, sb = to_b + stage * B_BYTES;
        in_a = k0 + ca * 8 < K ? a_rows : 0;
        const long long nb = rows_b <= 0 ? 0 : (rows_b + RB - 1) / RB;  // B's chunks above K
        in_b = !b_col ? 0 : nb >= LB ? (1u << LB) - 1 : (1u << nb) - 1;
    };
    auto copy = [&](int q) {  // chunk q of a step: A's 0 .. LA - 1, then B's
        if (q < LA) {
            const bool in = in_a >> q & 1;
            copy16(sa + q * RA * BK * 2, in ? pa : a, in);
            pa += (long long)RA * K;
        } else {
            const bool in = in_b >> (q - LA) & 1;
            copy16(sb + (q - LA) * RB * BN * 2, in ? pb : b, in);
            pb += (long long)RB * N;
        }
    };

    // The fragments. Rows 16 apart have the same f, so a lane's ldmatrix address is one of KS
    // offsets (A: which 16 of K) plus the tile's rows, or of FN / 2 (B: which columns) plus K's.
    uint32_t lane_a[KS], lane_b[FN / 2];
#pragma unroll
    for (int s = 0; s < KS; ++s) {  // lanes 0-15 rows at kk = 16 s, lanes 16-31 at kk + 8
        const int chunk = swizzled<CA>(lane % 16, 2 * s + lane / 16);
        lane_a[s] = ((wm0 + lane % 16) * BK + chunk * 8) * 2;
    }
#pragma unroll
    for (int j = 0; j < FN; j += 2) {  // two 8-column tiles a transposed load
        const int chunk = swizzled<CB>(lane % 16, (wn0 + j * 8) / 8 + lane / 16);
        lane_b[j / 2] = ((lane % 16) * BN + chunk * 8) * 2;
    }
    auto fragments = [&](uint32_t (&fa)[FM][4], uint32_t (&fb)[FN][2], int stage, int s) {
#pragma unroll
        for (int i = 0; i < FM; ++i)
            ldmatrix_x4(fa[i], as + stage * A_BYTES + lane_a[s] + i * 16 * BK * 2);
#pragma unroll
        for (int j = 0; j < FN; j += 2) {
            uint32_t t[4];
            ldmatrix_x4_trans(t, bs + stage * B_BYTES + lane_b[j / 2] + s * 16 * BN * 2);
            fb[j][0] = t[0], fb[j][1] = t[1], fb[j + 1][0] = t[2], fb[j + 1][1] = t[3];
        }
    };

    // Step t reads stage t % STAGES. Over its first KS - 1 sixteens of K it copies step
    // t + STAGES - 1 into the stage step t - 1 read, which every warp has left: each read it
    // before step t - 1's barrier. Before the last sixteen the copies are committed, and the wait
    // and the barrier let step t + 1's tiles in; its first fragments load while the last multiply.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        copies_of(s, s);
#pragma unroll
        for (int q = 0; q < COPIES; ++q) copy(q);
        asm volatile("cp.async.commit_group;\n");
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();
    float acc[FM][FN][4] = {};
    uint32_t fa[2][FM][4], fb[2][FN][2];  // two sets: the next 16 of K load while these multiply
    fragments(fa[0], fb[0], 0, 0);
    int read = 0;  // the stage step t reads; it fills the one before (the stage step t - 1 read)
    for (int step = 0; step < steps; ++step) {
        copies_of(step + STAGES - 1, read == 0 ? STAGES - 1 : read - 1);
#pragma unroll
        for (int s = 0; s < KS; ++s) {
            if (s < KS - 1) {
                fragments(fa[(s + 1) % 2], fb[(s + 1) % 2], read, s + 1);
            } else {
                asm volatile("cp.async.commit_group;\n");
                asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
                __syncthreads();
                read = read == STAGES - 1 ? 0 : read + 1;
                if (step + 1 < steps) fragments(fa[0], fb[0], read, 0);
            }
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) {
                    mma16816<T>(acc[i][j], fa[s % 2][i], fb[s % 2][j][0], fb[s % 2][j][1]);
                    const int slot = (s * FM + i) * FN + j, slots = (KS - 1) * FM * FN;
                    if (s < KS - 1)  // copies slot * COPIES / slots up to the next slot's
#pragma unroll
                        for (int q = slot * COPIES / slots; q < (slot + 1) * COPIES / slots; ++q)
                            copy(q);
                }
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
// 2-byte values, up to 144 KB (rung.py reads these lines and gives the launch its size).
V8(128, 128, 32, 64, 64, 3, 8) V8(128, 256, 32, 64, 64, 4, 8) V8(256, 128, 64, 64, 64, 3, 8)
V8(128, 128, 64, 64, 64, 3, 8) V8(128, 256, 64, 64, 64, 3, 8) V8(128, 128, 64, 64, 64, 4, 8)
V8(256, 128, 32, 64, 64, 4, 8) V8(128, 128, 32, 64, 64, 5, 8) V8(128, 128, 32, 64, 32, 3, 8)
V8(128, 64, 32, 64, 32, 4, 8) V8(64, 64, 32, 32, 32, 4, 8)
// --8<-- [end:configs]
