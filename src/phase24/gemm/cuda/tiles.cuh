// Staging tiles of A and B in shared memory one element at a time (v3, v4): the block's NT
// threads copy a ROWS x COLS tile of a row-major matrix, consecutive threads taking consecutive
// elements of a row (coalesced), converted to float32, with zeros past the matrix's edges (a
// partial tile then adds nothing for its missing part). v5 and v6 copy 16 bytes at a time
// instead (tiles16.cuh).
#pragma once
#include "elements.cuh"

// tile[i][j] = m[row0 + i][col0 + j] for the ROWS x COLS tile at (row0, col0) of a matrix of
// rows x cols elements, or 0 outside it.
template <typename T, int ROWS, int COLS, int NT>
__device__ __forceinline__ void stage_tile(float (&tile)[ROWS][COLS], const T* m, long long row0,
                                           long long col0, long long rows, long long cols) {
#pragma unroll
    for (int e = threadIdx.x; e < ROWS * COLS; e += NT) {
        const int i = e / COLS, j = e % COLS;
        tile[i][j] = load_or_zero(m, row0 + i, col0 + j, rows, cols);
    }
}
