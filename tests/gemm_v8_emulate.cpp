// v8's kernel (src/phase24/gemm/cuda/v8_mma.cu) run on the CPU: a host emulation of the few GPU
// instructions it uses, so that its index arithmetic, its swizzle, its bound checks and its
// pipeline of cp.async groups are checked where there is no GPU. tests/test_gemm_v8_emulated.py
// copies the kernel's text (between its --8<-- markers) into kernel.inc, with each
// `asm volatile` of cp.async's groups turned into a call of the functions below, and builds this
// file with g++ (-I that folder and src/phase24/gemm/cuda).
//
// Each thread of a block is a coroutine (ucontext) with its own stack, and the block's threads
// take turns on one host thread: __syncthreads is a barrier of the block's threads, and ldmatrix
// and mma.sync, which a warp runs together, a barrier of its 32 threads on either side of an
// exchange through memory, with the fragment layouts of the PTX ISA ("Matrix Fragments for
// mma.m16n8k16", "Warp-level matrix load instruction: ldmatrix"). Threads that all wait and
// never meet are reported, not left to hang. A cp.async is queued in its thread's open group and
// made only when a cp.async.wait_group lets its group complete, the latest the hardware may make
// it, so a wait that lets too few groups complete reads what was in shared memory before: a
// poison of NaNs. Every copy and ldmatrix is checked against the bounds of its buffer (C lies
// between sentinels that a store past it overwrites), and every ldmatrix and landing copy against
// the races below. Values are small integers, exact in bfloat16 and in float32 sums, so C must
// equal the reference rounded once to bfloat16, element for element.
//
//   gemm_v8_emulate CONFIG M N K   (CONFIG: an index into configs.inc, which lists v8's tuples)
// prints "ok" (exit 0) or the first wrong element or bad access (exit 1).
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n)

struct Index { unsigned x; };
struct Copy { uint32_t dst; const unsigned char* src; bool full; long long issued; };
struct Thread {  // one thread of the block: its index, its stack, its cp.async groups
    Index idx;
    ucontext_t context;
    std::vector<char> stack;
    std::vector<Copy> open_group;
    std::vector<std::vector<Copy>> committed;
    bool done = false;
};
static Thread* current;  // the thread that runs now
static Index blockIdx;
#define threadIdx (current->idx)

struct bf16 { uint16_t bits; };  // T: bfloat16, as the kernel's arithmetic needs only its size

static float to_float(bf16 v) {
    uint32_t u = uint32_t(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
template <typename T> T from_float(float v);
template <> bf16 from_float<bf16>(float v) {  // round to nearest even (values here are finite)
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return bf16{uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16)};
}
static uint32_t pack2(float x, float y, bf16*) {
    return from_float<bf16>(x).bits | uint32_t(from_float<bf16>(y).bits) << 16;
}

[[noreturn]] static void fail(const char* what, long long at) {
    std::printf("FAIL %s (%lld)\n", what, at);
    std::fflush(stdout);
    std::_Exit(1);
}

// Shared memory: one block at a time, poisoned with 0xFF bytes (bfloat16 NaNs) before each.
constexpr int SMEM_MAX = 228 * 1024;
unsigned char smem[SMEM_MAX];
static int smem_used;  // the launch's dynamic shared memory: every access must fall below it
static uint32_t shared_address(const void* p) {
    return uint32_t(static_cast<const unsigned char*>(p) - smem);
}
static unsigned char* shared_at(uint32_t addr, int bytes) {
    if (addr % 16 != 0 || int(addr) + bytes > smem_used) fail("shared access out of bounds", addr);
    return smem + addr;
}

// Taking turns: a thread that waits goes back to the scheduler, which runs the next one.
static ucontext_t scheduler;
static long long idle_turns;  // turns since a barrier last opened: past every thread's, a hang
struct Barrier {
    int count, arrived = 0;
    long long opened = 0;  // how many times it has opened
    void meet() {
        const long long mine = opened;
        if (++arrived == count) {
            arrived = 0, ++opened, idle_turns = 0;
            return;
        }
        while (opened == mine) swapcontext(&current->context, &scheduler);
    }
};
static Barrier* block_barrier;
static void __syncthreads() { block_barrier->meet(); }

// Races on shared memory, between __syncthreads (an epoch: how often the block's barrier has
// opened): an ldmatrix of a 16-byte chunk that a copy wrote in the same epoch (no barrier made it
// visible), and a copy that lands on a chunk another warp read since the copy was issued.
constexpr int CHUNKS = SMEM_MAX / 16;
static long long written_in[CHUNKS], read_in[32][CHUNKS];
static void reset_races() {
    for (auto& e : written_in) e = -1;
    for (auto& w : read_in)
        for (auto& e : w) e = -1;
}
static void note_read(uint32_t addr) {
    shared_at(addr, 16);
    const long long now = block_barrier->opened;
    if (written_in[addr / 16] == now)
        fail("ldmatrix reads a copy no barrier has made visible", addr);
    read_in[threadIdx.x / 32][addr / 16] = now;
}
static void note_write(uint32_t addr, long long issued) {
    for (int w = 0; w < 32; ++w)
        if (w != int(threadIdx.x / 32) && read_in[w][addr / 16] >= issued)
            fail("a copy lands on a chunk another warp read after it was issued", addr);
    written_in[addr / 16] = block_barrier->opened;
}

// The operands' allocations, for the bound checks of the copies.
static const unsigned char *a_lo, *a_hi, *b_lo, *b_hi;

// cp.async: queued in the thread's open group; committed groups complete at a wait.
static void make(const Copy& c) {
    unsigned char* d = shared_at(c.dst, 16);
    note_write(c.dst, c.issued);
    if (!c.full) { std::memset(d, 0, 16); return; }
    const bool in_a = c.src >= a_lo && c.src + 16 <= a_hi;
    const bool in_b = c.src >= b_lo && c.src + 16 <= b_hi;
    if (!in_a && !in_b) fail("cp.async reads outside A and B", 0);
    std::memcpy(d, c.src, 16);
}
static void copy16(uint32_t dst, const void* src, bool full) {
    current->open_group.push_back({dst, static_cast<const unsigned char*>(src), full,
                                   block_barrier->opened});
}
static void emu_commit_group() {
    current->committed.push_back(current->open_group);
    current->open_group.clear();
}
static void emu_wait_group(int pending) {
    auto& groups = current->committed;
    while (int(groups.size()) > pending) {
        for (const Copy& c : groups.front()) make(c);
        groups.erase(groups.begin());
    }
}

// Warp-wide instructions: each lane posts its operands, the warp meets, each lane computes its
// own result from every lane's operands, the warp meets again (the posts may then be reused).
struct WarpPost { uint32_t addr; uint32_t a[4]; uint32_t b[2]; };
static WarpPost posts[32][32];
static Barrier* warp_barrier[32];
static void warp_meet() { warp_barrier[threadIdx.x / 32]->meet(); }
static uint16_t half_of(uint32_t r, int h) { return uint16_t(h ? r >> 16 : r & 0xFFFF); }

// ldmatrix.m8n8.x4.b16: lanes 8i .. 8i + 7 give the rows of matrix i (16 bytes each); lane l
// receives, of matrix i, row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (.trans: the transpose's).
static void ldmatrix(uint32_t (&r)[4], uint32_t p, bool trans) {
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    posts[w][l].addr = p;
    note_read(p);  // this lane's row
    warp_meet();
    for (int i = 0; i < 4; ++i) {
        uint16_t v[2];
        for (int h = 0; h < 2; ++h) {
            const int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
            std::memcpy(&v[h], shared_at(posts[w][8 * i + row].addr, 16) + 2 * col, 2);
        }
        r[i] = v[0] | uint32_t(v[1]) << 16;
    }
    warp_meet();
}
static void ldmatrix_x4(uint32_t (&r)[4], uint32_t p) { ldmatrix(r, p, false); }
static void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t p) { ldmatrix(r, p, true); }

// mma.m16n8k16.row.col, float32 sums. With g = l / 4, t = l % 4: a0 holds A[g][2t, 2t + 1], a1
// A[g + 8][..], a2 A[g][2t + 8, 2t + 9], a3 A[g + 8][2t + 8, ..]; b0 B[2t, 2t + 1][g], b1
// B[2t + 8, 2t + 9][g]; d0, d1 D[g][2t, 2t + 1], d2, d3 D[g + 8][..].
template <typename T>
static void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    std::memcpy(posts[w][l].a, a, 16);
    posts[w][l].b[0] = b0, posts[w][l].b[1] = b1;
    warp_meet();
    auto A = [&](int row, int k) {
        const WarpPost& p = posts[w][(row % 8) * 4 + (k % 8) / 2];
        return to_float(bf16{half_of(p.a[(row >= 8) + 2 * (k >= 8)], k % 2)});
    };
    auto B = [&](int k, int col) {
        const WarpPost& p = posts[w][col * 4 + (k % 8) / 2];
        return to_float(bf16{half_of(p.b[k >= 8], k % 2)});
    };
    for (int e = 0; e < 4; ++e) {
        const int row = l / 4 + 8 * (e / 2), col = 2 * (l % 4) + e % 2;
        for (int k = 0; k < 16; ++k) d[e] += A(row, k) * B(k, col);
    }
    warp_meet();
}

#include "block_tile.cuh"  // src/phase24/gemm/cuda/
#include "kernel.inc"      // swizzled and mma_gemm, from v8_mma.cu

static std::function<void()> body;  // the kernel call each thread of the block starts with
static void start() {
    body();
    if (!current->open_group.empty() || !current->committed.empty())
        fail("copies left pending", current->idx.x);
    current->done = true;
}

template <int BM, int BN, int BK, int WM, int WN, int S, int G>
static void launch(const bf16* a, const bf16* b, bf16* c, int M, int N, int K) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    smem_used = S * (BM + BN) * BK * 2;
    body = [=] { mma_gemm<bf16, BM, BN, BK, WM, WN, S, G>(a, b, c, M, N, K); };
    const long long blocks = ((M + BM - 1LL) / BM) * ((N + BN - 1LL) / BN);
    for (long long i = 0; i < blocks; ++i) {
        std::memset(smem, 0xFF, sizeof smem);
        reset_races();
        blockIdx.x = unsigned(i);
        Barrier block{NT};
        std::vector<Barrier> warps(NT / 32, Barrier{32});
        block_barrier = &block;
        for (int w = 0; w < NT / 32; ++w) warp_barrier[w] = &warps[w];
        std::vector<Thread> threads(NT);
        for (int t = 0; t < NT; ++t) {
            Thread& th = threads[t];
            th.idx.x = t;
            th.stack.resize(256 * 1024);
            getcontext(&th.context);
            th.context.uc_stack = {th.stack.data(), 0, th.stack.size()};
            th.context.uc_link = &scheduler;
            makecontext(&th.context, start, 0);
        }
        idle_turns = 0;
        for (int left = NT; left > 0;) {
            left = 0;
            for (Thread& th : threads) {
                if (th.done) continue;
                current = &th;
                swapcontext(&scheduler, &th.context);
                left += !th.done;
                if (++idle_turns > 4 * NT) fail("threads wait at barriers that never open", i);
            }
        }
    }
}

using Launch = void (*)(const bf16*, const bf16*, bf16*, int, int, int);
#define CONFIG(BM, BN, BK, WM, WN, S, G) launch<BM, BN, BK, WM, WN, S, G>,
static const Launch CONFIGS[] = {
#include "configs.inc"
};

int main(int argc, char** argv) {
    if (argc != 5) return std::puts("usage: gemm_v8_emulate CONFIG M N K"), 2;
    const int config = std::atoi(argv[1]), M = std::atoi(argv[2]), N = std::atoi(argv[3]),
              K = std::atoi(argv[4]);
    if (config < 0 || config >= int(sizeof CONFIGS / sizeof *CONFIGS))
        return std::puts("no such configuration"), 2;
    constexpr int GUARD = 64;  // elements of sentinels on either side of C
    std::vector<bf16> a(size_t(M) * K), b(size_t(K) * N);
    std::vector<bf16> c(size_t(M) * N + 2 * GUARD, bf16{0x7FC1});
    uint32_t seed = 12345u + M * 31u + N * 17u + K;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u, int(seed >> 24) % 9 - 4; };
    for (auto& v : a) v = from_float<bf16>(float(next()));
    for (auto& v : b) v = from_float<bf16>(float(next()));
    a_lo = reinterpret_cast<const unsigned char*>(a.data()), a_hi = a_lo + a.size() * 2;
    b_lo = reinterpret_cast<const unsigned char*>(b.data()), b_hi = b_lo + b.size() * 2;
    CONFIGS[config](a.data(), b.data(), c.data() + GUARD, M, N, K);
    for (int g = 0; g < GUARD; ++g)
        if (c[g].bits != 0x7FC1 || c[c.size() - 1 - g].bits != 0x7FC1) fail("store outside C", g);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            long long want = 0;
            for (int k = 0; k < K; ++k)
                want += (long long)to_float(a[size_t(i) * K + k]) *
                        (long long)to_float(b[size_t(k) * N + j]);
            const bf16 got = c[GUARD + size_t(i) * N + j], exp = from_float<bf16>(float(want));
            if (got.bits != exp.bits) {
                std::printf("FAIL C[%d][%d] = %g, want %g\n", i, j, to_float(got), to_float(exp));
                return 1;
            }
        }
    std::puts("ok");
}
