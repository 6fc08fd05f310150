"""The CUDA C emulator (src/phase24/emulator/) on small kernels: each defect class it exists to
catch, planted in a kernel that is otherwise right, is reported in one line naming the kernel,
the block, the thread, the element and the source line; what it cannot run is refused in one
line; and its counts are those a learner can work out by hand. scripts/planted_bugs.py turns
each detector off in turn and sees its test here fail."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from phase24.emulator import CompileError, EmulatorFault, build

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (a host compiler)")

HEAD = "#include <math_constants.h>\n"


def kernel(tmp_path: Path, body: str, name: str = "k", file: str = "mine.cu"):
    path = tmp_path / file
    path.write_text(HEAD + body)
    return build(path).kernel(name)


def fault(k, *launch, **kw) -> str:
    with pytest.raises(EmulatorFault) as err:
        k.launch(*launch, **kw)
    text = str(err.value)
    assert "\n" not in text, text
    return text


# ---- what it runs -------------------------------------------------------------------------------

def test_a_block_reduction_with_3d_indices_vectors_and_halves_computes_what_the_cpu_does(tmp_path):
    k = kernel(tmp_path, """
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void k(const float* x, float* y, __half* h, __nv_bfloat16* b, int n) {
    __shared__ float part[4][8];
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int block = blockIdx.x + gridDim.x * blockIdx.y;
    const float4 v = reinterpret_cast<const float4*>(x)[block * 32 + t];
    part[t / 8][t % 8] = v.x + v.y + v.z + v.w;
    __syncthreads();
    if (t == 0) {
        float s = 0.f;
        for (int i = 0; i < 32; ++i) s += part[i / 8][i % 8];
        y[block] = s;
        h[block] = __float2half(s);
        b[block] = __float2bfloat16(s);
    }
}""")
    x = torch.randn(6 * 128)
    y, h, b = torch.empty(6), torch.empty(6, dtype=torch.float16), torch.empty(6, dtype=torch.bfloat16)
    k.launch((3, 2), (4, 2, 4), x, y, h, b, np.int32(6))
    want = x.view(6, 128).sum(1)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(h, y.half()) and torch.equal(b, y.bfloat16())


def test_warp_shuffles_votes_atomics_and_syncthreads_count(tmp_path):
    k = kernel(tmp_path, """
extern "C" __global__ void k(const int* x, int* out) {
    const int lane = threadIdx.x % 32, v = x[threadIdx.x];
    int s = v;
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    const unsigned odd = __ballot_sync(0xffffffffu, v & 1);
    const int up = __shfl_up_sync(0xffffffffu, v, 1), down = __shfl_down_sync(0xffffffffu, v, 1);
    const int positive = __syncthreads_count(v > 0);
    __shared__ int total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    atomicAdd(&total, v);
    __syncthreads();
    if (lane == 0) {
        out[4 * (threadIdx.x / 32)] = s;
        out[4 * (threadIdx.x / 32) + 1] = (int)odd;
        out[4 * (threadIdx.x / 32) + 2] = up + down;
    }
    if (threadIdx.x == 0) atomicAdd(&out[8], total + 1000 * positive);
}""")
    x = torch.randint(-50, 50, (64,), dtype=torch.int32)
    out = torch.zeros(9, dtype=torch.int32)
    k.launch(1, 64, x, out)
    for w in range(2):
        lanes = x[32 * w:32 * w + 32]
        odd = sum(1 << i for i in range(32) if lanes[i] & 1)
        assert out[4 * w] == lanes.sum() and out[4 * w + 1] == np.int32(np.uint32(odd))
        assert out[4 * w + 2] == lanes[0] + lanes[1]  # lane 0: its own value up, lane 1's down
    assert out[8] == x.sum() + 1000 * (x > 0).sum()


def test_what_needs_a_gpu_is_refused_in_one_line(tmp_path):
    for body, said in [
        ('extern "C" __global__ void k(float* y) { asm volatile("mma.sync.aligned.m16n8k16;"); }',
         "inline PTX `mma.sync.aligned.m16n8k16;` (mine.cu:2) is not emulated: it needs a GPU"),
        ('extern "C" __global__ void __cluster_dims__(2, 1, 1) k(float* y) {}',
         "thread-block clusters (mine.cu:2): not emulated, it needs a GPU"),
        ('#include <mma.h>\nextern "C" __global__ void k(float* y) { nvcuda::wmma::x; }',
         "mma.h"),
    ]:
        with pytest.raises(CompileError) as err:
            kernel(tmp_path, body)
        assert said in str(err.value), err.value


def test_a_known_ptx_instruction_is_computed(tmp_path):
    k = kernel(tmp_path, """
extern "C" __global__ void k(const float* x, float* y) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x[threadIdx.x]));
    y[threadIdx.x] = r;
}""")
    x, y = torch.randn(32), torch.empty(32)
    k.launch(1, 32, x, y)
    torch.testing.assert_close(y, torch.exp2(x))


# ---- what a learner gets wrong, one line each ---------------------------------------------------

TREE = """
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float buf[64];
    const int t = threadIdx.x;
    buf[t] = x[t];
    __syncthreads();
    for (int half = 32; half > 0; half /= 2) {
        if (t < half) buf[t] += buf[t + half];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = buf[0];
}"""


def test_the_tree_reduction_is_right_and_without_its_barriers_is_a_race(tmp_path):
    x, y = torch.randn(64), torch.empty(1)
    kernel(tmp_path, TREE).launch(1, 64, x, y)
    torch.testing.assert_close(y[0], x.sum())
    racy = kernel(tmp_path, TREE.replace("        __syncthreads();\n    }", "    }"), file="racy.cu")
    said = fault(racy, 1, 64, x, y)
    assert said.startswith("k, block (0,0,0) thread (") and "(shared) that block (0,0,0) thread (" \
        in said and said.endswith("with no barrier between: a race (racy.cu:9)"), said


def test_a_result_that_depends_on_the_order_of_the_threads_is_caught(tmp_path):
    """No shared memory, no second writer: thread t reads what thread t - 1 wrote to y without
    a barrier. In order it sees the new value, reversed the old one."""
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    const int t = threadIdx.x;
    y[t] = t;
    if (t > 0) y[32 + t] = y[t - 1];
}""")
    said = fault(k, 1, 32, torch.zeros(64))
    assert said.startswith("k: y[") and "differs between two orders of the threads (in order, " \
        "and reversed)" in said, said


def test_two_blocks_writing_one_element_are_named(tmp_path):
    k = kernel(tmp_path, 'extern "C" __global__ void k(float* y) { y[threadIdx.x / 2] = 1.f; }')
    said = fault(k, 1, 4, torch.zeros(2))
    assert said == "k, block (0,0,0) thread (1,0,0) writes y[0], which block (0,0,0) thread " \
        "(0,0,0) also writes: two writers of one element (mine.cu:2)", said
    k = kernel(tmp_path, 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }',
               file="blocks.cu")
    said = fault(k, 2, 4, torch.zeros(4))
    assert said == "k, block (1,0,0) thread (0,0,0) writes y[0], which another block also " \
        "writes: two writers of one element (blocks.cu:2)", said


def test_out_of_bounds_on_a_buffer_and_on_a_shared_array_are_named(tmp_path):
    k = kernel(tmp_path, 'extern "C" __global__ void k(const float* x, float* y) '
                         "{ y[threadIdx.x] = x[threadIdx.x + 1]; }")
    guarded = torch.zeros(40)  # x, then a guard region: storage, but not x's
    said = fault(k, 1, 32, guarded[:32], torch.zeros(32))
    assert said == "k, block (0,0,0) thread (31,0,0) reads x[32], past the end of x (32 elements)" \
        ": out of bounds (mine.cu:2)", said
    k = kernel(tmp_path, 'extern "C" __global__ void k(float* y) { y[(int)threadIdx.x - 1] = 0.f; }',
               file="before.cu")
    said = fault(k, 1, 8, guarded[8:16])
    assert said == "k, block (0,0,0) thread (0,0,0) writes y[-1], before the start of y " \
        "(8 elements): out of bounds (before.cu:2)", said
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    __shared__ float tile[4][8];
    tile[threadIdx.x / 8][threadIdx.x % 8] = 1.f;
    __syncthreads();
    y[threadIdx.x] = tile[0][threadIdx.x];
}""", file="shared.cu")
    said = fault(k, 1, 33, torch.zeros(33))
    assert said == "k, block (0,0,0) thread (32,0,0) writes 4 bytes at tile[4][0] (shared, 128 " \
        "bytes): out of bounds (shared.cu:5)", said


def test_a_read_of_shared_memory_no_thread_wrote_is_named(tmp_path):
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    __shared__ float buf[64];
    if (threadIdx.x < 32) buf[threadIdx.x] = 1.f;
    __syncthreads();
    y[threadIdx.x] = buf[threadIdx.x];
}""")
    said = fault(k, 1, 64, torch.zeros(64))  # thread 63, the last to arrive, goes on first
    assert said == "k, block (0,0,0) thread (63,0,0) reads buf[63] (shared), which no thread of " \
        "its block has written (mine.cu:7)", said


def test_a_barrier_some_threads_never_reach_is_reported_not_a_hang(tmp_path):
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    if (threadIdx.x >= 16) return;
    __syncthreads();
    y[threadIdx.x] = 1.f;
}""")
    said = fault(k, 1, 32, torch.zeros(32))
    assert said == "k, block (0,0,0) thread (16,0,0) returned while other threads of its block " \
        "wait at __syncthreads() (mine.cu:5): a barrier every thread must reach", said


def test_a_shuffle_whose_mask_leaves_out_a_thread_that_takes_part_is_named(tmp_path):
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    y[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, 1.f * threadIdx.x, 1);
}""")
    said = fault(k, 1, 32, torch.zeros(32))
    assert said == "k, block (0,0,0) thread (16,0,0) calls __shfl*_sync (mine.cu:4) with mask " \
        "0x0000ffff, which leaves out its own lane 16", said
    k = kernel(tmp_path, """
extern "C" __global__ void k(float* y) {
    if (threadIdx.x < 16) y[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, 1.f, 16);
}""", file="reads.cu")
    said = fault(k, 1, 32, torch.zeros(32))  # lane 15, the last to arrive, reads lane 15 ^ 16
    assert said == "k, block (0,0,0) thread (15,0,0): __shfl*_sync (reads.cu:4) reads lane 31, " \
        "which its mask 0x0000ffff leaves out", said


def test_a_launch_the_gpu_would_refuse_is_refused(tmp_path):
    k = kernel(tmp_path, 'extern "C" __global__ void k(float* y) {}')
    assert "too many resources requested for the block: 2048 threads" in fault(
        k, 1, 2048, torch.zeros(1))


# ---- counts -------------------------------------------------------------------------------------

def test_sectors_per_request_of_rows_and_columns_and_wavefronts_with_and_without_padding(tmp_path):
    body = """
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float tile[32][32 + PAD];
    const int t = threadIdx.x;
    tile[t][0] = x[t * 32];     // a column of x: 32 sectors; down a column of the tile
    tile[0][t] = x[t];          // a row of x: 4 sectors; along a row of the tile
    __syncthreads();
    y[t] = tile[t][0] + tile[0][t];
}"""
    x, y = torch.randn(1024), torch.empty(32)
    rows = {}
    for pad in (0, 1):
        counts = kernel(tmp_path, f"#define PAD {pad}\n" + body, file=f"pad{pad}.cu").launch(
            1, 32, x, y, counts=True)
        rows[pad] = {(r[0], r[1]): r[2:] for r in counts["rows"]}
    loads = rows[0][("global_load", "x")]
    assert loads == [2, 32 + 4, 4 + 4, 2 * 128]  # requests, sectors, the ideal, bytes
    assert rows[0][("shared_store", "tile")][:2] == [2, 32 + 1]  # 32 wavefronts for the column
    assert rows[1][("shared_store", "tile")][:2] == [2, 1 + 1]   # padded: one
    assert rows[0][("global_store", "y")] == [1, 4, 4, 128]


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a GPU runs CUDA C")
def test_doctor_says_how_cuda_c_runs_here_and_what_installs_the_compiler(monkeypatch):
    """Without a GPU, doctor names the emulator's compiler and says CUDA C runs emulated; without
    a compiler it names the package that installs one."""
    import importlib

    from phase24 import doctor

    emulator_build = importlib.import_module("phase24.emulator.build")

    rows = dict(doctor.report(check_ncu=False))
    assert rows["host C++ compiler (emulator)"].startswith("g++")
    assert rows["run CUDA C kernels"].startswith("emulated on the CPU")
    monkeypatch.setattr(emulator_build, "compiler", lambda: None)
    rows = dict(doctor.report(check_ncu=False))
    assert "install g++" in rows["host C++ compiler (emulator)"]
    assert rows["run CUDA C kernels"].startswith("NO: needs an NVIDIA GPU, or a host C++")
