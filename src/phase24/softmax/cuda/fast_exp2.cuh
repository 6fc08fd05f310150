// e^x as 2^(x * log2(e)) in one instruction (v4 on; v3 and v2 take log2(e) too). A later rung
// computes its exponentials with fast_exp2, which the special-function unit runs as one MUFU.EX2.
#pragma once

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
