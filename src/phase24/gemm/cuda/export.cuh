// The one way the GEMM ladder makes a kernel (every rung): GEMM_EXPORT wraps a rung's template
// instance in an extern "C" kernel of the lab's GEMM ABI, and GEMM_EVERY_DTYPE makes one per dtype.
//
// The kernel ABI (the launchers call every rung through it):
//   extern "C" __global__ void gemm_<rung>_<configuration>_<dtype>(
//       const T* a, const T* b, T* c, int M, int N, int K);
// a: M x K, b: K x N, c: M x N, all row-major and contiguous (a row of a is K elements, of b and c
// N elements); any M, N, K >= 1; any address the allocator gives (the 16-byte rungs check theirs).
// The grid is one-dimensional: block i computes tile i of C in row-major order of tiles
// (block_tile.cuh), so a grid never meets the 65535 limit of its y and z dimensions.
// dtype: f32 (float), f16 (__half), bf16 (__nv_bfloat16); products are summed in float32 and
// rounded once to T when stored.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// A kernel with C linkage (Python finds it by a plain name) for element type T, with the launch
// attributes ATTRS (may be empty: __launch_bounds__), that runs the template instance given last.
#define GEMM_EXPORT(name, T, ATTRS, ...)                                                   \
    extern "C" __global__ void ATTRS name(const T* __restrict__ a, const T* __restrict__ b, \
                                          T* __restrict__ c, int M, int N, int K) {         \
        __VA_ARGS__(a, b, c, M, N, K);                                                     \
    }

// KERNEL(tag, T, config...) for each element type. A rung defines VN_KERNEL(tag, T, <its
// configuration's parameters>) as one GEMM_EXPORT named gemm_vN_..., and ends with one instance
// line per configuration, which the rung's record (rung.py, beside the file) reads;
// tests/test_gemm_cuda_rungs.py checks that ptxas builds exactly the kernels it names.
#define GEMM_EVERY_DTYPE(KERNEL, ...)                                \
    KERNEL(f32, float, __VA_ARGS__) KERNEL(f16, __half, __VA_ARGS__) \
    KERNEL(bf16, __nv_bfloat16, __VA_ARGS__)
