// The cooperative groups the lab's kernels may use: the block, and tiles of 1 to 32 threads of
// a warp (tiled_partition<S>), whose operations are the warp's (emu_warp.h) on the tile's mask.
// Clusters and grid-wide groups need a GPU.
#pragma once
#include "emu.h"

namespace cooperative_groups {

struct thread_block {
    void sync() const { __syncthreads(); }
    unsigned thread_rank() const {
        return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    unsigned num_threads() const { return size(); }
    dim3 group_index() const { return blockIdx; }
    dim3 thread_index() const { return threadIdx; }
    dim3 dim_threads() const { return blockDim; }
};
EMU_INLINE thread_block this_thread_block() { return thread_block(); }
EMU_INLINE void sync(const thread_block& b) { b.sync(); }

template <unsigned S>
struct thread_block_tile {
    static_assert(S >= 1 && S <= 32 && (S & (S - 1)) == 0, "a tile is 1 to 32 threads, a power of 2");
    unsigned mask() const {
        const unsigned lane = thread_block().thread_rank() % 32;
        return (S == 32 ? 0xffffffffu : ((1u << S) - 1u)) << (lane / S * S);
    }
    unsigned thread_rank() const { return thread_block().thread_rank() % S; }
    unsigned meta_group_rank() const { return thread_block().thread_rank() / S; }
    unsigned meta_group_size() const { return (thread_block().size() + S - 1) / S; }
    static constexpr unsigned size() { return S; }
    static constexpr unsigned num_threads() { return S; }
    void sync() const { __syncwarp(mask()); }
    template <typename T> T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, S); }
    template <typename T> T shfl_xor(T v, int m) const { return __shfl_xor_sync(mask(), v, m, S); }
    template <typename T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(mask(), v, d, S); }
    template <typename T> T shfl_down(T v, unsigned d) const {
        return __shfl_down_sync(mask(), v, d, S);
    }
    unsigned ballot(int p) const { return __ballot_sync(mask(), p) >> (thread_block().thread_rank() % 32 / S * S); }
    int any(int p) const { return __any_sync(mask(), p); }
    int all(int p) const { return __all_sync(mask(), p); }
};
template <unsigned S>
EMU_INLINE thread_block_tile<S> tiled_partition(const thread_block&) { return {}; }
template <unsigned S>
EMU_INLINE void sync(const thread_block_tile<S>& t) { t.sync(); }

template <typename T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <typename T> struct greater { T operator()(T a, T b) const { return a > b ? a : b; } };
template <typename T> struct less { T operator()(T a, T b) const { return a < b ? a : b; } };
template <typename T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <typename T> struct bit_or { T operator()(T a, T b) const { return a | b; } };

template <unsigned S, typename T, typename Op>
EMU_INLINE T reduce(const thread_block_tile<S>& tile, T v, Op op) {
    for (unsigned m = S / 2; m > 0; m /= 2) v = op(v, tile.shfl_xor(v, m));
    return v;
}

}  // namespace cooperative_groups
