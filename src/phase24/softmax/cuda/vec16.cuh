// The element types of the ladder and 16-byte accesses (every rung from v0 on; the 16-byte
// loads and stores from v3). to_float / from_float convert float, __half and __nv_bfloat16
// values; Vec16<T>::size is how many fit in 16 bytes (4 floats, 8 halves or bfloat16s); load16 and
// store16 move them as one access; rows_aligned16 says whether every row may take that path.
#pragma once
#include <math_constants.h>
#include <stdint.h>
#include <type_traits>

#include "../../core/cuda/elements.cuh"  // to_float, from_float, Vec16

// Load / store VEC consecutive elements as one 16-byte access (address must be 16-byte aligned).
template <typename T>
__device__ __forceinline__ void load16(const T* p, float (&out)[Vec16<T>::size]) {
    uint4 raw = *reinterpret_cast<const uint4*>(p);
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < Vec16<T>::size; ++i) out[i] = to_float(e[i]);
}

// Two floats -> two 16-bit values in one 32-bit word: one conversion instruction for both.
__device__ __forceinline__ uint32_t pack2(float a, float b, __half*) {
    __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t pack2(float a, float b, __nv_bfloat16*) {
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
}

template <typename T>
__device__ __forceinline__ void store16(T* p, const float (&in)[Vec16<T>::size]) {
    uint4 raw;
    if constexpr (sizeof(T) == 4) {
        raw = make_uint4(__float_as_uint(in[0]), __float_as_uint(in[1]), __float_as_uint(in[2]),
                         __float_as_uint(in[3]));
    } else {
        raw = make_uint4(pack2(in[0], in[1], (T*)nullptr), pack2(in[2], in[3], (T*)nullptr),
                         pack2(in[4], in[5], (T*)nullptr), pack2(in[6], in[7], (T*)nullptr));
    }
    *reinterpret_cast<uint4*>(p) = raw;
}

// True when row r of x and of y start on 16-byte boundaries for every r.
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T* x, const T* y, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    return ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16 == 0) &&
           (N % V == 0) && (x_stride % V == 0);
}
