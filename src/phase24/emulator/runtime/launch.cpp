// The C API that Python calls (emulator/kernel.py): one launch of a kernel over its grid, block
// after block, checked; with EMU_TWO_SCHEDULES, run a second time from the same starting bytes
// with blocks and threads in reverse order, and the two results compared byte for byte. The
// report is one JSON object: the first fault ({"fault": text, "pc": offset in the library}), or
// the counts of the first run.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <mutex>

#include "runtime.h"

using namespace emu;

struct EmuBuffer {  // kernel.py's Buffer
    uint64_t lo, hi, wlo, whi;
    int element;
    const char* name;
};
enum { EMU_COUNT = 1, EMU_TWO_SCHEDULES = 2 };

static bool run_grid(int schedule) {
    const long long blocks = 1LL * L->grid.x * L->grid.y * L->grid.z;
    L->schedule = schedule;
    for (long long k = 0; k < blocks && !L->aborted; ++k) {
        const long long b = schedule == 0 ? k : blocks - 1 - k;
        L->block_linear = int(b);
        L->block_idx = {unsigned(b % L->grid.x), unsigned(b / L->grid.x % L->grid.y),
                        unsigned(b / (1LL * L->grid.x * L->grid.y))};
        run_block();
    }
    return !L->aborted;
}

static std::string first_difference(const std::vector<std::vector<char>>& a) {
    for (size_t i = 0; i < L->buffers.size(); ++i) {
        const Buffer& b = L->buffers[i];
        const char* now = reinterpret_cast<const char*>(b.wlo);
        for (size_t j = 0; j < a[i].size(); ++j)
            if (a[i][j] != now[j]) {
                char text[128];
                std::snprintf(text, sizeof text, "%s[%zu]", b.name.c_str(), j / b.element);
                return text;
            }
    }
    return "";
}

static std::vector<std::vector<char>> save() {
    std::vector<std::vector<char>> bytes;
    for (const Buffer& b : L->buffers)
        bytes.emplace_back(reinterpret_cast<const char*>(b.wlo), reinterpret_cast<const char*>(b.whi));
    return bytes;
}
static void restore(const std::vector<std::vector<char>>& bytes) {
    for (size_t i = 0; i < bytes.size(); ++i)
        std::memcpy(reinterpret_cast<void*>(L->buffers[i].wlo), bytes[i].data(), bytes[i].size());
}

static std::string counts_json(const Counts& c) {
    static const char* spaces[SPACES] = {"global_load", "global_store", "shared_load",
                                         "shared_store"};
    std::string json = "{\"rows\": [";
    char text[512];
    for (const auto& [key, t] : c.rows) {  // requests, sectors or wavefronts, their ideal, bytes
        std::snprintf(text, sizeof text, "%s[\"%s\", \"%s\", %lld, %lld, %lld, %lld]",
                      json.size() > 10 ? ", " : "", spaces[key.first], key.second.c_str(),
                      t.requests, t.units, t.ideal, t.bytes);
        json += text;
    }
    std::snprintf(text, sizeof text, "], \"unique_bytes\": %lld, \"atomics\": %lld}",
                  32LL * (long long)c.sectors.size(), c.atomics);
    return json + text;
}

static std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (ch == '\n') { out += "\\n"; continue; }
        out += ch;
    }
    return out + "\"";
}

static int report(char* out, int size, const std::string& json, int code) {
    std::snprintf(out, size_t(size), "%s", json.c_str());
    return code;
}

extern "C" int emu_launch(const char* kernel, void (*call)(void**), void** args,
                          const unsigned* grid, const unsigned* block, long shared_bytes,
                          const EmuBuffer* buffers, int nbuffers, int flags, char* out, int size) {
    static std::mutex one_at_a_time;
    std::lock_guard<std::mutex> lock(one_at_a_time);
    const long long threads = 1LL * block[0] * block[1] * block[2];
    if (threads < 1 || threads > MAX_THREADS || block[2] > 64)
        return report(out, size, "{\"launch\": \"too many resources requested for the block: "
                      + std::to_string(threads) + " threads (at most 1024)\"}", 2);
    if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1 || grid[1] > 65535 || grid[2] > 65535)
        return report(out, size, "{\"launch\": \"invalid grid\"}", 2);
    if (shared_bytes < 0 || shared_bytes > SHARED_MAX)
        return report(out, size, "{\"launch\": \"too many resources requested for the block: "
                      + std::to_string(shared_bytes) + " bytes of dynamic shared memory\"}", 2);
    find_modules(reinterpret_cast<void*>(&emu_launch));
    Launch launch;
    launch.kernel = kernel, launch.call = call, launch.args = args;
    launch.grid = {grid[0], grid[1], grid[2]}, launch.block = {block[0], block[1], block[2]};
    launch.shared_bytes = shared_bytes, launch.nthreads = int(threads);
    launch.counting = flags & EMU_COUNT;
    launch.float_atomics = launch.aborted = false;
    launch.fault_pc = 0;
    for (int i = 0; i < nbuffers; ++i) {
        const EmuBuffer& b = buffers[i];
        launch.buffers.push_back({uintptr_t(b.lo), uintptr_t(b.hi), uintptr_t(b.wlo),
                                  uintptr_t(b.whi), b.name, b.element,
                                  std::vector<GlobalByte>(b.whi - b.wlo)});
    }
    L = &launch;
    const auto before = save();
    bool ok = run_grid(0);
    std::string differs;
    if (ok && (flags & EMU_TWO_SCHEDULES)) {
        const auto first = save();
        const bool counting = launch.counting;
        restore(before);
        reset_globals();
        launch.counting = false;
        ok = run_grid(1);
        launch.counting = counting;
        if (ok) differs = first_difference(first);
        if (!differs.empty() && launch.float_atomics) differs.clear(), restore(first);
    }
    L = nullptr;
    if (!ok) {
        Dl_info info{};
        uintptr_t pc = launch.fault_pc;
        if (pc && dladdr(reinterpret_cast<void*>(pc), &info)) pc -= uintptr_t(info.dli_fbase);
        return report(out, size, "{\"fault\": " + quoted(launch.fault) + ", \"pc\": " +
                      std::to_string(pc) + "}", 1);
    }
    if (!differs.empty())
        return report(out, size, "{\"fault\": " + quoted(launch.kernel + ": " + differs +
                      " differs between two orders of the threads (in order, and reversed): the "
                      "result depends on which thread runs first (a missing __syncthreads()?)") +
                      ", \"pc\": 0}", 1);
    return report(out, size, counts_json(launch.counts), 0);
}
