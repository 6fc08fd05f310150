// __half and __half2 as CUDA defines them for the lab's kernels: 16 bits of IEEE binary16,
// converted with the host compiler's _Float16 (round to nearest even, subnormals, inf, NaN).
#pragma once
#include "emu.h"

struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f) : __x(__builtin_bit_cast(unsigned short, (_Float16)f)) {}
    __half(double f) : __half((float)f) {}
    __half(int i) : __half((float)i) {}
    operator float() const { return (float)__builtin_bit_cast(_Float16, __x); }
};
struct __align__(4) __half2 { __half x, y; };
typedef __half half;
typedef __half2 half2;
struct __half_raw { unsigned short x; };

EMU_INLINE float __half2float(__half h) { return (float)h; }
EMU_INLINE __half __float2half(float f) { return __half(f); }
EMU_INLINE __half __float2half_rn(float f) { return __half(f); }
EMU_INLINE __half __int2half_rn(int i) { return __half((float)i); }
EMU_INLINE int __half2int_rz(__half h) { return (int)(float)h; }
EMU_INLINE __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
EMU_INLINE unsigned short __half_as_ushort(__half h) { return h.__x; }
EMU_INLINE __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
EMU_INLINE __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
EMU_INLINE __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
EMU_INLINE float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
EMU_INLINE __half2 __float22half2_rn(float2 f) { return __half2{__half(f.x), __half(f.y)}; }
EMU_INLINE float __low2float(__half2 h) { return (float)h.x; }
EMU_INLINE float __high2float(__half2 h) { return (float)h.y; }
EMU_INLINE __half __low2half(__half2 h) { return h.x; }
EMU_INLINE __half __high2half(__half2 h) { return h.y; }
EMU_INLINE __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
EMU_INLINE __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
EMU_INLINE __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
EMU_INLINE __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
EMU_INLINE __half __hfma(__half a, __half b, __half c) { return __half(fmaf(a, b, c)); }
EMU_INLINE __half __hmax(__half a, __half b) { return __half(fmaxf(a, b)); }
EMU_INLINE __half __hmin(__half a, __half b) { return __half(fminf(a, b)); }
EMU_INLINE __half __hneg(__half a) { return __half(-(float)a); }
EMU_INLINE bool __hisnan(__half a) { return (float)a != (float)a; }
EMU_INLINE bool __hisinf(__half a) { return (a.__x & 0x7fff) == 0x7c00; }
EMU_INLINE __half hexp(__half a) { return __half(expf(a)); }
