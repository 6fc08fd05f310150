"""The `--file` grader on a CPU: each planted learner file of tests/learner_files/ gets its own
verdict, and the table is printed to its last case, whatever the file does.

Triton files run in the interpreter, one worker process at a time (a wild store kills a worker,
not the run); CUDA C files are compiled and their cubin's kernels checked against the ABI.
tests/test_grader_gpu.py runs the same files on a GPU.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from committed import committed

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files"
LAST_CASE = "10x0"  # the last case of the CPU set: its row shows the table was printed to the end
SOME = ("--case", "10")  # 64x1000, 100x1024, 64x1024 view[:,1:], then the empty 0x10 and 10x0
pytestmark = pytest.mark.skipif(torch.cuda.is_available(),
                                reason="CPU behaviour; tests/test_grader_gpu.py runs on a GPU")


def grade(name: str, *extra: str, timeout: int = 300) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           str(FILES / name), "--dtype", "float32", "--seed", "11", *extra],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert "RuntimeWarning" not in out, out
    return proc.returncode, out + every_case(out)


def every_case(out: str) -> str:
    """The log of every case's row that the check names at its end ('' if it names none)."""
    if "every case: " not in out:
        return ""
    return "\n" + Path(out.split("every case: ")[1].split(")")[0]).read_text()


def rows(out: str, verdict: str) -> list[str]:
    return [line for line in out.splitlines() if line.rstrip().endswith(f"  {verdict}")]


def test_a_correct_triton_file_passes():
    rc, out = grade("good.py")
    assert rc == 0 and "17 passed, 0 failed" in out, out
    assert "Triton's interpreter runs the Triton kernels" in out
    assert "its code runs in a worker process, with your rights" in out


@pytest.mark.parametrize("name,verdict,counts", [
    # rows of 1000 values spill past the last one; rows of 1024 fill the block exactly
    ("writes_past_row.py", r"wrote outside its output: \d+ elements after its end", (4, 1)),
    ("faults.py", r"crashed \(SIGSEGV", (2, 3)),
    ("modifies_input.py", r"modified its input", (2, 3)),
    ("calls_torch.py", r"no Triton kernel of calls_torch\.py ran, and aten\._softmax\.default "
                       "computed outside your kernels", (2, 3)),
    # the result must come from the file's kernels (core/guard.py around softmax_rows)
    ("noop_then_torch.py", r"aten\._softmax\.default computed outside your kernels", (2, 3)),
    ("thread_left.py", r"softmax_rows started a thread", (2, 3)),
    ("uses_numpy.py", r"Tensor\.numpy\(\) took values out of torch", (2, 3)),
    ("returns_new_tensor.py", r"softmax_rows returned a Tensor that is not out", (2, 3)),
    ("defers_to_subclass.py", r"softmax_rows changed the class of its arguments", (2, 3)),
])
def test_a_planted_triton_file_gets_its_verdict(name, verdict, counts):
    rc, out = grade(name, *SOME)
    assert rc == 1, out
    assert re.search(verdict, out), out
    assert any(LAST_CASE in line for line in rows(out, "ok") + rows(out, "FAIL")), out
    assert f"{counts[0]} passed, {counts[1]} failed (seed 11;" in out, out


@pytest.mark.parametrize("name,said", [
    # it pops the guard's dispatch mode around its torch.softmax: the profiler records the
    # operator below any mode (core/witness.py)
    ("leaves_the_mode.py", "softmax_rows ran aten::_softmax outside your kernels, where the "
                           "guard could not see it"),
    # NumPy over ctypes arrays laid on the tensors' memory: the audit hook (core/guard.py)
    ("reads_by_address.py", "softmax_rows reached memory by its address (ctypes)"),
    # its torch.softmax inside a range named like the launchers': there only copies may run
    ("forges_the_launch_range.py", "softmax_rows ran aten::_softmax outside your kernels"),
    # its namesake kernel, launched outside the grader's wrapper, copies its arguments to the
    # host (the interpreter): refused outside a launcher (on a GPU: tests/test_grader_gpu.py)
    ("launches_a_namesake.py", "aten.copy_.default computed outside your kernels"),
], ids=["steps out of the mode", "memory by address", "forges the launch range",
        "launches a namesake"])
def test_a_file_that_computes_around_the_guard_is_seen(name, said):
    rc, out = grade(name, *SOME)
    assert rc == 1 and said in " ".join(out.split()), out
    assert "2 passed, 3 failed (seed 11;" in out, out


@pytest.mark.parametrize("name,args,verdict,counts", [
    # its kernel takes rows of up to 1024 values: these cases' rows are longer
    ("fallback_long_rows.py", ("--case", "409"), r"aten\._softmax\.default computed outside your "
                                                 "kernels", (0, 2)),
    # every case's third call has fresh inputs of the same shape: a kept result is wrong there
    ("caches_results.py", ("--dtype", "float32", *SOME), r"wrong on fresh inputs of the same",
     (2, 3)),
    # fresh memory is poisoned (NaN): only the two empty cases pass
    ("reads_freed_memory.py", (), r"NaN where the reference has a number", (2, 15)),
])
def test_a_cheating_triton_file_gets_its_verdict(name, args, verdict, counts):
    rc, out = grade(name, *args)
    assert rc == 1 and re.search(verdict, out), out
    assert f"{counts[0]} passed, {counts[1]} failed (seed 11;" in out, out


def test_a_file_that_leaves_a_thread_at_import_is_refused():
    rc, out = grade("thread_at_import.py", *SOME)
    assert rc == 1 and "importing it left a thread running" in " ".join(out.split()), out


@pytest.mark.parametrize("name,patched", [
    ("patches_checker.py", "phase24.harness.check.check_case"),  # at import
    ("patches_timer.py", "phase24.core.timing.flushed_us"),      # at import: bench --file's timer
    ("patches_torch_when_called.py", "torch.equal"),             # in its first call
])
def test_a_file_that_patches_the_grader_fails(name, patched):
    """The file runs in the worker that makes its verdicts: the worker records the grader's code
    before loading it (harness/intact.py) and stops when any of it changed."""
    rc, out = grade(name, *SOME)
    flat = " ".join(out.split())
    assert rc == 1 and f"FAIL: the file changed the grader's code ({patched})" in flat, out
    assert " passed, " not in out, out  # no verdict from the changed code is counted


def test_a_hanging_kernel_times_out_and_the_table_ends():
    t0 = time.monotonic()
    rc, out = grade("hangs.py", "--timeout", "3", *SOME)
    assert rc == 1 and out.count("timed out after 3 s") >= 2, out
    assert any(LAST_CASE in line for line in rows(out, "not run")), out
    assert time.monotonic() - t0 < 120


def test_a_file_without_a_triton_kernel_is_refused():
    rc, out = grade("no_kernel.py")
    assert rc == 1 and "defines no @triton.jit kernel" in out, out


def test_the_triton_starter_runs_in_the_interpreter_and_fails(tmp_path):
    starter = committed("labs/starters/my_softmax.py", tmp_path)  # not the learner's own copy
    proc = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           str(starter), "--case", "x1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())})  # nothing set
    assert proc.returncode == 1 and "failed (seed" in proc.stdout, proc.stdout + proc.stderr


# ---- CUDA C without a GPU: compiled, the cubin's kernels checked against the ABI, run emulated --

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@needs_nvcc
@pytest.mark.parametrize("name,rc,said", [
    ("good.cu", 0, "ABI: softmax_f32, softmax_f16, softmax_bf16: found, with the ABI's parameters"),
    ("misnamed.cu", 1, "defines no kernel named softmax_f32, softmax_f16 or softmax_bf16 (its "
                       "kernels: softmax_float32)"),
    ("no_extern_c.cu", 1, 'softmax_f32 is not extern "C" (its symbol is _Z11softmax_f32PKfPfxix)'),
    ("wrong_params.cu", 1, "softmax_f32 takes parameters of 8, 8, 4, 4, 8 bytes"),
])
def test_a_cuda_file_is_checked_against_the_abi(name, rc, said):
    got, out = grade(name)
    flat = " ".join(out.split())
    assert got == rc and said in flat, out
    assert ("17 passed, 0 failed" in out) == (rc == 0), out  # float32's 17 cases, emulated


@needs_nvcc
def test_the_cuda_starter_names_what_it_defines(tmp_path):
    """Lab 01's starter defines softmax_f32 only; its comments name softmax_f16 and softmax_bf16,
    which a scan of the source took for kernels (and then failed to load them on a GPU). As
    given it copies the row: emulated, it fails with its verdict table, and its counts."""
    starter = committed("labs/starters/my_softmax.cu", tmp_path)  # not the learner's own copy
    proc = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           str(starter)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    flat = " ".join(proc.stdout.split())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "softmax_f32: found" in flat and "not defined: softmax_f16, softmax_bf16" in flat, flat
    assert "2 passed, 15 failed" in flat and "counts, not times" in flat, flat  # the empty ones


def test_only_the_files_kernels_and_fills_may_run_in_its_call():
    """What the profiler's witness accepts (core/witness.foreign_kernels): the file's
    @triton.jit kernels by name, torch's fills of scratch; anything else is named."""
    from phase24.core.witness import foreign_kernels

    own = {"row_softmax", "copy_rows"}
    fills = ["void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
             "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
             "at::detail::Array<char*, 1>)", "Memset (Device)"]
    assert foreign_kernels(["row_softmax", "copy_rows", "row_softmax", *fills], own) == []
    torch_softmax = "void (anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>()"
    assert foreign_kernels(["copy_rows", torch_softmax, "copy_rows"], own) == [torch_softmax]
    assert foreign_kernels(["row_softmaxx"], own) == ["row_softmaxx"]
    assert foreign_kernels(["ampere_sgemm_128x64_nn"], own) == ["ampere_sgemm_128x64_nn"]


class Event:
    """A stand-in for an event of torch's profiler: its name, the range it ran in, whether
    Python code labelled it (record_function), the kernels its launch call launched."""

    def __init__(self, name, parent=None, labelled=False, kernels=()):
        self.name, self.cpu_parent, self.is_user_annotation = name, parent, labelled
        self.kernels = [type("Kernel", (), {"name": k})() for k in kernels]


def test_the_launchers_range_lets_copies_through_and_hides_no_computing():
    """core/witness.foreign_ops: inside a launcher's range (a labelled ``phase24::launch``,
    which a file can open too) only the launcher's copies and fills, outside it not even
    those; a labelled range is no operator, whatever its name."""
    from phase24.core.guard import LAUNCH
    from phase24.core.witness import foreign_ops

    launch = Event(LAUNCH, labelled=True)
    inside = [Event("aten::copy_", launch), Event("aten::clone", launch),
              Event("aten::empty_strided", launch), Event("aten::zero_", launch)]
    assert foreign_ops([launch, *inside]) == []
    assert foreign_ops([Event("aten::copy_")]) == ["aten::copy_"]
    assert foreign_ops([launch, Event("aten::_softmax", launch)]) == ["aten::_softmax"]
    fake = Event("aten::fill_", labelled=True)
    assert foreign_ops([fake, Event("aten::mm", fake)]) == ["aten::mm"]


def test_a_kernel_launched_outside_the_launchers_is_a_stray():
    """core/witness.stray_launches: a launch call must sit in a launcher's range or in an
    operator (torch's fill of scratch); elsewhere its kernel is named, even under the name of
    one of the file's kernels."""
    from phase24.core.guard import LAUNCH
    from phase24.core.witness import stray_launches

    launch, fill = Event(LAUNCH, labelled=True), Event("aten::fill_")
    ours = Event("cuLaunchKernelEx", Event("phase24::x", launch), kernels=["row_softmax"])
    assert stray_launches([ours, Event("cudaLaunchKernel", fill, kernels=["FillFunctor"])]) == []
    namesake = Event("cuLaunchKernelEx", Event("row", labelled=True), kernels=["row_softmax"])
    assert stray_launches([ours, namesake]) == ["row_softmax"]
    assert stray_launches([Event("cudaGraphLaunch", kernels=["a", "b"])]) == ["a", "b"]
    assert stray_launches([Event("cudaLaunchKernel")]) == ["cudaLaunchKernel"]


def test_a_timing_runs_profiler_judges_each_call_of_the_file():
    """core/witness.Watch, as `bench --file` runs it around the benchmark's loop (on a GPU; here
    the interpreter runs the file's kernels): the calls of a file that steps out of the guard's
    mode on large inputs only are judged when the run ends; the baseline's torch.softmax,
    outside the file's calls, is not the file's; the profiler runs during every call."""
    from phase24.core.witness import Watch
    from phase24.softmax.learner_triton import load_learner_softmax

    fn = load_learner_softmax(ROOT / "tests" / "learner_files" / "steps_out_when_big.py")
    small, big = torch.randn(8, 100), torch.randn(2048, 2048)
    with Watch(False) as watch:
        torch.softmax(big, dim=-1)
        fn(small)
        assert torch.autograd.profiler._is_profiler_enabled
    assert watch.verdict == ""
    with Watch(False) as watch:
        fn(small)
        fn(big)
    assert watch.verdict.startswith("softmax_rows ran aten::_softmax outside your kernels"), \
        watch.verdict
