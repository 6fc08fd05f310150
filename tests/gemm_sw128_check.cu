// Host-only check of src/phase24/gemm/cuda/sw128.cuh (v9's shared-memory layout and wgmma
// descriptors) against the PTX ISA's definitions; tests/test_gemm_sw128.py builds and runs it.
//
//   gemm_sw128_check layout BM BN BK STAGES [plant]
//       Every 16-byte chunk of every stage's tiles is written exactly once by v9's copies (each
//       thread's chunks as its load() assigns them), and every value of every wgmma operand of
//       every stage, warpgroup and 16-wide step of K lies where the copies wrote it: the address
//       the descriptor gives (decoded from its bits, the PTX ISA's canonical 128-byte-swizzled
//       layout at its start and strides, then the swizzle of the address) is the address of that
//       value in the chunk the copy wrote. Prints the bytes the stages take from the 1024-byte
//       boundary. `plant` (unswizzled, swapped, unaligned) makes a known mistake: the check
//       must then fail.
//   gemm_sw128_check desc START LBO SBO | adesc TILE M0 K0 | bdesc TILE K0 ROWS
//       Prints the descriptor in hex (the test reads its bit fields).
//   gemm_sw128_check acc N
//       The m64nN accumulator's map (thread, register) -> (row, column) is a bijection onto the
//       64 x N tile and agrees with CUTLASS's CLayout_64xN, written another way.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "sw128.cuh"

// The 128-byte swizzle as the PTX ISA defines it on a shared address: bits 4-6 XOR bits 7-9.
static uint32_t swizzled(uint32_t addr) { return addr ^ (((addr >> 7) & 7) << 4); }

struct Desc {
    uint32_t start, lbo, sbo, base, mode;
};
static Desc decode(uint64_t d) {  // PTX ISA, "Matrix Descriptor Format"
    return {uint32_t(d & 0x3FFF) << 4, uint32_t((d >> 16) & 0x3FFF) << 4,
            uint32_t((d >> 32) & 0x3FFF) << 4, uint32_t((d >> 49) & 7), uint32_t(d >> 62)};
}
// Value (r, k) of a K-major operand: ((8,m),(T,2)):((8T,SBO),(1,T)), T = 8 values (16 bytes).
static uint32_t k_major(const Desc& d, uint32_t r, uint32_t k) {
    return swizzled(d.start + (r % 8) * 128 + (r / 8) * d.sbo + (k / 8) * 16 + (k % 8) * 2);
}
// Value (k, n) of an MN-major operand: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)).
static uint32_t mn_major(const Desc& d, uint32_t k, uint32_t n) {
    return swizzled(d.start + (n % 8) * 2 + ((n / 8) % 8) * 16 + (n / 64) * d.lbo + (k % 8) * 128 +
                    (k / 8) * d.sbo);
}

static int bad = 0;
static void expect(bool ok, const char* what, int a, int b, int c, unsigned got, unsigned want) {
    if (!ok && bad++ < 5)
        printf("FAIL %s (%d, %d, %d): descriptor gives 0x%x, the copy wrote 0x%x\n", what, a, b, c,
               got, want);
}
static void swizzle_128_base_0(const Desc& d, const char* what) {  // as v9's tiles need
    if ((d.mode != 1 || d.base != 0) && bad++ < 5)
        printf("FAIL %s: swizzle mode %u, base offset %u\n", what, d.mode, d.base);
}

static int layout(int BM, int BN, int BK, int S, const char* plant) {
    const bool unswizzled = !strcmp(plant, "unswizzled"), swapped = !strcmp(plant, "swapped");
    const int NT = BM / 64 * 128, CA = BK / 8, CB = BN / 8;
    const uint32_t A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
    const uint32_t base = 1024 + (!strcmp(plant, "unaligned") ? 128 : 0);  // v9 rounds up to 1 KB
    auto a_tile = [&](int st) { return base + st * A_BYTES; };
    auto b_tile = [&](int st) { return base + S * A_BYTES + st * B_BYTES; };
    auto chunk = [&](uint32_t row, uint32_t c) {
        return unswizzled ? row * sw128::ROW + c * 16 : sw128::chunk_at(row, c);
    };
    // Where v9's load() puts each chunk: (stage, row, chunk) -> shared address, for A and for B.
    std::map<std::tuple<int, int, int>, uint32_t> wa, wb;
    std::set<uint32_t> used;
    for (int st = 0; st < S; ++st)
        for (int tid = 0; tid < NT; ++tid) {
            const int ca = tid % CA, ra = tid / CA, cb = tid % CB, rb = tid / CB;
            for (int i = 0; i < BM * CA / NT; ++i) {
                const uint32_t at = a_tile(st) + chunk(ra, ca) + i * (NT / CA) * sw128::ROW;
                wa[{st, ra + i * (NT / CA), ca}] = at;
                used.insert(at);
            }
            const uint32_t b_off = (cb / 8) * BK * sw128::ROW + chunk(rb, cb % 8);
            for (int i = 0; i < BK * CB / NT; ++i) {
                const uint32_t at = b_tile(st) + b_off + i * (NT / CB) * sw128::ROW;
                wb[{st, rb + i * (NT / CB), cb}] = at;
                used.insert(at);
            }
        }
    const uint32_t bytes = S * (A_BYTES + B_BYTES);
    const bool whole = wa.size() == size_t(S * BM * CA) && wb.size() == size_t(S * BK * CB) &&
                       used.size() * 16 == bytes && *used.begin() == base &&
                       *used.rbegin() == base + bytes - 16;
    if (!whole) printf("FAIL the copies do not write each chunk of the stages exactly once\n");
    for (int st = 0; st < S; ++st)
        for (int kk = 0; kk < BK; kk += 16) {
            for (int wg = 0; wg < BM / 64; ++wg) {
                uint64_t raw = sw128::a_desc(a_tile(st), wg * 64, kk);
                Desc d = decode(raw);
                if (swapped) std::swap(d.lbo, d.sbo);
                swizzle_128_base_0(d, "A's descriptor");
                for (int r = 0; r < 64; ++r)
                    for (int k = 0; k < 16; ++k) {
                        const int row = wg * 64 + r, col = kk + k;
                        const uint32_t want = wa[{st, row, col / 8}] + col % 8 * 2;
                        const uint32_t got = k_major(d, r, k);
                        expect(got == want, "A: stage, k step, row", st, kk, row, got, want);
                    }
            }
            Desc d = decode(sw128::b_desc(b_tile(st), kk, BK));
            if (swapped) std::swap(d.lbo, d.sbo);
            swizzle_128_base_0(d, "B's descriptor");
            for (int k = 0; k < 16; ++k)
                for (int n = 0; n < BN; ++n) {
                    const uint32_t want = wb[{st, kk + k, n / 8}] + n % 8 * 2;
                    const uint32_t got = mn_major(d, k, n);
                    expect(got == want, "B: stage, row of K, column", st, kk + k, n, got, want);
                }
        }
    if (!whole || bad) return 1;
    printf("ok %u\n", bytes);
    return 0;
}

static int acc(int N) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (uint32_t t = 0; t < 128; ++t)
        for (uint32_t i = 0; i < uint32_t(N / 2); ++i) {
            const uint32_t row = sw128::acc_row(t, i), col = sw128::acc_col(t, i);
            // CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)), column-major in 64 x N
            const uint32_t at = 128 * (t % 4) + (t / 4) % 8 + 16 * (t / 32) + 64 * (i % 2) +
                                8 * ((i / 2) % 2) + 512 * (i / 4);
            expect(row == at % 64 && col == at / 64, "accumulator: thread, register", t, i, 0,
                   row * 1000 + col, (at % 64) * 1000 + at / 64);
            seen.insert({row, col});
        }
    if (bad || seen.size() != size_t(64 * N) || seen.rbegin()->first != 63 ||
        seen.rbegin()->second != uint32_t(N - 1))
        return printf("FAIL the accumulator map of m64n%d\n", N), 1;
    return printf("ok\n"), 0;
}

int main(int argc, char** argv) {
    auto arg = [&](int i) { return uint32_t(strtoul(argv[i], nullptr, 0)); };
    const char* what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "layout") && argc >= 6)
        return layout(arg(2), arg(3), arg(4), arg(5), argc > 6 ? argv[6] : "");
    if (!strcmp(what, "acc") && argc == 3) return acc(arg(2));
    uint64_t d;
    if (!strcmp(what, "desc") && argc == 5) d = sw128::descriptor(arg(2), arg(3), arg(4));
    else if (!strcmp(what, "adesc") && argc == 5) d = sw128::a_desc(arg(2), arg(3), arg(4));
    else if (!strcmp(what, "bdesc") && argc == 5) d = sw128::b_desc(arg(2), arg(3), arg(4));
    else return fprintf(stderr, "usage: see the comment at the top of this file\n"), 2;
    printf("%016llx\n", (unsigned long long)d);
    return 0;
}
