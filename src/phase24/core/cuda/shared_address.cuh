// The 32-bit address of a pointer into shared memory, as the PTX instructions on shared memory
// take it (cp.async, ldmatrix, mbarrier, the TMA, wgmma's descriptors). Both operations' ladders
// include it.
#pragma once
#include <stdint.h>

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
