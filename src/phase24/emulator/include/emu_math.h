// CUDA's math beyond <math.h>: the fast intrinsics (computed here at full precision, which is
// within their error bounds), bit reinterpretations, integer intrinsics and the min/max
// overloads device code may call unqualified.
#pragma once

EMU_INLINE float emu_rcp(float x) { return 1.0f / x; }
EMU_INLINE float rsqrtf(float x) { return 1.0f / sqrtf(x); }
EMU_INLINE double rsqrt(double x) { return 1.0 / sqrt(x); }
EMU_INLINE float rcbrtf(float x) { return 1.0f / cbrtf(x); }
EMU_INLINE float exp10f(float x) { return powf(10.0f, x); }
EMU_INLINE float __expf(float x) { return expf(x); }
EMU_INLINE float __exp10f(float x) { return powf(10.0f, x); }
EMU_INLINE float __logf(float x) { return logf(x); }
EMU_INLINE float __log2f(float x) { return log2f(x); }
EMU_INLINE float __log10f(float x) { return log10f(x); }
EMU_INLINE float __powf(float x, float y) { return powf(x, y); }
EMU_INLINE float __sinf(float x) { return sinf(x); }
EMU_INLINE float __cosf(float x) { return cosf(x); }
EMU_INLINE float __tanf(float x) { return tanf(x); }
EMU_INLINE float __tanhf(float x) { return tanhf(x); }
EMU_INLINE void __sincosf(float x, float* s, float* c) { *s = sinf(x), *c = cosf(x); }
EMU_INLINE float __fdividef(float x, float y) { return x / y; }
EMU_INLINE float __frcp_rn(float x) { return 1.0f / x; }
EMU_INLINE float __fsqrt_rn(float x) { return sqrtf(x); }
EMU_INLINE float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
EMU_INLINE float __fadd_rn(float x, float y) { return x + y; }
EMU_INLINE float __fsub_rn(float x, float y) { return x - y; }
EMU_INLINE float __fmul_rn(float x, float y) { return x * y; }
EMU_INLINE float __fdiv_rn(float x, float y) { return x / y; }
EMU_INLINE float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
EMU_INLINE double __dadd_rn(double x, double y) { return x + y; }
EMU_INLINE double __dmul_rn(double x, double y) { return x * y; }
EMU_INLINE double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
EMU_INLINE float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
EMU_INLINE float fdividef(float x, float y) { return x / y; }

EMU_INLINE int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
EMU_INLINE unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
EMU_INLINE float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
EMU_INLINE float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
EMU_INLINE long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
EMU_INLINE double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
EMU_INLINE int __float2int_rn(float x) { return (int)nearbyintf(x); }
EMU_INLINE int __float2int_rz(float x) { return (int)x; }
EMU_INLINE int __float2int_rd(float x) { return (int)floorf(x); }
EMU_INLINE int __float2int_ru(float x) { return (int)ceilf(x); }
EMU_INLINE unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
EMU_INLINE float __int2float_rn(int x) { return (float)x; }

EMU_INLINE int __popc(unsigned x) { return __builtin_popcount(x); }
EMU_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
EMU_INLINE int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
EMU_INLINE int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
EMU_INLINE int __ffs(unsigned x) { return __builtin_ffs((int)x); }
EMU_INLINE int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
EMU_INLINE unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
EMU_INLINE int __mul24(int x, int y) { return x * y; }
EMU_INLINE unsigned __umul24(unsigned x, unsigned y) { return x * y; }
EMU_INLINE int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
EMU_INLINE unsigned __umulhi(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x * y) >> 32); }
EMU_INLINE unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
EMU_INLINE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) << (s & 31) >> 32);
}
EMU_INLINE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}

#define EMU_MINMAX(T)                                   \
    EMU_INLINE T min(T a, T b) { return b < a ? b : a; }    \
    EMU_INLINE T max(T a, T b) { return a < b ? b : a; }
EMU_MINMAX(int)
EMU_MINMAX(unsigned)
EMU_MINMAX(long)
EMU_MINMAX(unsigned long)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
EMU_INLINE float min(float a, float b) { return fminf(a, b); }
EMU_INLINE float max(float a, float b) { return fmaxf(a, b); }
EMU_INLINE double min(double a, double b) { return fmin(a, b); }
EMU_INLINE double max(double a, double b) { return fmax(a, b); }
EMU_INLINE long long llmin(long long a, long long b) { return min(a, b); }
EMU_INLINE long long llmax(long long a, long long b) { return max(a, b); }
EMU_INLINE unsigned umin(unsigned a, unsigned b) { return min(a, b); }
EMU_INLINE unsigned umax(unsigned a, unsigned b) { return max(a, b); }
