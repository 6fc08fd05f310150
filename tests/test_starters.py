"""A starter per rung, and its solution: on a CPU each starter in labs/starters/ (as committed)
fails `check OP --file` with its verdict table and no traceback, and each file of
labs/solutions/ passes it, the CUDA C ones in the emulator and the Triton ones in Triton's
interpreter. The starters a learner edits are read as committed, never his working copies.
On a GPU `check --file` grades the same files for real (results/h100/learner/ shows them
passing on an H100)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from committed import committed

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "labs" / "solutions"
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU's grading")
EVERY = [("softmax", "my_softmax.cu"), ("softmax", "my_softmax_v2.cu"),
         ("softmax", "my_softmax_v3.cu"), ("softmax", "my_softmax.py"),
         ("gemm", "my_gemm.cu"), ("gemm", "my_gemm_v2.cu"), ("gemm", "my_gemm_v3.cu"),
         ("gemm", "my_gemm_v4.cu"), ("gemm", "my_gemm.py")]
# lab 01's starters and the Triton ones fail in tests/test_grader.py and test_gemm_learner.py
FAILED_ELSEWHERE = {"my_softmax.cu", "my_gemm.cu", "my_softmax.py", "my_gemm.py"}
EMULATED_CASES = {"softmax": 17, "gemm": 15}  # the CPU's case lists for a .cu


def check(op: str, path: Path) -> tuple[int, str]:
    if path.suffix == ".cu" and shutil.which("g++") is None:
        pytest.skip("needs g++ (the emulator's host compiler)")
    done = subprocess.run([sys.executable, "-m", "phase24", "check", op, "--file", str(path),
                           "--seed", "11"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, out


def test_every_starter_has_a_solution_and_back():
    starters = {p.name for p in (ROOT / "labs" / "starters").glob("my_*")}
    # the port and the annotation are graded by minigpt parity --file and dod (their own tests)
    assert starters == {p.name for p in SOLUTIONS.iterdir()} == \
        {name for _, name in EVERY} | {"my_port.py", "my_profile.md"}
    for name in starters:
        assert f"labs/solutions/{name}" in (ROOT / "labs" / "starters" / name).read_text(), name
        assert f"labs/starters/{name}" in (SOLUTIONS / name).read_text(), name


@pytest.mark.parametrize("op,name", [e for e in EVERY if e[1] not in FAILED_ELSEWHERE])
def test_a_starter_as_given_fails_its_check(op, name, tmp_path):
    rc, out = check(op, committed(f"labs/starters/{name}", tmp_path))
    assert rc == 1 and re.search(r"\d+ passed, [1-9]\d* failed", out), out


@pytest.mark.parametrize("op,name", EVERY)
def test_a_solution_passes_its_check(op, name):
    rc, out = check(op, SOLUTIONS / name)
    assert rc == 0 and re.search(r"\d+ passed, 0 failed", out), out
    if name.endswith(".cu"):  # emulated: every case, then the counts
        assert f"{EMULATED_CASES[op]} passed, 0 failed" in out, out
        assert "emulated on the CPU: correctness and counts, no timing" in out
        assert "counts, not times" in out, out


def test_a_launch_shape_may_be_an_expression_of_the_files_defines():
    """The GEMM rungs' THREADS is BM * BN / TM: read as C reads it, or refused by name (a value
    the checker cannot read would launch the default 256 threads against a 512-thread kernel)."""
    from phase24.core.learner_cu import LearnerCudaError, defines

    source = "#define BM 64\n#define TM 8\n#define THREADS (BM * 64 / TM)  // 512\n"
    assert defines(source, {"THREADS": 256, "ROWS_PER_BLOCK": 1}) == {"THREADS": 512,
                                                                      "ROWS_PER_BLOCK": 1}
    for bad, says in [("#define THREADS (1 << 8)", "an expression of integer #defines"),
                      ("#define THREADS WIDTH * 2", "WIDTH is not an integer #define"),
                      ("#define THREADS 2 ** 99999999", "an expression of integer #defines"),
                      ("#define THREADS (A)\n#define A THREADS", "defined through itself"),
                      ("#define THREADS 256 +", "not an integer expression")]:
        with pytest.raises(LearnerCudaError, match=re.escape(says)):
            defines(bad, {"THREADS": 256})
