// The warpgroup's asynchronous Tensor Core instructions (v9, v10; sm_90a only): wgmma.mma_async
// with both operands read from shared memory through descriptors (sw128.cuh), the fence, commit
// and wait that order it (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"),
// and the store of its float32 accumulator into C.
// A warpgroup is 4 consecutive warps (128 threads); all of them issue each of these together.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "sw128.cuh"
#include "vec16.cuh"

// The accumulator's N / 2 registers as the instruction lists them ({%0, ..., %N/2-1}) and as the
// asm statement binds them (each read and written: "+f").
#define WG_L32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
               "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_L64 WG_L32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, " \
                      "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "   \
                      "%60, %61, %62, %63"
#define WG_L128 WG_L64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, "     \
                       "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, " \
                       "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "  \
                       "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, "     \
                       "%115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "     \
                       "%126, %127"
#define WG_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WG_F16(i) WG_F4(i), WG_F4(i + 4), WG_F4(i + 8), WG_F4(i + 12)
#define WG_F32(i) WG_F16(i), WG_F16(i + 16)
#define WG_F64(i) WG_F32(i), WG_F32(i + 32)

// d (64 x N, float32) += A (64 x 16) B (16 x N): operands scale-d 1 (add to d), imm-scale-a and
// imm-scale-b 1 (no negation), imm-trans-a 0 (A K-major), imm-trans-b 1 (B MN-major: row-major
// K x N, as the lab's B is). The transposes exist for 16-bit types only.
#define WG_MMA(N, TY, LIST, DA, DB, ...)                                                     \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" LIST "}, %" \
                 #DA ", %" #DB ", 1, 1, 1, 0, 1;\n" : __VA_ARGS__ : "l"(da), "l"(db))

template <int N, typename T>
__device__ __forceinline__ void wgmma_async(float (&d)[N / 2], uint64_t da, uint64_t db) {
    static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "16-bit only");
    constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
    if constexpr (N == 64) {
        if constexpr (bf16) WG_MMA(64, "bf16", WG_L32, 32, 33, WG_F32(0));
        else WG_MMA(64, "f16", WG_L32, 32, 33, WG_F32(0));
    } else if constexpr (N == 128) {
        if constexpr (bf16) WG_MMA(128, "bf16", WG_L64, 64, 65, WG_F64(0));
        else WG_MMA(128, "f16", WG_L64, 64, 65, WG_F64(0));
    } else {
        static_assert(N == 256, "N: 64, 128 or 256");
        if constexpr (bf16) WG_MMA(256, "bf16", WG_L128, 128, 129, WG_F64(0), WG_F64(64));
        else WG_MMA(256, "f16", WG_L128, 128, 129, WG_F64(0), WG_F64(64));
    }
}

// Before the first wgmma, and wherever other instructions touched its accumulator since: orders
// those register accesses before the wgmma's.
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// The wgmmas issued since the last commit become one group...
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// ... and this waits until at most PENDING groups are still running: their reads of shared
// memory and their writes of the accumulator are done.
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

// wgmma reads shared memory through the async proxy; writes made through the generic proxy
// (st.shared, and cp.async's copies) need this fence, by the writing thread, before a barrier
// after which a wgmma reads them (PTX ISA: wgmma's "Async Proxy").
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The compiler sees no link between wgmma_wait and the accumulator's registers: this pins them
// (each one "rewritten" here), so no read of them is moved above the wait that precedes it.
template <int R>
__device__ __forceinline__ void hold(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Rows row0 .. row0 + 63 and columns col0 .. col0 + N - 1 of C (M x ldc, row-major) from the
// m64nN accumulator of this warpgroup (thread t holds, per 8 columns, 2 values of 2 rows:
// sw128::acc_row, acc_col), rounded to T; nothing outside C; both values of a pair in one 4-byte
// store where C's rows allow it.
template <int N, typename T>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], T* c, long long row0,
                                          long long col0, int M, int ldc) {
    const int t = threadIdx.x % 128;
    const bool vec_c = reinterpret_cast<uintptr_t>(c) % 4 == 0 && ldc % 2 == 0;
#pragma unroll
    for (int i = 0; i < N / 2; i += 2) {
        const long long row = row0 + sw128::acc_row(t, i), col = col0 + sw128::acc_col(t, i);
        if (row >= M || col >= ldc) continue;
        T* p = c + row * ldc + col;
        if (vec_c && col + 1 < ldc)
            *reinterpret_cast<uint32_t*>(p) = pack2(acc[i], acc[i + 1], (T*)nullptr);
        else
            for (int q = 0; q < 2 && col + q < ldc; ++q) p[q] = from_float<T>(acc[i + q]);
    }
}
