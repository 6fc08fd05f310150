"""`check gemm --file F` and `bench gemm --file F` on a GPU (tests/test_gemm_learner.py is the
CPU's side): the solved files of tests/learner_files/gemm/ pass every case in every dtype, a
solved starter passes with the tile its #defines ask for, the starters as committed fail, the
cheats are refused with their reason, and a passing file is timed beside cuBLAS and a copy of
the same bytes, its run going to the history; a failing one is not timed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench_file_checks import assert_timed
from committed import committed

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files" / "gemm"
DTYPES = ("float32", "float16", "bfloat16")
SHAPES = ("256x256x256", "64x1024x512")
pytestmark = pytest.mark.gpu

SOLVED_CU = """    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += a[row * K + k] * b[(long long)k * N + col];
"""


def solved_starter(folder: Path, tile: tuple[int, int, int]) -> Path:
    """The committed my_gemm.cu with its TODO done and ``tile`` = (TILE_M, TILE_N, THREADS) in
    its #defines."""
    text = committed("labs/starters/my_gemm.cu", folder).read_text()
    assert text.count("    float sum = 0.0f;\n") == 1
    text = text.replace("    float sum = 0.0f;\n", SOLVED_CU)
    for name, value in zip(("TILE_M", "TILE_N", "THREADS"), tile):
        text = re.sub(rf"^#define {name} \d+$", f"#define {name} {value}", text, flags=re.M)
    path = folder / "solved" / "my_gemm.cu"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def phase24(*argv: str, env: dict | None = None, timeout: int = 1800) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "phase24", *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    if "every case: " in out:  # each case's row is in the log the check names
        out += "\n=== log\n" + Path(out.split("every case: ")[1].split(")")[0]).read_text()
    return proc.returncode, re.sub(r"\n {4}(?=\S)", " ", out)


def grade(path: Path, *extra: str) -> tuple[int, str]:
    return phase24("check", "gemm", "--file", str(path), "--seed", "11", *extra)


def counts(out: str) -> tuple[int, int]:
    m = re.search(r"(\d+) passed, (\d+) failed \(seed", out)
    assert m, out
    return int(m[1]), int(m[2])


def every_case(dtypes=DTYPES) -> int:
    from phase24.harness.check import jobs
    from phase24.harness.ops import get

    return len(jobs(get("gemm"), ["f"], list(dtypes), "cuda", 0))


def graded_dtypes(out: str, name: str) -> set[str]:
    return set(re.findall(rf"^{re.escape(name)} +(\w+) ", out.split("=== log\n")[-1], re.M))


@pytest.mark.parametrize("name", ["good.cu", "good.py"])
def test_a_solved_file_passes_every_case_in_every_dtype(name):
    rc, out = grade(FILES / name)
    assert rc == 0 and counts(out) == (every_case(), 0), out
    assert graded_dtypes(out, name) == {"f32", "f16", "bf16"}, out
    if name.endswith(".cu"):
        assert "ABI: gemm_f32, gemm_f16, gemm_bf16: found, with the ABI's parameters" in out, out


def test_a_solved_cu_starter_passes_with_the_tile_its_defines_ask_for(tmp_path):
    """4 x 32 tiles of 128 threads: launched with the default 16 x 16 tiles, the grid would have
    half the blocks the file needs, and rows of C would stay NaN."""
    rc, out = grade(solved_starter(tmp_path, (4, 32, 128)), "--dtype", "float32")
    assert rc == 0 and counts(out) == (every_case(["float32"]), 0), out


@pytest.mark.parametrize("suffix", [".cu", ".py"])
def test_a_starter_as_committed_fails(tmp_path, suffix):
    rc, out = grade(committed(f"labs/starters/my_gemm{suffix}", tmp_path))
    assert rc == 1 and re.search(r"FAIL my_gemm\.\w+ f32 17x33x65: elementwise error", out), out
    if suffix == ".cu":  # it defines gemm_f32 only: float32 is graded, and fails
        assert "ABI: gemm_f32: found" in out and graded_dtypes(out, "my_gemm.cu") == {"f32"}, out


@pytest.mark.parametrize("name,verdict", [
    ("noop_then_torch.py", r"aten\.mm\.out computed outside your kernels"),
    ("falls_back_to_torch.py", r"no Triton kernel of falls_back_to_torch\.py ran, and "
                               r"aten\.mm\.default computed outside your kernels"),
])
def test_a_cheating_triton_file_is_refused_with_its_reason(name, verdict):
    rc, out = grade(FILES / name, "--dtype", "float32", "--case", "64x64x64")
    assert rc == 1 and re.search(verdict, out) and counts(out) == (0, 1), out


def test_a_tile_of_nothing_is_one_line(tmp_path):
    path = tmp_path / "mine.cu"
    path.write_text((FILES / "good.cu").read_text().replace("#define TILE_M 16",
                                                            "#define TILE_M 0"))
    rc, out = grade(path)
    assert rc == 1 and "FAIL: mine.cu: #define TILE_M 0: a block needs threads" in out, out


def bench(path: Path, history: Path) -> tuple[int, str]:
    return phase24("bench", "gemm", "--file", str(path), "--dtype", "float32", "--shapes",
                   ",".join(SHAPES), env={"PHASE24_HISTORY": str(history)})


@pytest.mark.parametrize("name", ["good.py", "good.cu"])
def test_a_solved_file_is_timed_beside_cublas_and_the_copy(tmp_path, name):
    path = FILES / name
    history = tmp_path / "history"
    rc, out = bench(path, history)
    assert rc == 0, out
    print(out)  # the times, in the GPU session's log
    assert_timed(out, "float32", SHAPES, "cublas", history / "gemm.jsonl")


def test_a_file_that_fails_its_check_is_not_timed(tmp_path):
    rc, out = bench(committed("labs/starters/my_gemm.cu", tmp_path), tmp_path / "history")
    assert rc == 1 and "does not pass check: it is not timed" in out, out
    assert not (tmp_path / "history").exists()
