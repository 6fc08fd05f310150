// The emulator's state, shared by its three parts: scheduler.cpp (the block's threads as
// coroutines, barriers, warp operations), memory.cpp (every load and store checked, races,
// counts) and launch.cpp (the C API Python calls: a launch under two schedules, its report).
// One launch runs at a time (launch.cpp holds a lock); everything here belongs to it.
#pragma once
#include <ucontext.h>

#include <cstdint>
#include <string>
#include <map>
#include <unordered_map>
#include <vector>

namespace emu {

struct Dim3 { unsigned x, y, z; };  // uint3 and dim3 of emu.h, as the C API passes them

constexpr int MAX_THREADS = 1024;
constexpr long SHARED_MAX = 227 * 1024;  // a block's shared memory on Hopper
constexpr size_t STACK = 256 * 1024;     // each thread's stack

struct Request {  // one warp-wide memory instruction: what its threads touched
    int space;    // see Space
    const std::string* name;      // of the buffer or the __shared__ variable
    std::vector<uint64_t> units;  // global: 32-byte sectors; shared: 4-byte words
    std::vector<uint64_t> words;  // global: the 4-byte words (the ideal: fewest sectors for them)
};
enum Space { GLOBAL_LOAD, GLOBAL_STORE, SHARED_LOAD, SHARED_STORE, SPACES };

#if defined(__x86_64__)
struct Context { void* sp = nullptr; };  // a coroutine's saved stack pointer (context.cpp)
#else
struct Context { ucontext_t uc; };
#endif
void switch_to(Context& save, Context& next);  // save where we are in `save`, resume `next`
void start(Context& c, char* stack, size_t size, void (*entry)());  // entry() on that stack

struct Thread {
    Dim3 idx;
    int id;  // linear index in the block
    Context context;
    char* stack;
    bool done;
    std::unordered_map<uintptr_t, uint32_t> seen;  // instruction -> times run (counting)
};

struct WarpOp;  // scheduler.cpp

struct Access {  // the last access of a byte that a race could involve
    int32_t thread = -1, epoch = -1, warp_syncs = 0;
};
struct SharedByte {
    Access write, read, read2;  // the last write, and up to two threads that read since
    bool written = false;
};
struct SharedVar {
    uintptr_t lo, hi;
    std::string name;
    long offset;  // where the GPU's layout would place it: for the banks
    std::vector<SharedByte> shadow;
    std::vector<unsigned long> strides;  // bytes per step of each index: name[i][j] in messages
};
struct GlobalByte {
    int32_t block = -1, thread = -1, epoch = -1;
    bool atomic = false;
};
struct Buffer {  // a pointer argument: readable [lo, hi), writable [wlo, whi)
    uintptr_t lo, hi, wlo, whi;
    std::string name;
    int element;  // bytes per element, to name elements in messages
    std::vector<GlobalByte> shadow;  // of [wlo, whi)
};

struct Tally {  // the requests of one space to one buffer or shared variable
    long long requests = 0, units = 0, ideal = 0, bytes = 0;
};
struct Counts {
    std::map<std::pair<int, std::string>, Tally> rows;  // (space, name) -> its tally
    long long atomics = 0;
    std::unordered_map<uint64_t, char> sectors;  // every sector touched, for the unique bytes
};

struct Launch {
    std::string kernel;
    void (*call)(void**);
    void** args;
    Dim3 grid, block;
    long shared_bytes;
    Dim3 block_idx;
    int block_linear, nthreads, schedule;
    bool counting, float_atomics, aborted, progress;
    std::string fault;
    uintptr_t fault_pc;
    std::vector<Buffer> buffers;
    std::vector<SharedVar*> shared;  // the registered __shared__ variables and the dynamic one
    Counts counts;
    std::map<std::pair<uint64_t, uintptr_t>, Request> requests;  // ((warp, occurrence), pc)
    // the block's barrier
    int arrived, done_count, barrier_line, pred_count, last_pred;
    const char* barrier_file;
    long long generation;
    int epoch;
    std::vector<long long> warp_syncs;
    std::vector<WarpOp*> warp_ops;
    Context scheduler;
};

extern Launch* L;     // the launch that runs now (null outside one)
extern Thread* cur;   // the thread that runs now (null in the scheduler)
extern std::vector<Thread> threads;

[[noreturn]] void fail(uintptr_t pc, const char* format, ...);
std::string who(int thread);  // "block (b) thread (t)"
void yield();
void run_block();             // scheduler.cpp: every thread of L->block_idx's block to its end
void start_block();           // memory.cpp: shared memory poisoned, shadows reset
void end_block();             // memory.cpp: the block's requests counted
void reset_globals();         // memory.cpp: the buffers' writers forgotten (a new schedule)
bool in_stacks(uintptr_t a);
void access(uintptr_t a, size_t n, bool write, uintptr_t pc);  // memory.cpp: one load or store
void find_modules(void* self);  // memory.cpp: the data of the .so that holds `self`

}  // namespace emu
