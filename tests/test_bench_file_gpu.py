"""`bench OP --file F` on a GPU: a solved starter is checked, then timed as the benchmark times the
lab's own (us, gpu_us, loop_us) beside torch and a copy of the same bytes, and each run goes to
the history, which prints the best so far; a file that fails its check is not timed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench_file_checks import assert_timed
from committed import committed

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files"
SHAPES = ("65536x4096", "64x32768")  # the Definition of Done's shape, and a few-row one
pytestmark = pytest.mark.gpu

SOLVED = """    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    y = e / tl.sum(e, axis=0)
"""


def solved_starter(folder: Path) -> Path:
    """labs/starters/my_softmax.py as committed (not the learner's working copy, which may be
    solved already) with its TODO done."""
    text = committed("labs/starters/my_softmax.py", folder).read_text()
    assert "    y = x\n" in text
    path = folder / "my_softmax.py"
    path.write_text(text.replace("    y = x\n", SOLVED))
    return path


def bench(path: Path, history: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "phase24", "bench", "softmax", "--file",
                           str(path), "--dtype", "float32", "--shapes", ",".join(SHAPES)],
                          capture_output=True, text=True, timeout=1800, cwd=ROOT,
                          env={**__import__("os").environ, "PHASE24_HISTORY": str(history)})
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    return proc.returncode, out


@pytest.mark.parametrize("which", ["solved starter (.py)", "good.cu"])
def test_a_solved_file_is_timed_beside_torch_and_the_copy(tmp_path, which):
    path = solved_starter(tmp_path) if which.endswith("(.py)") else FILES / "good.cu"
    history = tmp_path / "history"
    rc, out = bench(path, history)
    assert rc == 0, out
    print(out)  # the times, in the GPU session's log
    assert_timed(out, "float32", SHAPES, "torch", history / "softmax.jsonl")
    said = " ".join(out.split())  # the line wraps at the terminal's width
    assert "at the Definition of Done's shape, 65536x4096 float32:" in said and "% of " \
        "torch.softmax's speed in this run" in said, out
    rc, out = bench(path, history)  # a second run: appended, and compared with the first
    assert rc == 0 and len((history / "softmax.jsonl").read_text().splitlines()) == 2, out
    assert "2 run(s) with right outputs" in out, out


def test_a_file_that_fails_its_check_is_not_timed(tmp_path):
    rc, out = bench(FILES / "calls_torch.py", tmp_path / "history")
    assert rc == 1 and "does not pass check: it is not timed" in out, out
    assert not (tmp_path / "history").exists()


def test_a_file_that_keeps_results_by_address_is_flagged_and_not_recorded(tmp_path):
    """It passes its check (fresh inputs sit at other addresses) but not the fresh values that
    bench writes into the timed buffers after the timing."""
    rc, out = bench(FILES / "caches_by_pointer.py", tmp_path / "history")
    assert rc == 1 and ("wrong on fresh values written into the same buffers" in out
                        or "faster than a copy can be" in out), out
    history = tmp_path / "history" / "softmax.jsonl"
    assert not history.exists() or '"ok": true' not in history.read_text(), out


def test_a_file_that_steps_out_only_on_the_timed_shapes_is_refused_and_not_recorded(tmp_path):
    """It computes in its own kernel on the checker's cases and with torch.softmax, out of the
    guard's mode, on the benchmark's large shapes: the profiler over the timing run sees it."""
    rc, out = bench(FILES / "steps_out_when_big.py", tmp_path / "history")
    flat = " ".join(out.split())
    said = "while timed, softmax_rows ran aten::_softmax outside your kernels"
    assert rc == 1 and said in flat, out
    assert not (tmp_path / "history" / "softmax.jsonl").exists(), out
