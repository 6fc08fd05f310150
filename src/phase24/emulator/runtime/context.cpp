// Switching between the scheduler and a CUDA thread's coroutine. On x86-64 a switch saves the
// callee-saved registers on the current stack and moves to the other stack: a few instructions,
// where swapcontext also makes two system calls (the signal mask) per switch, which were most
// of a check's time. Elsewhere, ucontext.
#include "runtime.h"

namespace emu {

#if defined(__x86_64__)
extern "C" void emu_switch(void** save, void* next);
asm(R"(
    .text
    .globl emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
)");

void switch_to(Context& save, Context& next) { emu_switch(&save.sp, next.sp); }

void start(Context& c, char* stack, size_t size, void (*entry)()) {
    // the top of the stack as emu_switch leaves it: six registers, then `entry` for its ret,
    // then a return address that is never used (so that entry starts aligned as if called)
    auto* top = reinterpret_cast<void**>(uintptr_t(stack + size) & ~uintptr_t(15));
    top[-1] = nullptr;
    top[-2] = reinterpret_cast<void*>(entry);
    for (int i = 3; i <= 8; ++i) top[-i] = nullptr;
    c.sp = top - 8;
}
#else
void switch_to(Context& save, Context& next) { swapcontext(&save.uc, &next.uc); }

void start(Context& c, char* stack, size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
#endif

}  // namespace emu
