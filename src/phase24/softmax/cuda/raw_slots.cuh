// Slots kept as the raw 16 bytes they were loaded as (v7 introduced them; v8-v10 use them too):
// a register holds two 16-bit values instead of one float, so an SM keeps as many bytes of a
// bfloat16 row on chip as of a float32 one; each pass (max, sum, output) converts again, one
// 32-bit word at a time.
#pragma once
#include <type_traits>

#include "fast_exp2.cuh"
#include "vec16.cuh"

// --8<-- [start:raw]
// Slots kept as they were loaded: 16 raw bytes, V values of T, converted to float where used.
// A register then holds two 16-bit values instead of one float, so an SM keeps twice as many
// bfloat16 values on chip; the price is converting (and exponentiating) twice.
template <typename T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return -CUDART_INF_F; }
template <> __device__ __forceinline__ __half neg_inf<__half>() { return __ushort_as_half(0xfc00); }
template <> __device__ __forceinline__ __nv_bfloat16 neg_inf<__nv_bfloat16>() {
    return __ushort_as_bfloat16(0xff80);
}

// A slot is four 32-bit words of W = 4 / sizeof(T) values each (1 float, or 2 halves or
// bfloat16s); the helpers below work one word at a time, so that only two floats exist at
// once besides the raw slots. The conversions are `asm volatile` on purpose: otherwise the
// compiler sees the same conversion in the max, the sum and the output passes, keeps the
// floats of the first pass alive for the others, and the registers saved are lost again.
template <typename T> constexpr int per_word = 4 / sizeof(T);

__device__ __forceinline__ uint32_t word(const uint4& r, int j) {
    return j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
}

// ALT picks a second, different instruction sequence for the same bfloat16 conversion: ptxas
// merges identical instructions on the same register however they were written, and would
// keep the first pass's floats alive for the second.
template <typename T, bool ALT = false>
__device__ __forceinline__ void unpack_word(uint32_t w, float (&out)[per_word<T>]) {
    if constexpr (sizeof(T) == 4) {
        out[0] = __uint_as_float(w);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16> && !ALT) {  // the top half of a float
        uint32_t a, b;
        asm volatile("shl.b32 %0, %1, 16;" : "=r"(a) : "r"(w));
        asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(b) : "r"(w));
        out[0] = __uint_as_float(a), out[1] = __uint_as_float(b);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        asm volatile("{.reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.bf16 %0, l;\n cvt.f32.bf16 %1, h;}"
                     : "=f"(out[0]), "=f"(out[1]) : "r"(w));
    } else {
        asm volatile("{.reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;}"
                     : "=f"(out[0]), "=f"(out[1]) : "r"(w));
    }
}

template <typename T>
__device__ __forceinline__ uint32_t pack_word(const float (&in)[per_word<T>]) {
    if constexpr (sizeof(T) == 4) return __float_as_uint(in[0]);
    else return pack2(in[0], in[1], (T*)nullptr);
}

__device__ __forceinline__ uint32_t bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ uint32_t bits(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint32_t bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
template <typename T> __device__ __forceinline__ T from_bits(uint32_t b);
template <> __device__ __forceinline__ float from_bits<float>(uint32_t b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ __half from_bits<__half>(uint32_t b) {
    return __ushort_as_half((unsigned short)b);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t b) {
    return __ushort_as_bfloat16((unsigned short)b);
}

// Like load_slots, into raw slots; columns at or past `end` hold -inf.
template <typename T, int K, int STRIDE>
__device__ __forceinline__ void load_raw(const T* row, int begin, int end, int t, bool vec,
                                         uint4 (&r)[K]) {
    constexpr int V = Vec16<T>::size;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        if (vec && col < end) {
            r[k] = *reinterpret_cast<const uint4*>(row + col);
        } else {  // element by element, packed with shifts (no address taken: r stays in registers)
            uint32_t b[V];
#pragma unroll
            for (int i = 0; i < V; ++i) b[i] = bits(col + i < end ? row[col + i] : neg_inf<T>());
            if constexpr (V == 4) r[k] = make_uint4(b[0], b[1], b[2], b[3]);
            else r[k] = make_uint4(b[0] | b[1] << 16, b[2] | b[3] << 16, b[4] | b[5] << 16, b[6] | b[7] << 16);
        }
    }
}

// f(x) for each held value x, converted to float one word at a time.
template <typename T, int K, typename F>
__device__ __forceinline__ void each_value(const uint4 (&r)[K], F f) {
    float x[per_word<T>];
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unpack_word<T>(word(r[k], j), x);
#pragma unroll
            for (int i = 0; i < per_word<T>; ++i) f(x[i]);
        }
}

// The largest held value.
template <typename T, int K>
__device__ __forceinline__ float raw_max(const uint4 (&r)[K]) {
    if constexpr (sizeof(T) == 2) {  // two at a time, no conversion (NaN is ignored, as fmaxf)
        using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
        T2 m2 = {neg_inf<T>(), neg_inf<T>()};
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                uint32_t w = word(r[k], j);
                m2 = __hmax2(m2, *reinterpret_cast<T2*>(&w));
            }
        return fmaxf(to_float(m2.x), to_float(m2.y));
    }
    float m = -CUDART_INF_F;
    each_value<T>(r, [&](float x) { m = fmaxf(m, x); });
    return m;
}

// sum(exp(x - m)) over the held values, the offset 0 when m = -inf (as exp_sum_in_place).
template <typename T, int K>
__device__ __forceinline__ float raw_exp_sum(const uint4 (&r)[K], float m) {
    const float off = m == -CUDART_INF_F ? 0.f : m;
    float s = 0.f;
    each_value<T>(r, [&](float x) { s += fast_exp2((x - off) * LOG2E); });
    return s;
}

// Write exp(x - m) * f for the held values (the same columns load_raw read).
template <typename T, int K, int STRIDE>
__device__ __forceinline__ void store_raw(T* row, int begin, int end, int t, bool vec,
                                          const uint4 (&r)[K], float m, float f) {
    constexpr int V = Vec16<T>::size, W = per_word<T>;
    const float off = m == -CUDART_INF_F ? 0.f : m;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        uint32_t o[4];
        float x[W];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unpack_word<T, true>(word(r[k], j), x);
#pragma unroll
            for (int i = 0; i < W; ++i) x[i] = fast_exp2((x[i] - off) * LOG2E) * f;
            o[j] = pack_word<T>(x);
        }
        if (vec) {
            if (col < end) *reinterpret_cast<uint4*>(row + col) = make_uint4(o[0], o[1], o[2], o[3]);
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i) {
                uint32_t b = o[i / W] >> (32 / W) * (i % W);
                if (col + i < end) row[col + i] = from_bits<T>(b);
            }
        }
    }
}
// --8<-- [end:raw]
