// Every load and store of the kernel, before it happens: the compiler's thread-sanitizer
// instrumentation calls hooks.cpp with the address, and hooks.cpp calls access() below with the
// instruction's address too. An access must fall in
// the thread's stack, in a buffer the launch was given (inside what it may read, or write), in
// a __shared__ variable, or in the kernel's own globals; anything else is out of bounds and
// ends the launch before it is made. Shared memory is checked for races (two threads, one
// writing, no barrier between) and for reads of bytes never written; a buffer's bytes for two
// blocks writing one element. While counting, each access joins its warp's request.
#include <link.h>

#include <algorithm>
#include <cstring>

#include "runtime.h"

namespace emu {

alignas(128) static unsigned char dynamic_shared[SHARED_MAX];
static std::vector<SharedVar*> registered;      // every __shared__ variable, once first reached
static std::vector<std::pair<uintptr_t, uintptr_t>> modules;  // the kernel's own data
constexpr uintptr_t NEAR = 1 << 16;             // how far past a buffer an access is named by it
constexpr uintptr_t GUARD = 256;                // the guard after each __shared__ variable

static int add_module(dl_phdr_info* info, size_t, void* self);

static bool ordered(const Access& a) {  // is that access ordered before cur's?
    if (a.thread < 0 || a.thread == cur->id || a.epoch < L->epoch) return true;
    return a.thread / 32 == cur->id / 32 && a.warp_syncs < L->warp_syncs[cur->id / 32];
}
static Access now() { return {cur->id, L->epoch, int32_t(L->warp_syncs[cur->id / 32])}; }

static std::string element(const std::string& name, long offset, int size) {
    char text[160];
    std::snprintf(text, sizeof text, "%s[%ld]", name.c_str(), offset / std::max(size, 1));
    return text;
}
static std::string element(const SharedVar& v, long offset, int size) {  // As[3][1]
    if (v.strides.empty()) return element(v.name, offset, size);
    std::string text = v.name;
    for (unsigned long stride : v.strides) {
        text += "[" + std::to_string(offset / long(stride)) + "]";
        offset %= long(stride);
    }
    return text;
}

static void count(int space, const std::string& name, uintptr_t a, size_t n, uintptr_t pc,
                  long shared_offset) {
    Counts& c = L->counts;
    const uint64_t occurrence = cur->seen[pc]++;
    Request& r = L->requests[{uint64_t(cur->id / 32) << 32 | occurrence, pc}];
    r.space = space, r.name = &name;
    c.rows[{space, name}].bytes += (long long)n;
    if (space == GLOBAL_LOAD || space == GLOBAL_STORE) {
        for (uintptr_t s = a / 32; s <= (a + n - 1) / 32; ++s) r.units.push_back(s), c.sectors[s];
        for (uintptr_t w = a / 4; w <= (a + n - 1) / 4; ++w) r.words.push_back(w);
    } else {
        for (long w = shared_offset / 4; w <= (shared_offset + long(n) - 1) / 4; ++w)
            r.units.push_back(uint64_t(w));
    }
}

void end_block() {
    auto distinct = [](std::vector<uint64_t>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return (long long)v.size();
    };
    for (auto& [key, r] : L->requests) {
        long long units = distinct(r.units);
        const bool shared = r.space == SHARED_LOAD || r.space == SHARED_STORE;
        Tally& t = L->counts.rows[{r.space, *r.name}];
        // the ideal: the request's distinct words in the fewest sectors (8 words) or wavefronts
        t.ideal += shared ? (units + 31) / 32 : (distinct(r.words) + 7) / 8;
        if (shared) {  // wavefronts: the bank that must deliver the most distinct words
            int per_bank[32] = {};
            for (uint64_t w : r.units) ++per_bank[w % 32];
            units = *std::max_element(per_bank, per_bank + 32);
        }
        ++t.requests;
        t.units += units;
    }
    L->requests.clear();
}

static void shared_access(SharedVar& v, uintptr_t a, size_t n, bool write, uintptr_t pc) {
    const long at = long(a - v.lo);
    auto what = [&] { return element(v, at, int(n)); };  // named only when it fails
    for (size_t i = 0; i < n; ++i) {
        SharedByte& b = v.shadow[at + i];
        if (write) {
            const Access* other = !ordered(b.write) ? &b.write : !ordered(b.read) ? &b.read
                                : !ordered(b.read2) ? &b.read2 : nullptr;
            if (other)
                fail(pc, "%s writes %s (shared) that %s %s with no barrier between: a race",
                     who(cur->id).c_str(), what().c_str(), who(other->thread).c_str(),
                     other == &b.write ? "wrote" : "read");
            b.write = now(), b.written = true;
        } else {
            if (!b.written)
                fail(pc, "%s reads %s (shared), which no thread of its block has written",
                     who(cur->id).c_str(), what().c_str());
            if (!ordered(b.write))
                fail(pc, "%s reads %s (shared) that %s wrote with no barrier between: a race",
                     who(cur->id).c_str(), what().c_str(), who(b.write.thread).c_str());
            if (b.read.thread < 0 || b.read.epoch < L->epoch || b.read.thread == cur->id)
                b.read = now();
            else
                b.read2 = now();
        }
    }
    if (L->counting) count(write ? SHARED_STORE : SHARED_LOAD, v.name, a, n, pc, v.offset + at);
}

static void global_access(Buffer& b, uintptr_t a, size_t n, bool write, uintptr_t pc) {
    if (write) {
        for (size_t i = 0; i < n; ++i) {
            GlobalByte& g = b.shadow[a - b.wlo + i];
            const bool other_block = g.block >= 0 && g.block != L->block_linear;
            const bool same_epoch = g.block == L->block_linear && g.thread != cur->id &&
                                    g.epoch == L->epoch;
            if (!g.atomic && (other_block || same_epoch))
                fail(pc, "%s writes %s, which %s also writes: two writers of one element",
                     who(cur->id).c_str(), element(b.name, long(a - b.wlo), b.element).c_str(),
                     other_block ? "another block" : who(g.thread).c_str());
            g = {L->block_linear, cur->id, L->epoch, false};
        }
    }
    if (L->counting) count(write ? GLOBAL_STORE : GLOBAL_LOAD, b.name, a, n, pc, 0);
}

static void out_of_bounds(uintptr_t a, size_t n, bool write, uintptr_t pc) {
    const char* verb = write ? "writes" : "reads";
    for (SharedVar* v : L->shared)
        if (a + n > v->lo && a < v->hi + GUARD)
            fail(pc, "%s %s %zu bytes at %s (shared, %ld bytes): out of bounds",
                 who(cur->id).c_str(), verb, n, element(*v, long(a - v->lo), int(n)).c_str(),
                 long(v->hi - v->lo));
    for (Buffer& b : L->buffers) {
        const bool input = b.wlo == b.whi;
        if (write && input && a + n > b.lo && a < b.hi)
            fail(pc, "%s writes %s, an input the kernel may only read", who(cur->id).c_str(),
                 element(b.name, long(a - b.lo), b.element).c_str());
        const uintptr_t lo = write || !input ? b.wlo : b.lo, hi = write || !input ? b.whi : b.hi;
        if (a + n > lo - std::min(lo, NEAR) && a < hi + NEAR) {
            const long index = (long(a) - long(lo)) / std::max(b.element, 1);
            const long size = long(hi - lo) / std::max(b.element, 1);
            fail(pc, "%s %s %s[%ld], %s %s (%ld element%s): out of bounds", who(cur->id).c_str(),
                 verb, b.name.c_str(), index, a < lo ? "before the start of" : "past the end of",
                 b.name.c_str(), size, size == 1 ? "" : "s");
        }
    }
    fail(pc, "%s %s %zu bytes at %p, which is in no buffer of the launch: out of bounds",
         who(cur->id).c_str(), verb, n, reinterpret_cast<void*>(a));
}

void access(uintptr_t a, size_t n, bool write, uintptr_t pc) {
    if (!cur) return;  // host code, or the emulator's own
    if (a >= uintptr_t(cur->stack) && a < uintptr_t(cur->stack) + STACK) return;
    for (SharedVar* v : L->shared)
        if (a >= v->lo && a + n <= v->hi) return shared_access(*v, a, n, write, pc);
    for (Buffer& b : L->buffers) {
        if (write ? (a >= b.wlo && a + n <= b.whi) : (a >= b.lo && a + n <= b.hi))
            return global_access(b, a, n, write, pc);
    }
    if (in_stacks(a)) return;
    for (SharedVar* v : L->shared)  // the guard region after it (source.py)
        if (a + n > v->hi && a < v->hi + GUARD) out_of_bounds(a, n, write, pc);
    if (a + n > uintptr_t(dynamic_shared) && a < uintptr_t(dynamic_shared) + SHARED_MAX)
        out_of_bounds(a, n, write, pc);  // past the launch's dynamic shared memory
    for (auto [lo, hi] : modules)
        if (a >= lo && a + n <= hi) return;
    out_of_bounds(a, n, write, pc);
}

static void poison(SharedVar& v) {
    std::memset(reinterpret_cast<void*>(v.lo), 0xFF, v.hi - v.lo);
    std::fill(v.shadow.begin(), v.shadow.end(), SharedByte());
}

void start_block() {
    static SharedVar dynamic;
    L->shared.assign(registered.begin(), registered.end());
    if (L->shared_bytes > 0) {
        long end = 0;
        for (SharedVar* v : registered) end = std::max(end, v->offset + long(v->hi - v->lo));
        dynamic.lo = uintptr_t(dynamic_shared), dynamic.hi = dynamic.lo + L->shared_bytes;
        dynamic.name = "extern __shared__", dynamic.offset = (end + 127) / 128 * 128;
        dynamic.shadow.resize(L->shared_bytes);
        L->shared.push_back(&dynamic);
    }
    for (SharedVar* v : L->shared) poison(*v);
}

void find_modules(void* self) {
    if (modules.empty()) dl_iterate_phdr(add_module, self);
}

void reset_globals() {
    for (Buffer& b : L->buffers) std::fill(b.shadow.begin(), b.shadow.end(), GlobalByte());
}

static int add_module(dl_phdr_info* info, size_t, void* self) {  // the segments of our .so
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& h = info->dlpi_phdr[i];
        const uintptr_t lo = info->dlpi_addr + h.p_vaddr;
        if (h.p_type == PT_LOAD && uintptr_t(self) >= lo && uintptr_t(self) < lo + h.p_memsz)
            mine = true;
    }
    for (int i = 0; mine && i < info->dlpi_phnum; ++i) {
        const auto& h = info->dlpi_phdr[i];
        if (h.p_type == PT_LOAD && (h.p_flags & PF_W))
            modules.push_back({info->dlpi_addr + h.p_vaddr, info->dlpi_addr + h.p_vaddr + h.p_memsz});
        if (h.p_type == PT_LOAD && !(h.p_flags & PF_W) && !(h.p_flags & PF_X))
            modules.push_back({info->dlpi_addr + h.p_vaddr, info->dlpi_addr + h.p_vaddr + h.p_memsz});
    }
    return 0;
}

}  // namespace emu

using namespace emu;

extern "C" {

void* emu_dynamic_shared() { return dynamic_shared; }

int emu_shared_var(void* address, unsigned long bytes, const char* name, int ndims,
                   const unsigned long* strides) {
    long end = 0;
    for (SharedVar* v : registered) end = std::max(end, v->offset + long(v->hi - v->lo));
    auto* v = new SharedVar{uintptr_t(address), uintptr_t(address) + bytes, name,
                            (end + 15) / 16 * 16, std::vector<SharedByte>(bytes),
                            std::vector<unsigned long>(strides, strides + ndims)};
    registered.push_back(v);
    if (L) {
        L->shared.push_back(v);
        poison(*v);
    }
    return 1;
}

void emu_atomic_begin(const void* address, int bytes, int is_float) {
    if (!cur) return;
    const uintptr_t a = uintptr_t(address);
    ++L->counts.atomics;
    L->float_atomics |= is_float != 0;
    for (SharedVar* v : L->shared)
        if (a >= v->lo && a + bytes <= v->hi) {
            for (int i = 0; i < bytes; ++i) v->shadow[a - v->lo + i].written = true;
            return;
        }
    for (Buffer& b : L->buffers)
        if (a >= b.wlo && a + bytes <= b.whi) {
            for (int i = 0; i < bytes; ++i) b.shadow[a - b.wlo + i].atomic = true;
            return;
        }
    out_of_bounds(a, bytes, true, uintptr_t(__builtin_return_address(0)));
}

}  // extern "C"
