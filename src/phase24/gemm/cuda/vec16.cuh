// 16-byte global memory accesses (v5, v6): a run of Vec16<T>::size elements (4 floats, 8 halves
// or bfloat16s) read as one load, and a thread's run of outputs written with the widest stores its
// alignment allows. Each access is taken only where the caller says the addresses are aligned
// (`vec`) and the whole run lies inside the matrix (`valid` elements are left in its row); else
// the run is read or written one element at a time, within `valid`: the edges of a tile, and
// matrices whose rows are not a multiple of 16 bytes, stay correct.
#pragma once
#include <stdint.h>
#include "elements.cuh"

__device__ __forceinline__ bool aligned16(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Every row of a row-major matrix with `cols` columns at `m` starts on a 16-byte boundary.
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T* m, int cols) {
    return aligned16(m) && cols % Vec16<T>::size == 0;
}

// out[j] = p[j] for j < V (as float), zeros from `valid` on.
template <typename T>
__device__ __forceinline__ void load_run16(const T* p, int valid, bool vec,
                                           float (&out)[Vec16<T>::size]) {
    constexpr int V = Vec16<T>::size;
    if (vec && valid >= V) {
        const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
        const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = to_float(e[j]);
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = j < valid ? to_float(p[j]) : 0.0f;
    }
}

// Two values rounded to T, in one 32-bit word (two floats take a word each).
__device__ __forceinline__ uint32_t pack2(float x, float y, __half*) {
    __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t pack2(float x, float y, __nv_bfloat16*) {
    __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
}

// p[j] = in[j] rounded to T for j < L: accesses of 16 bytes (8 where the run is only 8 bytes) when
// `vec` and the whole run is in the row (`valid` >= L), else one element at a time below `valid`.
// With `vec`, p must be aligned to the access: L * sizeof(T) divides the run's offset in its row.
template <typename T, int L>
__device__ __forceinline__ void store_run(T* p, int valid, bool vec, const float* in) {
    constexpr int BYTES = L * sizeof(T);
    static_assert(BYTES % 8 == 0, "a run must fill whole 8-byte accesses");
    if (vec && valid >= L) {
        uint32_t w[BYTES / 4];
#pragma unroll
        for (int i = 0; i < BYTES / 4; ++i) {
            if constexpr (sizeof(T) == 4) w[i] = __float_as_uint(in[i]);
            else w[i] = pack2(in[2 * i], in[2 * i + 1], (T*)nullptr);
        }
        if constexpr (BYTES == 8) {
            *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
        } else {
#pragma unroll
            for (int i = 0; i < BYTES / 16; ++i)
                reinterpret_cast<uint4*>(p)[i] = make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2],
                                                            w[4 * i + 3]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < L; ++j)
            if (j < valid) p[j] = from_float<T>(in[j]);
    }
}
