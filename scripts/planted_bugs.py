"""Plant each bug a test is meant to catch, run that test, and see it fail.

    python scripts/planted_bugs.py [--gpu] [--only NAME ...] [--list] [--timeout S] [--jobs N]

Each entry below changes one line of the package (the text must appear exactly once, so the
list cannot silently drift from the code), in a copy of the tree under a temporary folder, and
runs the named tests against that copy. A bug is "caught" when the tests fail; "MISSED" when
they pass, which is a defect of the tests. Without --gpu only the entries the CPU can show run
(the Triton interpreter); with --gpu, the GPU entries. Exit status 1 if any bug was missed.
--jobs N runs N entries at once, each in its own copy; the entries whose tests are Triton's
calling situations (tests/test_triton_gpu.py: residency, deadlines, timing bounds, which other
processes on the GPU would disturb) then run one at a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LADDER = "src/phase24/softmax/triton"
GPU_TESTS = "tests/test_triton_gpu.py"
CPU_TESTS = "tests/test_triton_ladder.py"
DEVICES_TESTS = "tests/test_cuda_devices_gpu.py"
GEMM_SITUATIONS = "tests/test_gemm_situations_gpu.py"


@dataclasses.dataclass(frozen=True)
class Bug:
    name: str
    what: str     # the mistake, in words
    path: str     # file, relative to the root
    old: str      # text replaced (exactly once)
    new: str
    tests: tuple  # pytest node ids that must fail
    gpu: bool


BUGS = [
    # ---- seen by the interpreter (CPU) ----
    Bug("v0-scale-before-max", "exp(x) / sum, without subtracting the maximum",
        f"{LADDER}/v0_naive.py", "e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)",
        "e = tl.exp2(x * LOG2E)", (f"{CPU_TESTS}::test_special_values[torch.float32-naive]",),
        False),
    Bug("v2-no-rescale", "partial sums added without rescaling to the row's maximum",
        f"{LADDER}/v2_split.py", "+ tl.sum(ps * tl.exp2((pm - safe) * LOG2E), axis=0)",
        "+ tl.sum(ps, axis=0)", (f"{CPU_TESTS}::test_paths_match_float64[torch.float32-v2-steps]",),
        False),
    Bug("v2-chunk-of-minus-inf", "a chunk of -inf reduced against its own max (NaN)",
        f"{LADDER}/v2_split.py", 'm_safe = tl.where(m == float("-inf"), 0.0, m)  #',
        "m_safe = m  #", (f"{CPU_TESTS}::test_special_values[torch.float32-v2-steps]",), False),
    Bug("v3-kept-weight", "the kept chunk weighed by 0 instead of its true maximum",
        f"{LADDER}/v3_lagged.py", "scale = tl.exp2((kept_max - m_row) * LOG2E) / s_row",
        "scale = tl.exp2((0.0 - m_row) * LOG2E) / s_row",
        (f"{CPU_TESTS}::test_paths_match_float64[torch.float32-v3-two]",), False),
    Bug("replay-stale-offset", "a replayed launch takes the tensor's start, not its view's",
        "src/phase24/bridge/driver_launch.py", "value.value = addresses[which] + offset",
        "value.value = addresses[which]",
        ("tests/test_bridge_replay.py::test_the_choice_runs_once_and_the_launches_take_the_new_addresses",),
        False),
    Bug("replay-key-without-alignment", "a row 4 bytes off a 16-byte boundary replays an aligned "
        "row's launches", "src/phase24/bridge/replay.py", ", t.data_ptr() % 16)", ")",
        ("tests/test_bridge_replay.py::test_another_shape_stride_dtype_or_alignment_decides_again",),
        False),
    Bug("triton-replay-key-without-alignment", "a Triton rung replays an aligned row's decision "
        "for a row off its 16-byte boundary", f"{LADDER}/common.py",
        "            x2d.data_ptr() % 16, out.data_ptr() % 16)", "            )",
        (f"{CPU_TESTS}::test_decided_once_per_key",), False),
    Bug("minigpt-gelu-constant", "the NumPy model's GELU constant off in its fourth digit",
        "src/phase24/minigpt/numpy_model.py", "    c = GELU_C\n", "    c = 0.0447\n",
        ("tests/test_minigpt_parity.py::test_step1_logits_and_gradients",), False),
    # ---- the CUDA C emulator's detectors, each turned off (CPU) ----
    Bug("emulator-one-schedule", "each block run in one order only: no second schedule to compare",
        "src/phase24/emulator/runtime/launch.cpp", "if (ok && (flags & EMU_TWO_SCHEDULES)) {", "if (false) {",
        ("tests/test_emulator.py::test_a_result_that_depends_on_the_order_of_the_threads_is_caught",), False),
    Bug("emulator-no-shared-race", "every earlier access to a shared byte taken as ordered (no "
        "race seen)", "src/phase24/emulator/runtime/memory.cpp",
        "    if (a.thread < 0 || a.thread == cur->id", "    return true;\n    if (a.thread < 0 || a.thread == cur->id",
        ("tests/test_emulator.py::test_the_tree_reduction_is_right_and_without_its_barriers_is_a_race",), False),
    Bug("emulator-no-second-writer", "two writers of one global element let through",
        "src/phase24/emulator/runtime/memory.cpp", "if (!g.atomic && (other_block || same_epoch))", "if (false)",
        ("tests/test_emulator.py::test_two_blocks_writing_one_element_are_named",), False),
    Bug("emulator-buffer-bounds", "reads up to 64 bytes past a buffer's view let through",
        "src/phase24/emulator/runtime/memory.cpp", "(a >= b.lo && a + n <= b.hi))", "(a >= b.lo && a + n <= b.hi + 64))",
        ("tests/test_emulator.py::test_out_of_bounds_on_a_buffer_and_on_a_shared_array_are_named",), False),
    Bug("emulator-shared-bounds", "a step past a __shared__ array's end let through (its guard)",
        "src/phase24/emulator/runtime/memory.cpp", "if (a + n > v->hi && a < v->hi + GUARD) out_of_bounds(a, n, write, pc);",
        "(void)v;", ("tests/test_emulator.py::test_out_of_bounds_on_a_buffer_and_on_a_shared_array_are_named",), False),
    Bug("emulator-no-poison", "a read of shared memory no thread wrote let through",
        "src/phase24/emulator/runtime/memory.cpp", "            if (!b.written)\n", "            if (false)\n",
        ("tests/test_emulator.py::test_a_read_of_shared_memory_no_thread_wrote_is_named",), False),
    Bug("emulator-barrier-left", "a thread that returns while others wait at a barrier let through",
        "src/phase24/emulator/runtime/scheduler.cpp", "    if (L->arrived > 0)\n", "    if (false)\n",
        ("tests/test_emulator.py::test_a_barrier_some_threads_never_reach_is_reported_not_a_hang",), False),
    Bug("emulator-shuffle-mask", "a shuffle mask that leaves out the caller let through",
        "src/phase24/emulator/runtime/scheduler.cpp", "    if (!(mask >> lane & 1))\n", "    if (false)\n",
        ("tests/test_emulator.py::test_a_shuffle_whose_mask_leaves_out_a_thread_that_takes_part_is_named",), False),
    # ---- seen only on a GPU ----
    Bug("v3-parity-constant", "every launch writes its words with the same parity",
        f"{LADDER}/v3_lagged.py", "return ((tl.load(ws_ptr) + 1) & 1) << 31",
        "return (tl.load(ws_ptr) * 0 + 1) << 31",
        (f"{GPU_TESTS}::test_gpu_two_host_threads_one_stream[triton-v3]",), True),
    Bug("scratch-shared-by-streams", "one exchange buffer for every stream",
        f"{LADDER}/common.py",
        "key = (index, current_stream(index), words)",
        "key = (index, words)",
        (f"{CPU_TESTS}::test_exchange_words_one_buffer_per_stream",
         f"{GPU_TESTS}::test_gpu_several_streams[triton-v3]"), True),
    Bug("scratch-kept-under-capture", "a graph bakes in a kept buffer, shared with other graphs",
        f"{LADDER}/common.py", ' or torch.cuda.is_current_stream_capturing():', ":",
        (f"{CPU_TESTS}::test_exchange_words_one_buffer_per_stream",
         f"{GPU_TESTS}::test_gpu_two_graphs_replayed_concurrently[triton-v3]"), True),
    Bug("v3-waits-beyond-two-steps", "rows spanning more steps than resident programs wait",
        f"{LADDER}/v3_lagged.py", "if s - 1 > grid:", "if False:",
        (f"{GPU_TESTS}::test_gpu_small_gpu[triton-v3]",), True),
    Bug("v3-grid-beyond-resident", "a cooperative grid larger than the GPU holds",
        f"{LADDER}/v3_lagged.py", "grid = min(total, per_sm * common.num_sms(x2d.device))",
        "grid = min(total, (per_sm + 1) * common.num_sms(x2d.device))",
        (f"{GPU_TESTS}::test_gpu_busy_gpu[triton-v3]",), True),
    Bug("v2-biased-sum", "rows of 1M values and more (v2) off by one part in a million",
        f"{LADDER}/v2_split.py", "y = tl.exp2((x - m_row) * LOG2E) * (1.0 / s_row)",
        "y = tl.exp2((x - m_row) * LOG2E) * (1.000001 / s_row)",
        (f"{GPU_TESTS}::test_gpu_accuracy_stays_flat_as_rows_grow",), True),
    Bug("v3-no-trap", "a wait past the deadline spins on instead of trapping",
        f"{LADDER}/v3_lagged.py", "@p trap; mov.u32", "mov.u32",
        (f"{GPU_TESTS}::test_gpu_a_wait_that_cannot_end_stops_with_an_error",), True),
    Bug("v4-no-rescale", "the ring's partials combined without rescaling",
        f"{LADDER}/v4_ring.py", "return m_all, gl.sum(s * gl.exp2((m - m_safe) * LOG2E), axis=0)",
        "return m_all, gl.sum(s, axis=0)",
        (f"{GPU_TESTS}::test_gpu_every_rung_and_configuration[torch.float32]",), True),
    Bug("bridge-default-stream", "CUDA launches go on the default stream, not the current one",
        "src/phase24/bridge/launch.py",
        "handle = torch._C._cuda_getCurrentRawStream(index)  # torch.cuda.current_stream's handle",
        "handle = 0", (f"{DEVICES_TESTS}::test_the_launch_waits_on_the_tensors_current_stream",),
        True),
    Bug("bridge-portable-ignored", "PHASE24_PORTABLE=1 does not select the portable PTX",
        "src/phase24/bridge/nvcc.py", 'if exact in ARCHS and os.environ.get("PHASE24_PORTABLE") != "1":',
        "if exact in ARCHS:", (f"{DEVICES_TESTS}::test_the_portable_ptx_runs_every_rung",), True),
    Bug("v5-chunk-of-minus-inf", "a chunk of -inf reduced against its own max (NaN)",
        f"{LADDER}/v5_whole_row.py", 'm_safe = gl.where(m_new == float("-inf"), 0.0, m_new)',
        "m_safe = m_new", (f"{GPU_TESTS}::test_gpu_every_rung_and_configuration[torch.bfloat16]",),
        True),
    # ---- the GEMM ladders ----
    Bug("gemm-sweeps-naive-8192", "the default sweep times the naive rungs at every size",
        "src/phase24/gemm/spec.py", 'if name in ("cuda-naive", "cuda-v1") and m * n * k > 2048**3:',
        "if False:", ("tests/test_gemm_cpu.py::test_the_default_sweep_leaves_the_slowest_rungs_"
                      "out_of_the_largest_shapes",), False),
    Bug("gemm-v8-smem-unchecked", "a v8 configuration launched on a GPU that cannot give it the "
        "shared memory", "src/phase24/gemm/cuda/launchers.py",
        "if shared > 48 * 1024 and shared > gpu(a.device).smem_per_block:", "if False:",
        ("tests/test_gemm_cuda_rungs.py::test_v8_asks_for_its_stages_and_is_refused_where_they_"
         "do_not_fit",), False),
    Bug("gemm-tuned-class-smaller", "a shape class keeps its smaller shape's entry",
        "src/phase24/gemm/triton/tuning.py", 'key=lambda e: e["M"] * e["N"] * e["K"]):',
        'key=lambda e: -e["M"] * e["N"] * e["K"]):',
        ("tests/test_gemm_triton.py::test_the_tuned_table_keeps_the_larger_shape_of_a_class_and_"
         "is_read_back",), False),
    Bug("gemm-v3-vector-reads-past-k", "triton-v3's vector kernel (one row of A) reads past K in "
        "its last step", "src/phase24/gemm/triton/v3_splitk.py", "in_k = ks < K",
        "in_k = ks < K + BLOCK_K", ("tests/test_gemm_triton.py::test_forced_paths[v3-vector]",),
        False),
    Bug("check-log-shared", "two checks of different files write one log",
        "src/phase24/harness/grade.py", 'subject = f"-{Path(args.file).name}" if args.file else ""',
        'subject = ""', ("tests/test_grader_defences.py::test_each_learner_file_has_its_own_log",),
        False),
    Bug("gemm-v7-group-order", "the grouped order (v7 on) gives two blocks one tile (and none "
        "another)", "src/phase24/gemm/cuda/block_tile.cuh",
        "return {(first + (i % per_group) % rows) * BM,",
        "return {(first + (i % per_group) / rows) * BM,",
        ("tests/test_gemm_cuda_gpu.py::test_every_case[cuda-v7-torch.float32]",
         "tests/test_gemm_cuda_gpu.py::test_every_case[cuda-v10-torch.bfloat16]"), True),
    Bug("gemm-v8-unswizzled-store", "v8 stores A's tile unswizzled and reads it swizzled",
        "src/phase24/gemm/cuda/v8_mma.cu",
        "const uint32_t to_a = as + (ra * BK + swizzled<CA>(ra, ca) * 8) * 2;",
        "const uint32_t to_a = as + (ra * BK + ca * 8) * 2;",
        ("tests/test_gemm_cuda_gpu.py::test_every_case[cuda-v8-torch.bfloat16]",), True),
    Bug("no-op-witness", "the profiler's operators of a learner's call are not read",
        "src/phase24/core/witness.py",
        "        if not _allowed(e.name, any(r.name == LAUNCH for r in _ranges(e))):",
        "        if False:", ("tests/test_grader.py::test_a_file_that_computes_around_the_guard_"
                              "is_seen[steps out of the mode]",), False),
    Bug("launch-range-hides-all", "inside a range named like the launchers' anything may run",
        "src/phase24/core/witness.py",
        "        if not _allowed(e.name, any(r.name == LAUNCH for r in _ranges(e))):",
        "        if not any(r.name == LAUNCH for r in _ranges(e)) and not _allowed(e.name):",
        ("tests/test_grader.py::test_a_file_that_computes_around_the_guard_is_seen"
         "[forges the launch range]",), False),
    Bug("timing-unwatched", "a timed call of a Triton file is not judged by the run's profiler",
        "src/phase24/core/learner_py.py",
        "                result = timing.call(abi.function, path.name, own, lambda: "
        "guarded(*args))",
        "                result = guarded(*args)",
        ("tests/test_grader.py::test_a_timing_runs_profiler_judges_each_call_of_the_file",),
        False),
    Bug("no-stray-launches", "a kernel launched outside the file's launchers is not named",
        "src/phase24/core/witness.py", "            found.extend([k.name for k in e.kernels] or "
        "[e.name])", "            pass",
        ("tests/test_grader_gpu.py::test_a_kernel_named_like_the_files_but_launched_elsewhere_"
         "is_seen",), True),
    Bug("no-audit-hook", "the guard adds no audit hook (memory by address, libraries, processes)",
        "src/phase24/core/guard.py", "    sys.addaudithook(hook)", "    pass",
        ("tests/test_grader.py::test_a_file_that_computes_around_the_guard_is_seen"
         "[memory by address]",), False),
    Bug("no-kernel-witness", "a learner's call is not watched by the profiler",
        "src/phase24/core/learner_py.py", "            elif witness:",
        "            elif False:",
        ("tests/test_grader_gpu.py::test_a_graph_of_torch_replayed_inside_the_call_is_seen_by_"
         "the_profiler",), True),
    Bug("gemm-v8-unaligned-rows", "v8 runs cp.async on rows that are not 16-byte aligned",
        "src/phase24/gemm/cuda/v8_mma.py", "sixteen_bit=True, aligned_rows=True",
        "sixteen_bit=True, aligned_rows=False",
        ("tests/test_gemm_cuda_gpu.py::test_operands_off_16_byte_boundaries[cuda-v8-"
         "torch.bfloat16]",), True),
    Bug("gemm-replay-keeps-its-stream", "a replayed launch goes on the stream of the first replay, "
        "not on the caller's current one", "src/phase24/bridge/replay.py",
        "stream = _stream(tensors[0].get_device()) if steps else 0",
        'stream = self.__dict__.setdefault("stream", _stream(tensors[0].get_device())) '
        "if steps else 0", (f"{GEMM_SITUATIONS}::test_several_streams[cuda-torch.bfloat16]",
                            f"{GEMM_SITUATIONS}::test_two_host_threads[cuda-own-streams]"), True),
    Bug("gemm-v3-scratch-kept", "triton-v3 keeps one scratch of partial sums per shape, shared "
        "by every stream and graph", "src/phase24/gemm/triton/v3_splitk.py",
        "ws = torch.empty((second.args[1], m, n), dtype=torch.float32, device=c.device)",
        "ws = launch.__dict__.setdefault((second.args[1], m, n), torch.empty((second.args[1], m, "
        "n), dtype=torch.float32, device=c.device))",
        (f"{GEMM_SITUATIONS}::test_several_streams[triton-v3-torch.bfloat16]",
         f"{GEMM_SITUATIONS}::test_two_graphs_replayed_concurrently[triton-v3]"), True),
    Bug("gemm-v2-one-tile-a-program", "a persistent program of triton-v2 takes only its first tile",
        "src/phase24/gemm/triton/v2_persistent.py",
        "tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True)",
        "tl.range(tl.program_id(0), tl.minimum(tiles, PROGRAMS), PROGRAMS, flatten=True)",
        (f"{GEMM_SITUATIONS}::test_a_small_gpu[triton-v2]",), True),
    Bug("gemm-v9-lbo-sbo-swapped", "v9's B descriptor gives the next panel's offset as SBO and "
        "the next 8 rows' as LBO", "src/phase24/gemm/cuda/sw128.cuh",
        "return descriptor(tile + k0 * ROW, rows * ROW, ATOM);",
        "return descriptor(tile + k0 * ROW, ATOM, rows * ROW);",
        ("tests/test_gemm_sw128.py::test_every_operand_value_is_where_the_copies_wrote_it",
         "tests/test_gemm_sw128.py::test_a_and_b_descriptors_as_v9_builds_them"), False),
    Bug("gemm-v9-swizzle-off-by-a-row", "v9's copies swizzle chunk c of row r by row r + 1",
        "src/phase24/gemm/cuda/sw128.cuh", "return row * ROW + ((chunk ^ (row % 8)) * 16);",
        "return row * ROW + ((chunk ^ ((row + 1) % 8)) * 16);",
        ("tests/test_gemm_sw128.py::test_every_operand_value_is_where_the_copies_wrote_it",),
        False),
    Bug("gemm-v9-unaligned-rows", "v9 runs cp.async on rows that are not 16-byte aligned",
        "src/phase24/gemm/cuda/v9_wgmma.py", "hopper=True, aligned_rows=True",
        "hopper=True, aligned_rows=False",
        ("tests/test_gemm_cuda_gpu.py::test_operands_off_16_byte_boundaries[cuda-v9-"
         "torch.bfloat16]",), True),
    Bug("gemm-v10-unaligned-rows", "v10 asks for tensor maps of rows that are not 16-byte "
        "aligned", "src/phase24/gemm/cuda/v10_tma_producer.py", "hopper=True, aligned_rows=True",
        "hopper=True, aligned_rows=False",
        ("tests/test_gemm_cuda_gpu.py::test_operands_off_16_byte_boundaries[cuda-v10-"
         "torch.bfloat16]",), True),
    Bug("gemm-v10-a-box-a-row-down", "v10's producer asks for A's box one row below the tile",
        "src/phase24/gemm/cuda/v10_tma_producer.cu",
        "tma_load(a_tile(st), ta, bar, step * BK, row0);",
        "tma_load(a_tile(st), ta, bar, step * BK, row0 + 1);",
        ("tests/test_gemm_cuda_gpu.py::test_every_case[cuda-v10-torch.bfloat16]",), True),
    Bug("gemm-v10-replays-a-stale-map", "a replayed v10 launch passes the tensor maps of the "
        "first call's tensors", "src/phase24/bridge/replay.py",
        "spec.append((which[0], a.remake))", "spec.append((None, a))",
        (f"{GEMM_SITUATIONS}::test_several_streams[cuda-v10-torch.bfloat16]",), True),
    Bug("gemm-v11-a-block-per-tile", "v11's launch keeps one block per tile (no block walks "
        "tiles: persistence untested)", "src/phase24/gemm/cuda/launchers.py",
        "sm_count(a.device) if rung.persistent else None", "None",
        ("tests/test_gemm_cuda_gpu.py::test_persistent_blocks_walk_every_tile",), True),
]


def copy_tree(dst: Path) -> None:
    for part in ("src", "tests", "scripts", "labs", "pyproject.toml"):
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst / part)


def plant(bug: Bug, tree: Path) -> None:
    path = tree / bug.path
    text = path.read_text()
    if text.count(bug.old) != 1:
        raise SystemExit(f"{bug.name}: {bug.old!r} appears {text.count(bug.old)} times in "
                         f"{bug.path}, not once: update the entry")
    path.write_text(text.replace(bug.old, bug.new))


def run(bug: Bug, timeout: float) -> tuple[str, float, str]:
    with tempfile.TemporaryDirectory(prefix=f"planted-{bug.name}-") as tmp:
        tree = Path(tmp)
        copy_tree(tree)
        plant(bug, tree)
        env = dict(os.environ, PYTHONPATH=str(tree / "src"), PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *bug.tests]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                                  timeout=timeout)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as err:
            rc, out = -1, f"timed out after {timeout:.0f} s\n{err.stdout or ''}"
        took = time.perf_counter() - t0
    if rc == 1:
        return "caught", took, out
    if rc == 0:
        return "MISSED", took, out
    if rc == -1:
        return "caught (timed out)", took, out
    return f"error (pytest rc {rc})", took, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", action="store_true", help="the GPU entries (else the CPU ones)")
    ap.add_argument("--only", nargs="+", help="these entries only")
    ap.add_argument("--list", action="store_true", help="list the entries and check they apply")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per entry")
    ap.add_argument("--log", type=Path, help="also write each run's pytest output here")
    ap.add_argument("--jobs", type=int, default=1, help="entries run at once (default 1)")
    args = ap.parse_args()
    bugs = [b for b in BUGS if (b.name in args.only if args.only else b.gpu == args.gpu)]
    if args.list:
        with tempfile.TemporaryDirectory() as tmp:
            for b in BUGS:
                shutil.copytree(ROOT / "src", Path(tmp) / b.name / "src")
                plant(b, Path(tmp) / b.name)
                print(f"{b.name:28} {'gpu' if b.gpu else 'cpu'}  {b.what}")
        return 0
    missed = 0
    log = args.log.open("w") if args.log else None
    print(f"{'bug':28} {'verdict':20} {'s':>6}  tests")
    for b, (verdict, took, out) in results(bugs, args.timeout, args.jobs):
        missed += verdict == "MISSED" or verdict.startswith("error")
        print(f"{b.name:28} {verdict:20} {took:6.1f}  {' '.join(t.split('::')[-1] for t in b.tests)}",
              flush=True)
        if log:
            log.write(f"===== {b.name}: {b.what} -> {verdict}\n{out[-4000:]}\n")
            log.flush()
    return 1 if missed else 0


def alone(bug: Bug) -> bool:
    """Whether the entry's tests need the GPU to themselves (Triton's calling situations)."""
    return any(t.startswith(GPU_TESTS) for t in bug.tests)


def results(bugs: list[Bug], timeout: float, jobs: int):
    """(bug, run's result) of every entry, as each ends: `jobs` at once, then those `alone`."""
    together = [b for b in bugs if jobs == 1 or not alone(b)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running = {pool.submit(run, b, timeout): b for b in together}
        for done in as_completed(running):
            yield running[done], done.result()
    for b in bugs:
        if b not in together:
            yield b, run(b, timeout)


if __name__ == "__main__":
    sys.exit(main())
