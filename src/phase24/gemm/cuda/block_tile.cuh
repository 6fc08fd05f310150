// Which tile of C a block computes: block i of the one-dimensional grid takes tile i in row-major
// order of tiles, so consecutive blocks share a row panel of A (and read it from L2, not DRAM).
// The grid may have up to 2^31 - 1 blocks; the first row and column of the tile are 64-bit
// numbers (rows x columns of C may pass 2^31).
#pragma once

struct BlockTile {
    long long row0;  // first row of C in this block's tile
    long long col0;  // first column
};

template <int BM, int BN>
__device__ __forceinline__ BlockTile block_tile(int N) {
    const long long tiles_n = (N + BN - 1) / BN;
    const long long i = blockIdx.x;
    return {(i / tiles_n) * BM, (i % tiles_n) * BN};
}
