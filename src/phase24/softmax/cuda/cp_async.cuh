// Slots copied from global to shared memory with cp.async (v8 introduced it; v9 and v10 use it
// too): the copy does not pass through registers and runs while the thread does other work, so
// a block can hold more of a row than its registers can. Rows not 16-byte aligned are copied
// element by element instead, as load_raw reads them.
#pragma once
#include "../../core/cuda/shared_address.cuh"
#include "raw_slots.cuh"

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
