// Atomics: one host thread runs every CUDA thread and none is interrupted inside these, so a
// plain read-modify-write is atomic. emu_atomic_begin checks the address (a buffer, shared
// memory) and tells the race detector that this access is atomic.
#pragma once

#define EMU_ATOMIC(name, expr)                                                    \
    template <typename T, typename U>                                             \
    EMU_RAW T name(T* p, U v_) {                                                  \
        emu_atomic_begin(p, sizeof(T), std::is_floating_point<T>::value);         \
        const T v = (T)v_, old = *p;                                              \
        *p = (expr);                                                              \
        return old;                                                               \
    }
EMU_ATOMIC(atomicAdd, old + v)
EMU_ATOMIC(atomicSub, old - v)
EMU_ATOMIC(atomicExch, v)
EMU_ATOMIC(atomicMin, v < old ? v : old)
EMU_ATOMIC(atomicMax, v > old ? v : old)
EMU_ATOMIC(atomicAnd, old & v)
EMU_ATOMIC(atomicOr, old | v)
EMU_ATOMIC(atomicXor, old ^ v)
EMU_ATOMIC(atomicInc, old >= v ? 0 : old + 1)
EMU_ATOMIC(atomicDec, (old == 0 || old > v) ? v : old - 1)
#define atomicAdd_block atomicAdd
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin

template <typename T, typename U, typename V>
EMU_RAW T atomicCAS(T* p, U compare, V value) {
    emu_atomic_begin(p, sizeof(T), 0);
    const T old = *p;
    if (old == (T)compare) *p = (T)value;
    return old;
}
