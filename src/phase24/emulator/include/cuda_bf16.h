// __nv_bfloat16 and __nv_bfloat162: the top 16 bits of a float32, rounded to nearest even when
// made from a float (a NaN stays a NaN; values past the largest round to infinity).
#pragma once
#include "emu.h"

EMU_INLINE unsigned short emu_float_to_bf16_bits(float f) {
    const unsigned u = __builtin_bit_cast(unsigned, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : __x(emu_float_to_bf16_bits(f)) {}
    __nv_bfloat16(double f) : __nv_bfloat16((float)f) {}
    __nv_bfloat16(int i) : __nv_bfloat16((float)i) {}
    operator float() const { return __builtin_bit_cast(float, (unsigned)__x << 16); }
};
struct __align__(4) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

EMU_INLINE float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
EMU_INLINE __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
EMU_INLINE __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
EMU_INLINE __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) {
    __nv_bfloat16 h;
    h.__x = u;
    return h;
}
EMU_INLINE unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
EMU_INLINE __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
    return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
EMU_INLINE __nv_bfloat162 __float2bfloat162_rn(float a) {
    return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(a)};
}
EMU_INLINE __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
EMU_INLINE float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
EMU_INLINE __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {__nv_bfloat16(f.x), __nv_bfloat16(f.y)}; }
EMU_INLINE float __low2float(__nv_bfloat162 h) { return (float)h.x; }
EMU_INLINE float __high2float(__nv_bfloat162 h) { return (float)h.y; }
EMU_INLINE __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16((float)a + (float)b); }
EMU_INLINE __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16((float)a * (float)b); }
EMU_INLINE __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(fmaxf(a, b)); }
EMU_INLINE __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(fminf(a, b)); }
EMU_INLINE bool __hisnan(__nv_bfloat16 a) { return (float)a != (float)a; }
