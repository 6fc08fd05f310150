// Staging tiles of A and B in shared memory 16 bytes at a time (v5, v6), as float32. A's tile is
// stored transposed, as[k][m]: the inner loop then reads a thread's TM consecutive rows of one k
// as float4s, where the row-major tile would give TM loads of one word, BK words apart. B's tile
// keeps its layout, bs[k][n]. Each thread copies runs of V = Vec16<T>::size elements along a row
// of A (along K) or of B (along N), 16-byte loads where the matrix's rows are 16-byte aligned
// (`vec`), one element at a time otherwise and at the edges; zeros past the edges.
#pragma once
#include "vec16.cuh"

// as[k][i] = a[row0 + i][k0 + k] for the BM x BK tile at (row0, k0) of the M x K matrix a.
template <typename T, int BM, int BK, int NT>
__device__ __forceinline__ void stage_a_transposed(float (&as)[BK][BM], const T* a, long long row0,
                                                   int k0, int M, int K, bool vec) {
    constexpr int V = Vec16<T>::size, RUNS = BK / V;  // runs of V along a row of the tile
    static_assert(BK % V == 0, "BK must be a multiple of 16 bytes of T");
#pragma unroll
    for (int s = threadIdx.x; s < BM * RUNS; s += NT) {
        const int i = s / RUNS, k = (s % RUNS) * V;
        const long long row = row0 + i;
        float v[V];
        load_run16(a + row * K + k0 + k, row < M ? K - (k0 + k) : 0, vec, v);
#pragma unroll
        for (int j = 0; j < V; ++j) as[k + j][i] = v[j];
    }
}

// bs[k][j] = b[k0 + k][col0 + j] for the BK x BN tile at (k0, col0) of the K x N matrix b.
template <typename T, int BK, int BN, int NT>
__device__ __forceinline__ void stage_b(float (&bs)[BK][BN], const T* b, int k0, long long col0,
                                        int K, int N, bool vec) {
    constexpr int V = Vec16<T>::size, RUNS = BN / V;
    static_assert(BN % V == 0, "BN must be a multiple of 16 bytes of T");
#pragma unroll
    for (int s = threadIdx.x; s < BK * RUNS; s += NT) {
        const int k = s / RUNS, j = (s % RUNS) * V;
        const long long col = col0 + j;
        float v[V];
        load_run16(b + (long long)(k0 + k) * N + col, k0 + k < K ? (int)(N - col) : 0, vec, v);
#pragma unroll
        for (int q = 0; q < V; q += 4)
            *reinterpret_cast<float4*>(&bs[k][j + q]) = make_float4(v[q], v[q + 1], v[q + 2], v[q + 3]);
    }
}
