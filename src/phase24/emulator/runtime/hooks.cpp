// What the compiler's thread-sanitizer instrumentation (-fsanitize=thread) calls: one function
// before every load and store the kernel makes (__tsan_read4(address), __tsan_write16, ...),
// each sent to memory.cpp's access() with the instruction's address (our return address). GCC's
// address sanitizer was tried first and does not serve: it drops the check of a store that a
// check of a load of the same address precedes (buf[t] += ...), which hides the write from the
// race detector. The rest of the interface (function entry and exit, atomics, which the
// instrumentation makes of the C++ atomics that static initialisation uses) does what the
// uninstrumented code would: one host thread runs every CUDA thread, so a plain access is atomic.
#include <cstddef>
#include <cstdint>

#include "runtime.h"

using emu::access;
#define PC uintptr_t(__builtin_return_address(0))

extern "C" {

#define EMU_HOOKS(n)                                                                  \
    void __tsan_read##n(void* a) { access(uintptr_t(a), n, false, PC); }             \
    void __tsan_write##n(void* a) { access(uintptr_t(a), n, true, PC); }             \
    void __tsan_unaligned_read##n(void* a) { access(uintptr_t(a), n, false, PC); }   \
    void __tsan_unaligned_write##n(void* a) { access(uintptr_t(a), n, true, PC); }
EMU_HOOKS(1)
EMU_HOOKS(2)
EMU_HOOKS(4)
EMU_HOOKS(8)
EMU_HOOKS(16)
void __tsan_read_range(void* a, size_t n) { access(uintptr_t(a), n, false, PC); }
void __tsan_write_range(void* a, size_t n) { access(uintptr_t(a), n, true, PC); }
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_atomic_thread_fence(int) {}
void __tsan_atomic_signal_fence(int) {}

#define EMU_ATOMICS(bits, T)                                                                  \
    T __tsan_atomic##bits##_load(const volatile T* a, int) { return *a; }                     \
    void __tsan_atomic##bits##_store(volatile T* a, T v, int) { *a = v; }                     \
    T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) { T o = *a; *a = v; return o; } \
    T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) { T o = *a; *a = o + v; return o; } \
    T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) { T o = *a; *a = o - v; return o; } \
    T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) { T o = *a; *a = o & v; return o; } \
    T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) { T o = *a; *a = o | v; return o; }  \
    T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) { T o = *a; *a = o ^ v; return o; } \
    T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                             \
        T o = *a; *a = T(~(o & v)); return o;                                                 \
    }                                                                                         \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {   \
        if (*a == *c) { *a = v; return 1; }                                                   \
        *c = *a;                                                                              \
        return 0;                                                                             \
    }                                                                                         \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {     \
        return __tsan_atomic##bits##_compare_exchange_strong(a, c, v, 0, 0);                  \
    }                                                                                         \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {         \
        T o = *a;                                                                             \
        if (o == c) *a = v;                                                                   \
        return o;                                                                             \
    }
EMU_ATOMICS(8, uint8_t)
EMU_ATOMICS(16, uint16_t)
EMU_ATOMICS(32, uint32_t)
EMU_ATOMICS(64, uint64_t)

}  // extern "C"
