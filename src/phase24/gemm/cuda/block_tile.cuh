// Which tile of C a block computes: block i of the one-dimensional grid takes tile i in row-major
// order of tiles, so consecutive blocks share a row panel of A (and read it from L2, not DRAM);
// from v7 on, in the grouped order, so that the blocks running at once share panels of A and B.
// The grid may have up to 2^31 - 1 blocks; the first row and column of the tile are 64-bit
// numbers (rows x columns of C may pass 2^31), and so is every count of tiles (M + BM - 1 may
// pass 2^31 when M is close to it).
#pragma once

struct BlockTile {
    long long row0;  // first row of C in this block's tile
    long long col0;  // first column
};

template <int BM, int BN>
__device__ __forceinline__ BlockTile block_tile(int N) {
    const long long tiles_n = (N + BN - 1LL) / BN;
    const long long i = blockIdx.x;
    return {(i / tiles_n) * BM, (i % tiles_n) * BN};
}

// Tile i in the grouped order (v7 on): GROUP rows of tiles, walked column by column within the
// group (the last group may have fewer rows).
template <int BM, int BN, int GROUP>
__device__ __forceinline__ BlockTile grouped_tile_at(long long i, int M, int N) {
    const long long tiles_m = (M + BM - 1LL) / BM, tiles_n = (N + BN - 1LL) / BN;
    const long long per_group = GROUP * tiles_n;
    const long long first = (i / per_group) * GROUP;
    const long long rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
    return {(first + (i % per_group) % rows) * BM, ((i % per_group) / rows) * BN};
}

// Block blockIdx.x's tile in the grouped order: one tile a block (v7 to v10).
template <int BM, int BN, int GROUP>
__device__ __forceinline__ BlockTile grouped_tile(int M, int N) {
    return grouped_tile_at<BM, BN, GROUP>(blockIdx.x, M, N);
}
