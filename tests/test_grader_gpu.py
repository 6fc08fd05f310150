"""The `--file` grader on a GPU: the planted learner files of tests/learner_files/ (see
tests/test_grader.py for the CPU's side) each get their own verdict, and the table is printed to
its last case; the starters are graded without a traceback; a registry rung's refusal by design
is "not applicable", not a failure."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from committed import committed

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files"
# the GPU cases whose name holds "10" (64x1000, 100x1024, ..., 0x10, 10x0, 8x131072 with specials)
SOME = ("--case", "10", "--dtype", "float32")
pytestmark = pytest.mark.gpu


def some_cases() -> list[str]:
    from phase24.harness.check import jobs
    from phase24.harness.ops import get

    return [j.case.name for j in jobs(get("softmax"), ["f"], ["float32"], "cuda", 0,
                                      only=SOME[1])]


def phase24(*argv: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--seed", "11",
                           *argv], capture_output=True, text=True, timeout=600, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    if "every case: " in out:  # each case's row is in the log the check names
        out += "\n=== log\n" + Path(out.split("every case: ")[1].split(")")[0]).read_text()
    return proc.returncode, out


def counts(out: str) -> tuple[int, int, int]:
    """(passed, failed, not applicable) of the grader's last line."""
    m = re.search(r"(\d+) passed, (\d+) failed(?:, (\d+) not applicable)? \(seed", out)
    assert m, out
    return int(m[1]), int(m[2]), int(m[3] or 0)


@pytest.mark.parametrize("name", ["good.cu", "good.py"])
def test_a_correct_file_passes_every_case(name):
    rc, out = phase24("--file", str(FILES / name))
    assert rc == 0 and counts(out)[1] == 0, out


@pytest.mark.parametrize("name,verdict", [
    ("faults.cu", r"illegal memory access"),
    ("faults.py", r"illegal memory access"),
    ("writes_past_row.cu", r"wrote outside its output: 8 elements after its end"),
    ("writes_past_row.py", r"wrote outside its output: \d+ elements after its end"),
    ("modifies_input.cu", r"modified its input"),
    ("modifies_input.py", r"modified its input"),
    ("calls_torch.py", r"no Triton kernel of calls_torch\.py ran"),
])
def test_a_planted_file_gets_its_verdict_and_the_table_ends(name, verdict):
    rc, out = phase24("--file", str(FILES / name), *SOME)
    assert rc == 1 and re.search(verdict, out), out
    assert sum(counts(out)) == len(some_cases()) and some_cases()[-1] in out, out


@pytest.mark.parametrize("name", ["hangs.cu", "hangs.py"])
def test_a_hanging_kernel_times_out(name):
    rc, out = phase24("--file", str(FILES / name), "--timeout", "20", *SOME)
    out = out.split("=== log\n")[-1]  # each case's row, as the log keeps it
    rows = [line.split("  ")[-1].strip() for line in out.splitlines()
            if line.startswith(name + " ")]
    verdicts = re.findall(r"^ {4}(timed out after \d+ s)$", out, re.M)
    assert rc == 1 and verdicts == ["timed out after 20 s"] * 2, out
    assert rows == ["FAIL"] * 2 + ["not run"] * (len(some_cases()) - 2), out


@pytest.mark.parametrize("name,said", [
    ("misnamed.cu", "defines no kernel named softmax_f32"),
    ("no_extern_c.cu", 'softmax_f32 is not extern "C"'),
    ("wrong_params.cu", "softmax_f32 takes parameters of 8, 8, 4, 4, 8 bytes"),
])
def test_a_cuda_file_off_the_abi_is_refused_by_name(name, said):
    rc, out = phase24("--file", str(FILES / name))
    assert rc == 1 and said in " ".join(out.split()), out


def test_lab_01s_starter_is_graded_for_the_kernel_it_defines(tmp_path):
    """It defines softmax_f32 only (its comments name softmax_f16 and softmax_bf16): float32 is
    graded and fails by design; before, loading softmax_f16 raised a LaunchError."""
    rc, out = phase24("--file", str(committed("labs/starters/my_softmax.cu", tmp_path)))
    flat = " ".join(out.split())
    assert rc == 1 and "ABI: softmax_f32: found" in flat, out
    graded = set(re.findall(r"^my_softmax\.cu +(\w+) ", out.split("=== log\n")[-1], re.M))
    assert graded == {"f32"}, out


def test_a_refusal_by_design_is_not_a_failure():
    rc, out = phase24("--impl", "triton-naive", "--dtype", "float32")
    assert rc == 0 and counts(out)[1] == 0 and counts(out)[2] > 0, out
    assert re.search(r"n/a\n +SoftmaxArgumentError: triton-naive: rows of \d+ values do not fit", out), out


def test_a_graph_of_torch_replayed_inside_the_call_is_seen_by_the_profiler():
    """The dispatcher never sees a CUDA graph replayed; the profiler sees torch's softmax kernel
    run during the call, which is not one of the file's kernels."""
    rc, out = phase24("--file", str(FILES / "replays_a_graph.py"), "--case", "256x128",
                      "--dtype", "float32")
    flat = " ".join(out.split())  # the kernel's name has spaces: void (anonymous namespace)::...
    assert rc == 1 and re.search(r"ran the kernel [^,]*[Ss]oft[Mm]ax.*?, which is not one of "
                                 r"replays_a_graph\.py's", flat), out
    assert "UserWarning" not in out, out


def test_a_kernel_named_like_the_files_but_launched_elsewhere_is_seen():
    """Its own row_softmax does nothing; a row_softmax of another file computes, launched
    outside the grader's wrapper of the file's kernels: the profiler's names match the file's,
    the launch's place does not (core/witness.stray_launches)."""
    rc, out = phase24("--file", str(FILES / "launches_a_namesake.py"), *SOME)
    said = ("launched the kernel row_softmax from outside the launches of "
            "launches_a_namesake.py's own kernels")
    assert rc == 1 and said in " ".join(out.split()), out


@pytest.mark.parametrize("name,verdict", [
    ("forges_the_launch_range.py", r"ran aten::_softmax outside your kernels"),
    ("noop_then_torch.py", r"aten\._softmax\.default computed outside your kernels"),
    ("fallback_long_rows.py", r"aten\._softmax\.default computed outside your kernels"),
    ("caches_results.py", r"wrong on fresh inputs of the same"),
    ("reads_freed_memory.py", r"NaN where the reference has a number"),
    ("thread_left.py", r"softmax_rows started a thread"),
    ("uses_numpy.py", r"Tensor\.numpy\(\) took values out of torch"),
    ("returns_new_tensor.py", r"softmax_rows returned a Tensor that is not out"),
    ("defers_to_subclass.py", r"softmax_rows changed the class of its arguments"),
    ("thread_at_import.py", r"importing it left a thread running"),
    ("patches_checker.py", r"FAIL: the file changed the grader's code "
                           r"\(phase24\.harness\.check\.check_case\)"),
    ("patches_torch_when_called.py", r"FAIL: the file changed the grader's code \(torch\.equal\)"),
])
def test_a_cheating_file_gets_its_verdict_on_the_gpu(name, verdict):
    """The cheats tests/test_grader.py plants on a CPU, graded on the GPU: there the file's
    kernels run on the GPU (not in the interpreter) and the profiler watches the call too. The
    cases: rows of 1000 to 131072 values (longer than fallback_long_rows.py's kernel takes)."""
    rc, out = phase24("--file", str(FILES / name), *SOME)
    assert rc == 1 and re.search(verdict, " ".join(out.split())), out
