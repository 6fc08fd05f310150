// Shared by every softmax kernel of the ladder: element types, 16-byte vectors, reductions.
//
// The kernel ABI of the lab (the checker, the benchmark and a learner's own file use it too):
//   extern "C" __global__ void softmax_<dtype>(const T* x, T* y, long long M, int N,
//                                             long long x_stride);
// x: M rows of N elements, row r starting at x + r * x_stride (any stride >= N, any alignment);
// y: M rows of N elements, contiguous. dtype: f32 (float), f16 (__half), bf16 (__nv_bfloat16).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <stdint.h>
#include <type_traits>

#define LOG2E 1.4426950408889634f

// 2^x with the special-function unit's single instruction (MUFU.EX2; relative error ~2^-22,
// results below 2^-126 flushed to 0). exp2f() without --use_fast_math wraps the same
// instruction in extra instructions for subnormal results, which costs issue slots that
// bf16 rows (8 values per 16-byte load) cannot spare.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// Elements of T in one 16-byte access: 4 floats, 8 halves or bfloat16s.
template <typename T> struct Vec16 { static constexpr int size = 16 / sizeof(T); };

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

__device__ __forceinline__ float warp_max(float v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// The max / the sum of one value per thread over a block of THREADS threads, in every thread:
// shuffles within each warp, each warp posts its result, one barrier, then every warp reduces
// the posts itself (no second barrier to broadcast a result). There is no barrier at the end:
// block_max and block_sum post to arrays of their own, so calls that alternate between the two
// (v2, v3) are safe; two calls of the same one need a __syncthreads() between them.
template <int THREADS, bool MAX>
__device__ __forceinline__ float block_reduce(float v) {
    constexpr int WARPS = THREADS / 32;
    __shared__ float post[WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) post[warp] = v;
    __syncthreads();
    v = lane < WARPS ? post[lane] : MAX ? -CUDART_INF_F : 0.f;
    return MAX ? warp_max(v) : warp_sum(v);
}
template <int THREADS> __device__ __forceinline__ float block_max(float v) { return block_reduce<THREADS, true>(v); }
template <int THREADS> __device__ __forceinline__ float block_sum(float v) { return block_reduce<THREADS, false>(v); }

// --8<-- [start:compensated]
// A float sum that also keeps what each addition rounds away (Neumaier's form of Kahan's
// compensated sum): s + c stays within a few roundings of the exact sum however many terms are
// added. A plain running sum of n terms drifts by up to n roundings, and mostly downwards once
// the terms are small next to the sum, so its error grows with n. For the rungs whose threads
// add many terms in order: v0 (N terms), v1 and v2 (N / 256).
struct CompensatedSum {
    float s = 0.f, c = 0.f;
    __device__ __forceinline__ void add(float v) {
        const float t = s + v;
        c += fabsf(s) >= fabsf(v) ? (s - t) + v : (v - t) + s;  // exactly what t lost
        s = t;
    }
    __device__ __forceinline__ void scale(float w) { s *= w, c *= w; }
    __device__ __forceinline__ float value() const { return s + c; }
};
// --8<-- [end:compensated]

// A partial softmax over part of a row: its maximum m and s = sum(exp(x - m)).
// Two partials merge into the partial of their union; -inf parts (nothing seen yet, or
// all -inf) contribute nothing, so a row of -inf ends with m = -inf, s = 0 and gives NaN,
// like torch. fmaxf ignores NaN, but a NaN element makes s NaN, which spreads to the row.
struct MaxSum {
    float m, s;
};

// exp(m_part - m): how much a sum taken against m_part weighs against m. An empty part
// (m_part = -inf) weighs 0, but a NaN in its sum still spreads (NaN * 0 = NaN).
__device__ __forceinline__ float weight(float m_part, float m) {
    return m_part == -CUDART_INF_F ? 0.f : fast_exp2((m_part - m) * LOG2E);
}

__device__ __forceinline__ float scaled_sum(float m_part, float s_part, float m) {
    return s_part * weight(m_part, m);
}

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    float m = fmaxf(a.m, b.m);
    return {m, scaled_sum(a.m, a.s, m) + scaled_sum(b.m, b.s, m)};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v, int width = 32) {
    for (int off = width / 2; off > 0; off /= 2) {
        MaxSum o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)};
        v = merge(v, o);
    }
    return v;
}

// X(args..., tag, T) for each element type: the instances a rung compiles (v7, v9, v10).
#define FOR_EACH_DTYPE(X, ...) \
    X(__VA_ARGS__, f32, float) X(__VA_ARGS__, f16, __half) X(__VA_ARGS__, bf16, __nv_bfloat16)

// One kernel per dtype with C linkage, so Python finds it by a plain name: softmax_<tag>_<dtype>.
#define SOFTMAX_EXPORT(tag, body_template)                                                        \
    extern "C" __global__ void softmax_##tag##_f32(const float* x, float* y, long long M, int N,   \
                                                   long long s) { body_template<float>(x, y, M, N, s); } \
    extern "C" __global__ void softmax_##tag##_f16(const __half* x, __half* y, long long M, int N, \
                                                   long long s) { body_template<__half>(x, y, M, N, s); } \
    extern "C" __global__ void softmax_##tag##_bf16(const __nv_bfloat16* x, __nv_bfloat16* y,      \
                                                    long long M, int N, long long s) {             \
        body_template<__nv_bfloat16>(x, y, M, N, s);                                               \
    }

// The same, for kernels templated on a configuration as well: softmax_<tag>_<dtype> runs
// body_template<T, config...>, with __launch_bounds__(max_threads, 1) so ptxas keeps the
// registers of a block of max_threads threads within what one SM has.
#define SOFTMAX_EXPORT_CFG(tag, max_threads, body_template, ...)                                  \
    extern "C" __global__ void __launch_bounds__(max_threads, 1)                                     \
        softmax_##tag##_f32(const float* x, float* y, long long M, int N, long long s) {          \
        body_template<float, __VA_ARGS__>(x, y, M, N, s);                                          \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(max_threads, 1)                                     \
        softmax_##tag##_f16(const __half* x, __half* y, long long M, int N, long long s) {        \
        body_template<__half, __VA_ARGS__>(x, y, M, N, s);                                         \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(max_threads, 1) softmax_##tag##_bf16(               \
        const __nv_bfloat16* x, __nv_bfloat16* y, long long M, int N, long long s) {               \
        body_template<__nv_bfloat16, __VA_ARGS__>(x, y, M, N, s);                                  \
    }

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

// --8<-- [start:group_merge]
// Merge the {max, sum} partials of the GROUP threads that share a row. Groups of up to 32
// lanes are adjacent lanes of one warp: shuffles alone. Larger groups are the whole block:
// each warp posts its partial, one barrier, then every warp merges all the posts itself (no
// second barrier to broadcast a result). The posts alternate between two buffers from one
// call to the next, so the next row's posts cannot overwrite ones still being read.
template <int GROUP>
__device__ __forceinline__ MaxSum group_merge(MaxSum v, int parity = 0) {
    if constexpr (GROUP <= 32) {
        return warp_merge(v, GROUP);
    } else {
        constexpr int WARPS = GROUP / 32;
        __shared__ MaxSum post[2][WARPS];
        int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        v = warp_merge(v);
        if (lane == 0) post[parity][warp] = v;
        __syncthreads();
        v = lane < WARPS ? post[parity][lane] : MaxSum{-CUDART_INF_F, 0.f};
        return warp_merge(v);  // all 32 lanes, so every lane holds the total
    }
}
// --8<-- [end:group_merge]

// --8<-- [start:lean]
// The lean reductions of v6 and v7: a max first, then exponentials against it, then a sum.
// Each step is 5 shuffles and 5 single-instruction merges per warp, where merging {max, sum}
// pairs costs two exponentials per step.
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


// The {max, sum} of the partials the 32 lanes of a warp hold (empty lanes: {-inf, 0}), in
// every lane: the max with shuffles, then each sum weighted by exp(m_part - max), then a sum.
__device__ __forceinline__ MaxSum warp_merge_lean(MaxSum p) {
    const float m = warp_max(p.m);
    return {m, warp_sum(scaled_sum(p.m, p.s, m))};
}

// The {max, sum} of a whole block from each warp's {max, sum}: each warp posts its pair, one
// barrier, then every warp reduces the WARPS posts itself (a max, then a weighted sum), so all
// threads hold the total without a second barrier. The posts alternate between two buffers
// from one call to the next (parity), so the next row's posts cannot overwrite unread ones.
template <int WARPS>
__device__ __forceinline__ MaxSum block_merge(MaxSum w, int parity = 0) {
    __shared__ MaxSum post[2][WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) post[parity][warp] = w;
    __syncthreads();
    return warp_merge_lean(lane < WARPS ? post[parity][lane] : MaxSum{-CUDART_INF_F, 0.f});
}
// --8<-- [end:lean]

// v4 and v5: replace each held value by exp(x - m) for the thread's own maximum m, and return
// {m, sum}. A thread may hold nothing but -inf and NaN (fmaxf skips NaN, so m = -inf): the
// offset is then 0, the -inf become 0 and the NaN stays NaN, so the row's sum, and with it the
// whole row, is NaN, as in torch.
template <int K, int V>
__device__ __forceinline__ MaxSum exp_in_place(float (&v)[K][V]) {
    const float m = held_max(v);
    return {m, exp_sum_in_place(v, m)};
}

// Multiply the held exp(x - m_own) by exp(m_own - M) / S: the softmax of the whole row (v4, v5).
template <int K, int V>
__device__ __forceinline__ void rescale(float (&v)[K][V], float m_own, MaxSum row) {
    scale(v, fast_exp2((m_own - row.m) * LOG2E) / row.s);
}

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

// The 32-bit shared-memory address of p, as PTX instructions on shared memory take it.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --8<-- [start:async]
// Slots copied into shared memory by cp.async (sm_80+): global to shared without passing
// through registers, so a block can hold more of a row than its registers can (v8, v9, v10).
__device__ __forceinline__ void cp_async16(uint4* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst)), "l"(src)
                 : "memory");
}

// Wait for this thread's own copies; a thread that reads only the slots it copied itself needs
// no barrier after this.
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// Read back a slot copied there. `asm volatile`: each pass over the slots reads shared memory
// again, instead of the compiler keeping the first pass's values alive in registers.
__device__ __forceinline__ uint4 shared_slot(const uint4* p) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(shared_address(p)) : "memory");
    return v;
}

// One slot element by element (rows not 16-byte aligned); out of line, so that the rare path
// does not cost the common one registers.
template <typename T, int THREADS>
__device__ __noinline__ void copy_slot(uint4* dst, const T* row, int first, int end) {
    uint4 e[1];
    load_raw<T, 1, THREADS>(row, first, end, threadIdx.x, false, e);
    *dst = e[0];
}

// Start copying this thread's K slots of `row` (columns begin..end, laid out as load_raw's)
// into buf[k * THREADS + t]; rows that are not 16-byte aligned are copied element by element
// (synchronously) instead. Columns at or past `end` hold -inf.
template <typename T, int K, int THREADS>
__device__ __forceinline__ void copy_slots_async(uint4* buf, const T* row, int begin, int end,
                                                 bool vec) {
    constexpr int V = Vec16<T>::size;
    const int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int col = begin + (k * THREADS + t) * V;
        if (vec && col < end) {
            cp_async16(&buf[k * THREADS + t], row + col);
        } else {
            copy_slot<T, THREADS>(&buf[k * THREADS + t], row, col - t * V, end);
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
// --8<-- [end:async]

// --8<-- [start:split]
// A block's chunk held in two parts (v9, v10): K slots a thread in registers r (columns
// begin..mid, as load_raw lays them out) and S in shared memory (mid..end, copied there by
// copy_slots_async into held[s * THREADS + t]). Each pass reads the shared slots back one at a
// time (`#pragma unroll 1`), so the registers a thread needs do not grow with S.
template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_max(const uint4 (&r)[K], const uint4* held) {
    float m = raw_max<T>(r);  // while the copies are still landing
    if constexpr (S > 0) cp_async_wait_all();
#pragma unroll 1
    for (int s = 0; s < S; ++s) m = fmaxf(m, raw_max<T>({shared_slot(&held[s * THREADS + threadIdx.x])}));
    return m;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_exp_sum(const uint4 (&r)[K], const uint4* held, float m) {
    float sum = raw_exp_sum<T>(r, m);
#pragma unroll 1
    for (int s = 0; s < S; ++s) sum += raw_exp_sum<T>({shared_slot(&held[s * THREADS + threadIdx.x])}, m);
    return sum;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ void split_store(T* row, int begin, int mid, int end, bool vec,
                                            const uint4 (&r)[K], const uint4* held, float m,
                                            float f) {
    constexpr int V = Vec16<T>::size;
    const int t = threadIdx.x;
    store_raw<T, K, THREADS>(row, begin, mid, t, vec, r, m, f);
#pragma unroll 1
    for (int s = 0; s < S; ++s)
        store_raw<T, 1, THREADS>(row, mid + s * THREADS * V, end, t, vec,
                                 {shared_slot(&held[s * THREADS + t])}, m, f);
}
// --8<-- [end:split]
