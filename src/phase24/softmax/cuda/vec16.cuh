// Utilities every rung of the ladder shares: element types and their conversions, 16-byte
// accesses, warp and block reductions, the {max, sum} pair and its merge rule, a compensated sum,
// a row's slots held in registers, and the one way kernels are made (SOFTMAX_EXPORT). A rung's
// own idea is in its own file; a later rung that builds on it includes that file (whose kernels
// are compiled only when it is the file being built: __INCLUDE_LEVEL__ == 0).
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
template <int THREADS>
__device__ __forceinline__ float block_max(float v) { return block_reduce<THREADS, true>(v); }
template <int THREADS>
__device__ __forceinline__ float block_sum(float v) { return block_reduce<THREADS, false>(v); }

// --8<-- [start:compensated]
// A float sum that also keeps what each addition rounds away (Neumaier's form of Kahan's
// compensated sum), folded back into the sum after every addition so that the correction c
// stays below half a rounding of s: s + c stays within a few roundings of the exact sum however
// many terms are added. A plain running sum of n terms drifts by up to n roundings, and mostly
// downwards once the terms are small next to the sum, so its error grows with n; so does an
// unfolded correction, itself a plain sum of everything s cannot hold (past ~2^24 terms, all of
// them). For the rungs whose threads add many terms in order: v0 (N terms), v1 and v2 (N / 256).
struct CompensatedSum {
    float s = 0.f, c = 0.f;
    __device__ __forceinline__ void add(float v) {
        const float t = s + v;
        const float lost = fabsf(s) >= fabsf(v) ? (s - t) + v : (v - t) + s;  // exactly
        const float u = c + lost;
        s = t + u;        // fold the correction in; c keeps what that addition rounds away
        c = u - (s - t);
    }
    __device__ __forceinline__ void scale(float w) { s *= w, c *= w; }
    __device__ __forceinline__ float value() const { return s + c; }
};

// The sum of term(j) for j = begin, begin + step, ... below end, added plainly in runs of RUN
// terms and each run's total into a CompensatedSum: the loop over a run is a plain loop (one
// addition per term, unrolled, its loads in flight together), the compensated addition comes
// once per run, and the sum is as accurate (a run rounds at most RUN times, against its own
// small total). For v0's and v1's threads, which add N and N / 256 terms one after another.
// A thread with one run or less adds plainly, as a compensated sum of one term would give the
// same float; on short rows the per-row instructions are what count.
template <int RUN = 32, typename Term>
__device__ __forceinline__ float run_sum(int begin, int end, int step, Term term) {
    auto plain = [&](int from, int stop) {
        float part = 0.f;
        for (int j = from; j < stop; j += step) part += term(j);
        return part;
    };
    if (end - begin <= RUN * step) return plain(begin, end);  // one run: nothing to compensate
    CompensatedSum total;
    for (int run = begin; run < end; run += RUN * step)
        total.add(plain(run, min(end, run + RUN * step)));
    return total.value();
}
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

// The 32-bit shared-memory address of p, as PTX instructions on shared memory take it.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --8<-- [start:export]
// Every kernel of the ladder is one SOFTMAX_EXPORT: a function with C linkage (so that Python
// finds it by a plain name) for element type T, with the launch attributes ATTRS (may be empty:
// __launch_bounds__, __cluster_dims__), that runs the rung's template instance given last.
#define SOFTMAX_EXPORT(name, T, ATTRS, ...)                                                        \
    extern "C" __global__ void ATTRS name(const T* x, T* y, long long M, int N, long long s) {     \
        __VA_ARGS__(x, y, M, N, s);                                                                 \
    }

// KERNEL(tag, T, config...) for each element type. A rung defines
//   VN_KERNEL(tag, T, <its configuration's parameters>): one SOFTMAX_EXPORT, named softmax_vN_...
//   VN_CONFIGS(X): X(<configuration>) for each one the launcher may choose (VN_CONFIGS_F32: those
//   built for float32 only),
// and compiles VN_CONFIGS(VN_EVERY_DTYPE). cuda_impls.py reads the lists and the kernel names
// from those two macros: they are the only place a configuration is written.
#define SOFTMAX_EVERY_DTYPE(KERNEL, ...)                               \
    KERNEL(f32, float, __VA_ARGS__) KERNEL(f16, __half, __VA_ARGS__) \
    KERNEL(bf16, __nv_bfloat16, __VA_ARGS__)
// --8<-- [end:export]
