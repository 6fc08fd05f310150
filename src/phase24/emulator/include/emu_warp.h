// The warp's collective operations: each thread of the mask hands its value to the runtime,
// which waits until every thread named in the mask has arrived (a barrier of the warp), checks
// that the mask names the caller and only threads that take part, and returns what the caller
// receives.
#pragma once

enum EmuWarpKind {
    EMU_SHFL_IDX, EMU_SHFL_UP, EMU_SHFL_DOWN, EMU_SHFL_XOR, EMU_BALLOT, EMU_ANY, EMU_ALL,
    EMU_SYNCWARP, EMU_REDUCE_ADD, EMU_REDUCE_UMIN, EMU_REDUCE_UMAX, EMU_REDUCE_IMIN,
    EMU_REDUCE_IMAX, EMU_REDUCE_AND, EMU_REDUCE_OR, EMU_REDUCE_XOR
};

template <typename T>
EMU_INLINE T emu_shuffle(int kind, unsigned mask, T value, int lane, int width, int line,
                     const char* file) {
    static_assert(sizeof(T) <= 8, "a warp shuffle moves at most 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    bits = emu_warp(kind, mask, bits, lane, width, line, file);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}

#define __shfl_sync(mask, v, lane, ...) \
    emu_shuffle(EMU_SHFL_IDX, mask, v, lane, emu_width(__VA_ARGS__), __LINE__, __FILE__)
#define __shfl_up_sync(mask, v, delta, ...) \
    emu_shuffle(EMU_SHFL_UP, mask, v, delta, emu_width(__VA_ARGS__), __LINE__, __FILE__)
#define __shfl_down_sync(mask, v, delta, ...) \
    emu_shuffle(EMU_SHFL_DOWN, mask, v, delta, emu_width(__VA_ARGS__), __LINE__, __FILE__)
#define __shfl_xor_sync(mask, v, m, ...) \
    emu_shuffle(EMU_SHFL_XOR, mask, v, m, emu_width(__VA_ARGS__), __LINE__, __FILE__)
EMU_INLINE int emu_width(int width = 32) { return width; }

#define EMU_VOTE(kind, mask, p) \
    ((unsigned)emu_warp(kind, mask, (uint64_t)!!(p), 0, 32, __LINE__, __FILE__))
#define __ballot_sync(mask, p) EMU_VOTE(EMU_BALLOT, mask, p)
#define __any_sync(mask, p) ((int)EMU_VOTE(EMU_ANY, mask, p))
#define __all_sync(mask, p) ((int)EMU_VOTE(EMU_ALL, mask, p))
#define __syncwarp(...) ((void)emu_warp(EMU_SYNCWARP, emu_full(__VA_ARGS__), 0, 0, 32, __LINE__, __FILE__))
#define __activemask() emu_active_mask()
EMU_INLINE unsigned emu_full(unsigned mask = 0xffffffffu) { return mask; }

#define EMU_REDUCE(kind, mask, v) emu_warp(kind, mask, (uint64_t)(uint32_t)(v), 0, 32, __LINE__, __FILE__)
#define __reduce_add_sync(mask, v) ((unsigned)EMU_REDUCE(EMU_REDUCE_ADD, mask, v))
#define __reduce_and_sync(mask, v) ((unsigned)EMU_REDUCE(EMU_REDUCE_AND, mask, v))
#define __reduce_or_sync(mask, v) ((unsigned)EMU_REDUCE(EMU_REDUCE_OR, mask, v))
#define __reduce_xor_sync(mask, v) ((unsigned)EMU_REDUCE(EMU_REDUCE_XOR, mask, v))
#define __reduce_min_sync(mask, v) emu_reduce_minmax(0, mask, v, __LINE__, __FILE__)
#define __reduce_max_sync(mask, v) emu_reduce_minmax(1, mask, v, __LINE__, __FILE__)
template <typename T>
EMU_INLINE T emu_reduce_minmax(int max, unsigned mask, T v, int line, const char* file) {
    static_assert(sizeof(T) == 4 && std::is_integral<T>::value, "__reduce_*_sync takes ints");
    const int kind = std::is_signed<T>::value ? (max ? EMU_REDUCE_IMAX : EMU_REDUCE_IMIN)
                                              : (max ? EMU_REDUCE_UMAX : EMU_REDUCE_UMIN);
    return (T)(uint32_t)emu_warp(kind, mask, (uint64_t)(uint32_t)v, 0, 32, line, file);
}
