// A block's threads as coroutines that take turns on one host thread. A thread runs until it
// waits (a barrier of the block, an operation of its warp), then the next one runs: schedule 0
// resumes them in order, schedule 1 in reverse, so that what one thread reads of another's
// writes without a barrier differs between the two. A round in which no thread can go on is a
// hang: it is reported, naming who waits where and who returned.
#include <sys/mman.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "runtime.h"

namespace emu {

Launch* L = nullptr;
Thread* cur = nullptr;
std::vector<Thread> threads(MAX_THREADS);
static char* stacks = nullptr;  // one region: every thread's stack, a guard page below each

bool in_stacks(uintptr_t a) {
    return stacks && a >= uintptr_t(stacks) && a < uintptr_t(stacks) + STACK * MAX_THREADS;
}

std::string who(int t) {
    const Dim3 b = L->block_idx;
    const unsigned x = L->block.x, y = L->block.y;
    char text[128];
    std::snprintf(text, sizeof text, "block (%u,%u,%u) thread (%u,%u,%u)", b.x, b.y, b.z,
                  t % x, t / x % y, t / (x * y));
    return text;
}

static void record(uintptr_t pc, const char* text) {
    if (!L->aborted) L->fault = L->kernel + ", " + text, L->fault_pc = pc;
    L->aborted = true;
}

void fail(uintptr_t pc, const char* format, ...) {
    char text[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    record(pc, text);
    Thread* me = cur;
    cur = nullptr;
    switch_to(me->context, L->scheduler);  // never resumed: the launch ends
    __builtin_unreachable();
}

void yield() {
    Thread* me = cur;
    switch_to(me->context, L->scheduler);
    cur = me;
}

static void thread_main() {
    L->call(L->args);
    cur->done = true;
    ++L->done_count;
    L->progress = true;
    if (L->arrived > 0)
        fail(0, "%s returned while other threads of its block wait at __syncthreads() (%s:%d): a "
             "barrier every thread must reach", who(cur->id).c_str(), L->barrier_file,
             L->barrier_line);
    Thread* me = cur;
    cur = nullptr;
    switch_to(me->context, L->scheduler);  // a finished thread is never resumed
    __builtin_unreachable();
}

// ---- the block's barrier --------------------------------------------------------------------

static int barrier(int line, const char* file, int predicate) {
    for (int t = 0; L->done_count && t < L->nthreads; ++t)
        if (threads[t].done)
            fail(0, "%s waits at __syncthreads() (%s:%d), which %s never reaches: it returned "
                 "before it (every thread of a block must reach each barrier)",
                 who(cur->id).c_str(), file, line, who(t).c_str());
    if (L->arrived == 0) {
        L->barrier_line = line, L->barrier_file = file, L->pred_count = 0;
    } else if (line != L->barrier_line || std::strcmp(file, L->barrier_file) != 0) {
        fail(0, "%s waits at __syncthreads() (%s:%d) while others wait at another one (%s:%d): "
             "the threads of a block must meet at the same barrier", who(cur->id).c_str(), file,
             line, L->barrier_file, L->barrier_line);
    }
    L->pred_count += predicate;
    L->progress = true;
    const long long mine = L->generation;
    if (++L->arrived == L->nthreads) {
        L->arrived = 0, L->last_pred = L->pred_count, ++L->generation, ++L->epoch;
        for (auto& s : L->warp_syncs) ++s;
        return L->last_pred;
    }
    while (L->generation == mine) yield();
    return L->last_pred;
}

// ---- the warp's operations ------------------------------------------------------------------

struct WarpOp {
    int warp, kind, line;
    const char* file;
    unsigned mask, arrived = 0, left = 0;
    bool complete = false;
    uint64_t values[32];
    int lanes[32];
};

static unsigned lanes_of(int warp) {
    const int n = L->nthreads - 32 * warp;
    return n >= 32 ? 0xffffffffu : (1u << n) - 1u;
}

static uint64_t result(const WarpOp& op, int lane, int width) {
    const unsigned seg = lane & ~(width - 1), arg = unsigned(op.lanes[lane]);
    int src = lane;
    switch (op.kind) {
    case 0: src = seg + (arg & (width - 1)); break;                          // idx
    case 1: src = (lane & (width - 1)) >= int(arg) ? lane - arg : lane; break;  // up
    case 2: src = (lane & (width - 1)) + arg < unsigned(width) ? lane + arg : lane; break;
    case 3: src = ((lane ^ arg) & ~(width - 1)) == seg ? lane ^ arg : lane; break;  // xor
    default: break;
    }
    if (op.kind <= 3) {
        if (!(op.mask >> src & 1))
            fail(0, "%s: __shfl*_sync (%s:%d) reads lane %d, which its mask 0x%08x leaves out",
                 who(cur->id).c_str(), op.file, op.line, src, op.mask);
        return op.values[src];
    }
    uint64_t acc = 0, any = 0, all = 1;
    bool first = true;
    for (int l = 0; l < 32; ++l) {
        if (!(op.mask >> l & 1)) continue;
        const uint32_t v = uint32_t(op.values[l]);
        any |= v != 0, all &= v != 0;
        if (op.kind == 4 && v) acc |= 1ull << l;
        if (first) { acc = op.kind == 4 ? acc : v, first = false; continue; }
        switch (op.kind) {
        case 8: acc = uint32_t(acc + v); break;
        case 9: acc = v < uint32_t(acc) ? v : acc; break;
        case 10: acc = v > uint32_t(acc) ? v : acc; break;
        case 11: acc = int32_t(v) < int32_t(acc) ? v : acc; break;
        case 12: acc = int32_t(v) > int32_t(acc) ? v : acc; break;
        case 13: acc &= v; break;
        case 14: acc |= v; break;
        case 15: acc ^= v; break;
        default: break;
        }
    }
    return op.kind == 5 ? any : op.kind == 6 ? all : acc;
}

extern "C" uint64_t emu_warp(int kind, unsigned mask, uint64_t value, int arg, int width,
                             int line, const char* file) {
    const int warp = cur->id / 32, lane = cur->id % 32;
    const char* name = kind <= 3 ? "__shfl*_sync" : kind <= 6 ? "a warp vote (__ballot_sync, "
        "__any_sync, __all_sync)" : kind == 7 ? "__syncwarp" : "__reduce_*_sync";
    if (width < 1 || width > 32 || (width & (width - 1)))
        fail(0, "%s: %s (%s:%d) with width %d: the width must be 1, 2, 4, 8, 16 or 32",
             who(cur->id).c_str(), name, file, line, width);
    if (!(mask >> lane & 1))
        fail(0, "%s calls %s (%s:%d) with mask 0x%08x, which leaves out its own lane %d",
             who(cur->id).c_str(), name, file, line, mask, lane);
    if (mask & ~lanes_of(warp))
        fail(0, "%s: %s (%s:%d) names lanes its warp does not have (mask 0x%08x, the block has "
             "%d threads)", who(cur->id).c_str(), name, file, line, mask, L->nthreads);
    for (int l = 0; l < 32; ++l)
        if (mask >> l & 1 && threads[32 * warp + l].done)
            fail(0, "%s: %s (%s:%d) waits for lane %d of its mask 0x%08x, which returned",
                 who(cur->id).c_str(), name, file, line, l, mask);
    WarpOp* op = nullptr;
    for (WarpOp* o : L->warp_ops)
        if (o->warp == warp && !o->complete && o->mask == mask && !(o->arrived >> lane & 1)) op = o;
    if (!op) {
        op = new WarpOp{warp, kind, line, file, mask};
        L->warp_ops.push_back(op);
    } else if (op->kind != kind || op->line != line || std::strcmp(op->file, file) != 0) {
        fail(0, "%s calls %s (%s:%d) while lanes of its mask 0x%08x wait at another warp "
             "operation (%s:%d)", who(cur->id).c_str(), name, file, line, mask, op->file, op->line);
    }
    op->values[lane] = value, op->lanes[lane] = arg, op->arrived |= 1u << lane;
    L->progress = true;
    if (op->arrived == mask) op->complete = true, ++L->warp_syncs[warp];
    while (!op->complete) yield();
    const uint64_t out = result(*op, lane, width);
    op->left |= 1u << lane;
    if (op->left == mask) {
        for (auto& o : L->warp_ops)
            if (o == op) o = L->warp_ops.back();
        L->warp_ops.pop_back();
        delete op;
    }
    return out;
}

extern "C" unsigned emu_active_mask() {
    const int warp = cur->id / 32;
    unsigned mask = 0;
    for (int l = 0; l < 32 && 32 * warp + l < L->nthreads; ++l)
        if (!threads[32 * warp + l].done) mask |= 1u << l;
    return mask;
}

extern "C" void emu_syncthreads(int line, const char* file) { barrier(line, file, 0); }
extern "C" int emu_syncthreads_count(int predicate, int line, const char* file) {
    return barrier(line, file, predicate);
}
extern "C" Dim3 emu_thread_idx() { return cur->idx; }
extern "C" Dim3 emu_block_idx() { return L->block_idx; }
extern "C" Dim3 emu_block_dim() { return L->block; }
extern "C" Dim3 emu_grid_dim() { return L->grid; }

// ---- a block, start to end ------------------------------------------------------------------

static void hang() {
    std::string waiting;
    for (const WarpOp* op : L->warp_ops) {
        char text[200];
        std::snprintf(text, sizeof text, "; lanes 0x%08x of warp %d wait at %s:%d for lanes "
                      "0x%08x", op->arrived, op->warp, op->file, op->line, op->mask & ~op->arrived);
        waiting += text;
    }
    char text[1024];
    std::snprintf(text, sizeof text, "block (%u,%u,%u) hangs: no thread can go on%s",
                  L->block_idx.x, L->block_idx.y, L->block_idx.z, waiting.c_str());
    record(0, text);
}

void run_block() {
    if (!stacks) {
        stacks = static_cast<char*>(mmap(nullptr, STACK * MAX_THREADS, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
        for (int t = 0; t < MAX_THREADS; ++t) mprotect(stacks + STACK * t, 4096, PROT_NONE);
    }
    const int n = L->nthreads;
    for (int t = 0; t < n; ++t) {
        Thread& th = threads[t];
        th.id = t, th.done = false, th.seen.clear();
        th.idx = {t % L->block.x, t / L->block.x % L->block.y, t / (L->block.x * L->block.y)};
        th.stack = stacks + STACK * t;
        start(th.context, th.stack + 4096, STACK - 4096, thread_main);
    }
    L->arrived = 0, L->generation = 0, L->epoch = 0, L->done_count = 0;
    L->warp_syncs.assign((n + 31) / 32, 0);
    for (WarpOp* op : L->warp_ops) delete op;
    L->warp_ops.clear();
    start_block();
    for (int left = n; left > 0 && !L->aborted;) {
        bool progress = false;
        left = 0;
        for (int k = 0; k < n && !L->aborted; ++k) {
            Thread& th = threads[L->schedule == 0 ? k : n - 1 - k];
            if (th.done) continue;
            L->progress = false;
            cur = &th;
            switch_to(L->scheduler, th.context);
            cur = nullptr;
            progress |= L->progress;
            left += !th.done;
        }
        if (left > 0 && !progress && !L->aborted) hang();
    }
    cur = nullptr;
    if (!L->aborted) end_block();
}

}  // namespace emu
