// What CUDA C's device code means on a CPU: the emulator's one header, included before the
// kernel's file (build.py passes -include emu.h). Each CUDA thread is a coroutine of
// runtime/scheduler.cpp; this header gives the kernel its names (threadIdx, __syncthreads,
// __shfl_xor_sync, atomicAdd, ...) and forwards each to the runtime, which checks and counts.
// Loads and stores are not seen here: the compiler's thread-sanitizer instrumentation calls
// runtime/hooks.cpp before every one of them.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <type_traits>

// Device functions are inlined into the kernel: a struct a call returns (a __half, a float4)
// straight into memory is otherwise stored by the call, unseen by the instrumentation; inlined,
// the store is the kernel's own.
#define EMU_INLINE inline __attribute__((always_inline))
#define __host__
#define __device__ __attribute__((always_inline))
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __managed__
#define __grid_constant__
#define CUDART_CB
// Functions of the runtime itself: never instrumented (their memory is the emulator's).
#define EMU_RAW __attribute__((no_sanitize_thread, noinline))

#include "emu_vectors.h"

extern "C" {
uint3 emu_thread_idx(void);
uint3 emu_block_idx(void);
dim3 emu_block_dim(void);
dim3 emu_grid_dim(void);
void emu_syncthreads(int line, const char* file);
int emu_syncthreads_count(int predicate, int line, const char* file);
uint64_t emu_warp(int kind, unsigned mask, uint64_t value, int lane_or_delta, int width, int line,
                  const char* file);
void emu_atomic_begin(const void* address, int bytes, int is_float);
void* emu_dynamic_shared(void);
int emu_shared_var(void* address, unsigned long bytes, const char* name, int ndims,
                   const unsigned long* strides);
unsigned emu_active_mask(void);
}

#define threadIdx (emu_thread_idx())
#define blockIdx (emu_block_idx())
#define blockDim (emu_block_dim())
#define gridDim (emu_grid_dim())
static constexpr int warpSize = 32;

#define __syncthreads() emu_syncthreads(__LINE__, __FILE__)
#define __syncthreads_count(p) emu_syncthreads_count(!!(p), __LINE__, __FILE__)
#define __syncthreads_and(p) (emu_syncthreads_count(!(p), __LINE__, __FILE__) == 0)
#define __syncthreads_or(p) (emu_syncthreads_count(!!(p), __LINE__, __FILE__) != 0)
#define __threadfence() ((void)0)
#define __threadfence_block() ((void)0)
#define __nanosleep(ns) ((void)(ns))

#include "emu_warp.h"
#include "emu_atomics.h"
#include "emu_math.h"
#include "cuda_fp16.h"
#include "cuda_bf16.h"

template <typename T> __device__ inline T __ldg(const T* p) { return *p; }
template <typename T> __device__ inline T __ldcs(const T* p) { return *p; }
template <typename T> __device__ inline T __ldcg(const T* p) { return *p; }
template <typename T> __device__ inline void __stcs(T* p, T v) { *p = v; }
template <typename T> __device__ inline void __stcg(T* p, T v) { *p = v; }

// The glue build.py appends for each kernel: emu_call_<name>(args) calls it with the launch's
// arguments (args[i] points at the i-th), emu_params_<name> says what each parameter is.
#include <utility>
template <typename... P, size_t... I>
EMU_RAW void emu_invoke(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
    void (*volatile call)(P...) = kernel;  // never inlined here, where nothing is instrumented
    call(*static_cast<P*>(args[I])...);
}
template <typename... P>
EMU_RAW void emu_invoke(void (*kernel)(P...), void** args) {
    emu_invoke(kernel, args, std::index_sequence_for<P...>());
}
template <typename P> constexpr int emu_kind() {  // 0 a value, 1 a const pointer, 2 a pointer
    if constexpr (std::is_pointer<P>::value)
        return std::is_const<typename std::remove_pointer<P>::type>::value ? 1 : 2;
    return 0;
}
template <typename... P>
EMU_RAW int emu_describe(void (*)(P...), int* kinds, int* sizes) {
    int i = 0;
    ((kinds[i] = emu_kind<P>(), sizes[i] = int(sizeof(P)), ++i), ...);
    return int(sizeof...(P));
}
