// Where wgmma finds its operands in shared memory (v9): the 128-byte-swizzled layout the copies
// write, the 64-bit matrix descriptors that tell wgmma.mma_async how that layout lies, and where
// its float32 accumulator puts each element of C. Host and device code alike:
// tests/gemm_sw128_check.cu checks this file on the CPU against the PTX ISA's formulas.
//
// The layout. Every row is 128 bytes: 64 16-bit values, eight 16-byte chunks. A's tile is BM rows
// of 64 values of K (K-major: K runs along a row); B's tile is BN / 64 panels, each BK rows of K
// by 64 columns of N (MN-major: N runs along a row; B is row-major K x N, so a panel row is 128
// contiguous bytes of one row of B). Chunk c of row r is stored at chunk c ^ (r % 8): the PTX
// ISA's 128-byte swizzle, which XORs bits 4-6 of the shared address with bits 7-9 (CUTLASS writes
// it Swizzle<3,4,3>). The hardware applies it to the address, so it agrees with c ^ (r % 8) only
// where a tile starts on a 1024-byte boundary (8 rows: one repeat of the pattern).
//
// The descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the start address >> 4, 16-29
// the leading dimension byte offset >> 4, 32-45 the stride dimension byte offset >> 4, 49-51 the
// base offset (0: each pattern starts on a 1024-byte boundary), 62-63 the swizzle mode (1: 128 B).
// The canonical 128-byte-swizzled layouts it describes, in 16-byte units T (CUTLASS's notation):
//   K-major:  ((8, m), (T, 2)) : ((8T, SBO), (1, T))        LBO unused
//   MN-major: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
// i.e. for A, rows 8 apart are SBO bytes apart; for B, columns 64 apart are LBO bytes apart (the
// next panel) and rows of K 8 apart are SBO bytes apart.
#pragma once
#include <stdint.h>

#ifdef __CUDACC__
#define SW128_FN __host__ __device__ __forceinline__ constexpr
#else
#define SW128_FN inline constexpr
#endif

namespace sw128 {

constexpr uint32_t ROW = 128;       // bytes in a row of the layout
constexpr uint32_t ATOM = 8 * ROW;  // one repeat of the swizzle: 8 rows, 1024 bytes

// Offset of 16-byte chunk `chunk` (0-7) of row `row`, from a 1024-byte-aligned tile start.
SW128_FN uint32_t chunk_at(uint32_t row, uint32_t chunk) {
    return row * ROW + ((chunk ^ (row % 8)) * 16);
}

// Offset of chunk `chunk` (0 .. BN / 8 - 1) of row `row` of K in B's tile of panels of `rows`
// rows each: chunk c lies in panel c / 8.
SW128_FN uint32_t panel_chunk_at(uint32_t row, uint32_t chunk, uint32_t rows) {
    return (chunk / 8) * rows * ROW + chunk_at(row, chunk % 8);
}

// The descriptor of an operand starting at shared address `start` (128-byte swizzle, base offset
// 0). The fields keep 14 bits of each value >> 4: addresses below 256 KB, offsets multiples of 16.
SW128_FN uint64_t descriptor(uint32_t start, uint32_t lbo, uint32_t sbo) {
    return uint64_t((start & 0x3FFFF) >> 4) | uint64_t((lbo >> 4) & 0x3FFF) << 16 |
           uint64_t((sbo >> 4) & 0x3FFF) << 32 | uint64_t(1) << 62;
}

// A's 64 x 16 operand of one wgmma: rows m0 .. m0 + 63 (m0 a multiple of 64), values k0 .. k0 + 15
// (k0 a multiple of 16: 32 bytes into the rows; the start stays inside the first 128 bytes of its
// 1024, so the base offset stays 0). Rows 8 apart: one ATOM (SBO); LBO is unused by this layout
// (16 bytes, as "assumed 1").
SW128_FN uint64_t a_desc(uint32_t tile, uint32_t m0, uint32_t k0) {
    return descriptor(tile + m0 * ROW + k0 * 2, 16, ATOM);
}

// B's 16 x N operand of one wgmma: rows k0 .. k0 + 15 of every panel (k0 a multiple of 16: the
// start is 2 KB-aligned). The next 64 columns: the next panel, rows * ROW bytes on (LBO); the
// next 8 rows of K: one ATOM on (SBO).
SW128_FN uint64_t b_desc(uint32_t tile, uint32_t k0, uint32_t rows) {
    return descriptor(tile + k0 * ROW, rows * ROW, ATOM);
}

// The m64nN float32 accumulator (PTX ISA, wgmma's fragment of D): value i of thread t (0-127) of
// the warpgroup is row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4)
// + i % 2 of the warpgroup's 64 x N tile: each warp has 16 rows, as mma.sync's m16n8 tiles side
// by side.
SW128_FN uint32_t acc_row(uint32_t t, uint32_t i) {
    return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i / 2) % 2);
}
SW128_FN uint32_t acc_col(uint32_t t, uint32_t i) { return (i / 4) * 8 + (t % 4) * 2 + i % 2; }

}  // namespace sw128
