// Hopper's tensor memory accelerator (TMA) and the shared-memory barriers that say when its copies
// have landed (v10; sm_90a only). PTX ISA: "cp.async.bulk.tensor", "mbarrier", "setmaxnreg".
//
// One thread asks the TMA for a whole 2-D box of a matrix (the tensor map, made on the host by
// cuTensorMapEncodeTiled, says where the matrix lies, its shape, the box and the swizzle); the
// copy runs on its own and, when its bytes are in shared memory, counts them off an mbarrier.
// A consumer waits on that mbarrier's phase; the producer waits on a second mbarrier, which the
// consumers arrive at when they are done reading a slot, before it refills the slot.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <stdint.h>

#include "../../core/cuda/shared_address.cuh"

// An mbarrier that completes a phase after `count` arrivals (and the bytes it expects, if any).
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

// After the inits, by the thread that made them: they become visible to the TMA (async proxy).
__device__ __forceinline__ void mbar_fence_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// A pipeline's barriers, made by thread 0 before the block uses them: full[s] completes a phase
// when the producer has arrived and the TMA's bytes have landed, empty[s] when `consumers`
// warpgroups have arrived (each done reading slot s).
template <int STAGES>
__device__ __forceinline__ void init_slots(uint64_t (&full)[STAGES], uint64_t (&empty)[STAGES],
                                           uint32_t consumers) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(shared_address(&full[s]), 1);
            mbar_init(shared_address(&empty[s]), consumers);
        }
        mbar_fence_init();
    }
    __syncthreads();
}

// One arrival that also says `bytes` more bytes will land before the phase may complete.
__device__ __forceinline__ void mbar_expect_bytes(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

// One plain arrival.
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Wait until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so a wait
// for parity 1 returns at once: "the phase before the first" counts as done.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done)
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            " selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}

// The box of `map` whose first element is (x, y) (x along a row, the contiguous dimension) into
// shared address `dst`, counted off mbarrier `bar`. Elements outside the matrix arrive as zeros,
// and still count: a box always delivers its full size in bytes.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int x,
                                         int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x),
        "r"(y), "r"(bar)
        : "memory");
}

// The registers a thread of this warpgroup may hold from here on (all its warps execute it): a
// producer that only issues copies gives registers back, consumers holding accumulators take them.
template <int REGS>
__device__ __forceinline__ void regs_down() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void regs_up() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
