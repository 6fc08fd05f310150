// The one way the ladder makes a kernel (every rung): SOFTMAX_EXPORT wraps a rung's template
// instance in an extern "C" kernel of the lab's ABI, and SOFTMAX_EVERY_DTYPE makes one per dtype.
//
// The kernel ABI of the lab (the checker, the benchmark and a learner's own file use it too):
//   extern "C" __global__ void softmax_<dtype>(const T* x, T* y, long long M, int N,
//                                             long long x_stride);
// x: M rows of N elements, row r starting at x + r * x_stride (any stride >= N, any alignment);
// y: M rows of N elements, contiguous. dtype: f32 (float), f16 (__half), bf16 (__nv_bfloat16).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// --8<-- [start:export]
// Every kernel of the ladder is one SOFTMAX_EXPORT: a function with C linkage (so that Python
// finds it by a plain name) for element type T, with the launch attributes ATTRS (may be empty:
// __launch_bounds__, __cluster_dims__), that runs the rung's template instance given last.
#define SOFTMAX_EXPORT(name, T, ATTRS, ...)                                                        \
    extern "C" __global__ void ATTRS name(const T* x, T* y, long long M, int N, long long s) {     \
        __VA_ARGS__(x, y, M, N, s);                                                                 \
    }

// KERNEL(tag, T, config...) for each element type (SOFTMAX_FLOAT32: for float32 alone). A rung
// defines VN_KERNEL(tag, T, <its configuration's parameters>), one SOFTMAX_EXPORT named
// softmax_vN_..., and ends with one line per configuration it compiles. configs.py writes the
// same configurations as a Python table; tests/test_bridge.py checks that the two agree.
#define SOFTMAX_EVERY_DTYPE(KERNEL, ...)                               \
    KERNEL(f32, float, __VA_ARGS__) KERNEL(f16, __half, __VA_ARGS__) \
    KERNEL(bf16, __nv_bfloat16, __VA_ARGS__)
#define SOFTMAX_FLOAT32(KERNEL, ...) KERNEL(f32, float, __VA_ARGS__)
// --8<-- [end:export]
