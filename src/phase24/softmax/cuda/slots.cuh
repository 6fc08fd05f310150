// A row's slots held in registers (v3 introduced them): each thread of a group loads K slots of
// 16 bytes, keeps them as floats while the row is reduced, and writes them back; held_max and
// exp_sum_in_place are what a thread does with the values it holds.
#pragma once
#include "fast_exp2.cuh"
#include "vec16.cuh"

// Part of a row held in registers: thread t of a group of STRIDE threads holds K slots of
// V = 16 / sizeof(T) consecutive elements; slot k starts at column begin + (k * STRIDE + t) * V,
// so on each k the group reads one contiguous, coalesced stretch. Columns at or past `end`
// read as -inf (they add nothing to the max or the sum) and are never written back.
// `vec` says rows are 16-byte aligned (then one 16-byte load per slot; `end` is a multiple
// of V); otherwise every element is loaded on its own.
template <typename T, int K, int STRIDE>
__device__ __forceinline__ void load_slots(const T* row, int begin, int end, int t, bool vec,
                                           float (&v)[K][Vec16<T>::size]) {
    constexpr int V = Vec16<T>::size;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        if (vec) {
            if (col < end) load16(row + col, v[k]);
            else
#pragma unroll
                for (int i = 0; i < V; ++i) v[k][i] = -CUDART_INF_F;
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i) v[k][i] = col + i < end ? to_float(row[col + i]) : -CUDART_INF_F;
        }
    }
}

template <typename T, int K, int STRIDE>
__device__ __forceinline__ void store_slots(T* row, int begin, int end, int t, bool vec,
                                            const float (&v)[K][Vec16<T>::size]) {
    constexpr int V = Vec16<T>::size;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        if (vec) {
            if (col < end) store16(row + col, v[k]);
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i)
                if (col + i < end) row[col + i] = from_float<T>(v[k][i]);
        }
    }
}

// Multiply every held value by f.
template <int K, int V>
__device__ __forceinline__ void scale(float (&v)[K][V], float f) {
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < V; ++i) v[k][i] *= f;
}

// --8<-- [start:held]
// What a thread does with the values it holds: their maximum; exp(x - m) in place, and the sum.
template <int K, int V>
__device__ __forceinline__ float held_max(const float (&v)[K][V]) {
    float m = -CUDART_INF_F;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < V; ++i) m = fmaxf(m, v[k][i]);
    return m;
}

// Replace each held value by exp(x - m) and return their sum. With m = -inf (nothing but
// -inf held) the offset is 0, so the values become exp(-inf) = 0 rather than NaN.
template <int K, int V>
__device__ __forceinline__ float exp_sum_in_place(float (&v)[K][V], float m) {
    const float off = m == -CUDART_INF_F ? 0.f : m;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < V; ++i) {
            v[k][i] = fast_exp2((v[k][i] - off) * LOG2E);
            s += v[k][i];
        }
    return s;
}
// --8<-- [end:held]
