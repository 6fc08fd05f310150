// A block's chunk held in two parts (v9 introduced it; v10 uses it too): K slots a thread in
// registers, raw as v7 keeps them, and S more in shared memory, copied there by cp.async; each
// pass (max, sum, output) reads the shared slots back one at a time.
#pragma once
#include "cp_async.cuh"
#include "raw_slots.cuh"

// --8<-- [start:split]
// Read back a slot copied there. `asm volatile`: each pass over the slots reads shared memory
// again, instead of the compiler keeping the first pass's values alive in registers.
__device__ __forceinline__ uint4 shared_slot(const uint4* p) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(shared_address(p)) : "memory");
    return v;
}

// A block's chunk held in two parts (v9, v10): K slots a thread in registers r (columns
// begin..mid, as load_raw lays them out) and S in shared memory (mid..end, copied there by
// copy_slots_async into held[s * THREADS + t]). Each pass reads the shared slots back one at a
// time (`#pragma unroll 1`), so the registers a thread needs do not grow with S.
template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_max(const uint4 (&r)[K], const uint4* held) {
    float m = raw_max<T>(r);  // while the copies are still landing
    if constexpr (S > 0) cp_async_wait_all();
#pragma unroll 1
    for (int s = 0; s < S; ++s) m = fmaxf(m, raw_max<T>({shared_slot(&held[s * THREADS + threadIdx.x])}));
    return m;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ float split_exp_sum(const uint4 (&r)[K], const uint4* held, float m) {
    float sum = raw_exp_sum<T>(r, m);
#pragma unroll 1
    for (int s = 0; s < S; ++s) sum += raw_exp_sum<T>({shared_slot(&held[s * THREADS + threadIdx.x])}, m);
    return sum;
}

template <typename T, int K, int S, int THREADS>
__device__ __forceinline__ void split_store(T* row, int begin, int mid, int end, bool vec,
                                            const uint4 (&r)[K], const uint4* held, float m,
                                            float f) {
    constexpr int V = Vec16<T>::size;
    const int t = threadIdx.x;
    store_raw<T, K, THREADS>(row, begin, mid, t, vec, r, m, f);
#pragma unroll 1
    for (int s = 0; s < S; ++s)
        store_raw<T, 1, THREADS>(row, mid + s * THREADS * V, end, t, vec,
                                 {shared_slot(&held[s * THREADS + t])}, m, f);
}
// --8<-- [end:split]
