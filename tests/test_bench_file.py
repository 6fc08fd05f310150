"""`bench OP --file F` without a GPU: every refusal is one line and a non-zero status, the file is
loaded in a worker process (not in the command's), and the history of the learner's runs keeps
the best time of each shape (tests/test_bench_file_gpu.py times a file on a GPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from phase24.harness import history
from phase24.harness.ops import get

ROOT = Path(__file__).resolve().parents[1]
GOOD = str(ROOT / "tests" / "learner_files" / "good.py")
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU machine's behaviour")


def phase24(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "phase24", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@cpu_only
@pytest.mark.parametrize("argv,said", [
    (("--file", GOOD), "No GPU here: timing good.py needs an NVIDIA GPU"),
    (("--file", "tests/learner_files/nosuch.py"), "no such file: tests/learner_files/nosuch.py"),
    (("--file", "README.md"), "README.md: expected a .cu (CUDA C) or a .py (Triton) file"),
    (("--file", GOOD, "--impl", "torch"), "--impl and --file do not go together"),
    (("--file", GOOD, "--shapes", "0x5"), "--shapes: bad shape '0x5': M and N must be at least 1"),
    (("--file", GOOD, "--shapes", "banana"), "--shapes: bad shape 'banana': write MxN"),
    (("--file", GOOD, "--out", "/tmp/x"), "--out does not go with --file"),
])
def test_a_refusal_is_one_line(argv, said):
    done = phase24("bench", "softmax", *argv)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode != 0 and len(lines) == 1 and said in lines[0], lines


@cpu_only
@pytest.mark.parametrize("body,said", [
    ("", "timing failed: "),  # loaded in the worker, then no GPU to time it on
    ("raise SystemExit(3)\n", "the process exited with status 3 while loading the file"),
    ("import nosuchmodule_phase24\n", "importing it failed: ModuleNotFoundError"),
])
def test_the_file_is_loaded_and_timed_in_a_worker(tmp_path, body, said):
    from phase24.harness.isolate import LoadError
    from phase24.harness.timefile import _time_in_worker

    path = tmp_path / "mine.py"
    path.write_text(Path(GOOD).read_text() + "\n" + body)
    spec = {"op": "softmax", "file": str(path), "dtypes": ["float32"], "device": "cpu",
            "shapes": [[4, 8]], "seed": 0}
    with pytest.raises(LoadError) as err:
        _time_in_worker(spec, timeout=60, load_timeout=120)
    assert said in str(err.value) and "\n" not in str(err.value).strip(), str(err.value)


# ---- the history ---------------------------------------------------------------------------------

OP = get("softmax")


def result(us: dict, gpu="NVIDIA H200", failures=(), date="2030-01-01T00:00:00+00:00") -> dict:
    """A benchmark result in which mine.py took ``us[(M, N)]`` and torch 10 us on each shape."""
    def rec(impl, m, n, t):
        return {"impl": impl, "dtype": "float32", "M": m, "N": n, "us": t, "gpu_us": t - 1,
                "loop_us": t + 1, "host_us": t + 2}

    return {"gpu": gpu, "date": date, "commit": "abc", "baseline": "torch",
            "failures": list(failures),
            "records": [rec("torch", m, n, 10.0) for m, n in us] +
                       [rec("mine.py", m, n, t) for (m, n), t in us.items()]}


def run(path: Path, r: dict, sha="f" * 64) -> dict:
    line = history.entry(OP, r, "mine.py", Path("/x/mine.py"), sha)
    history.append(path, line)
    return line


def test_each_run_is_appended_and_the_best_is_kept_per_shape(tmp_path, capsys):
    path = tmp_path / "history" / "softmax.jsonl"
    run(path, result({(64, 1024): 8.0, (8, 4096): 5.0}, date="2030-01-01T00:00:00+00:00"))
    run(path, result({(64, 1024): 6.0, (8, 4096): 7.0}, date="2030-01-02T00:00:00+00:00"))
    runs, bad = history.load(path)
    assert len(runs) == 2 and bad == 0
    assert runs[0]["records"][0] == {"dtype": "float32", "M": 64, "N": 1024, "us": 8.0,
                                     "gpu_us": 7.0, "loop_us": 9.0, "host_us": 10.0}
    assert runs[0]["baseline_records"][0]["us"] == 10.0
    top = history.best(OP, runs, "NVIDIA H200")
    assert top[("float32", 64, 1024)][0]["us"] == 6.0
    assert top[("float32", 8, 4096)][0]["us"] == 5.0
    assert top[("float32", 8, 4096)][1]["date"].startswith("2030-01-01")


def test_only_right_runs_on_the_same_gpu_count(tmp_path):
    path = tmp_path / "softmax.jsonl"
    run(path, result({(64, 1024): 8.0}))
    run(path, result({(64, 1024): 1.0}, failures=["mine.py float32 64x1024: wrong"]))
    run(path, result({(64, 1024): 2.0}, gpu="NVIDIA A100"))
    runs, _ = history.load(path)
    assert history.best(OP, runs, "NVIDIA H200")[("float32", 64, 1024)][0]["us"] == 8.0
    assert history.best(OP, runs, "NVIDIA A100")[("float32", 64, 1024)][0]["us"] == 2.0


def test_a_damaged_line_is_skipped_and_counted(tmp_path, capsys):
    path = tmp_path / "softmax.jsonl"
    run(path, result({(64, 1024): 8.0}))
    with open(path, "a") as f:
        f.write('{"date": "2030-01-0\n[1, 2]\n')  # a run killed while writing, and garbage
    current = run(path, result({(64, 1024): 9.0}, date="2030-01-03T00:00:00+00:00"))
    runs, bad = history.load(path)
    assert len(runs) == 2 and bad == 2
    history.show_best(OP, path, current)
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the line names tmp_path, so where it wraps depends on its length
    assert "2 run(s) with right outputs" in flat and "2 unreadable line(s) skipped" in flat, out
    row = next(line for line in out.splitlines() if line.startswith("float32"))
    assert row.split()[:4] == ["float32", "64x1024", "8.0", "9.0"] and "new best" not in row


def test_a_new_best_is_said(tmp_path, capsys):
    path = tmp_path / "softmax.jsonl"
    run(path, result({(64, 1024): 8.0}))
    current = run(path, result({(64, 1024): 7.5}, date="2030-01-05T00:00:00+00:00"), sha="a" * 64)
    history.show_best(OP, path, current)
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("float32"))
    assert "new best" in row and "2030-01-05" in row and "mine.py (aaaaaaaa)" in row
    assert all(len(line) <= 100 for line in out), out
    assert json.loads(path.read_text().splitlines()[-1])["sha256"] == "a" * 64


def test_the_history_is_not_tracked_by_git():
    folder = history.path_for(OP).parent
    done = subprocess.run(["git", "check-ignore", "-q", str(folder / "softmax.jsonl")], cwd=ROOT)
    assert done.returncode == 0, f"{folder} is not git-ignored"


def test_a_time_faster_than_a_copy_is_not_a_time():
    """bench --file fails, and does not record, a time faster than a copy of the bytes the
    operation must move (a cache of results by pointer, work done before the timer). The ceiling
    is the faster of the run's two copies: on a GPU shared with other work the large copy timed
    first was once slowed to half its speed, and a kernel at 81% of its shape's copy read 221%."""
    from phase24.harness.ops import get
    from phase24.harness.timefile import impossible

    op = get("softmax")

    def rec(impl, m, n, gbps):
        return {"impl": impl, "dtype": "float32", "M": m, "N": n, "gbps": gbps}

    result = {"copy_gbps": 1100.0, "records": [
        rec("mine.cu", 65536, 4096, 2441.0), rec("mine.cu", 64, 32768, 7000.0),
        rec("torch", 64, 32768, 9000.0)], "copy_same_size": [
        {"dtype": "float32", "M": 65536, "N": 4096, "gbps": 2997.0},
        {"dtype": "float32", "M": 64, "N": 32768, "gbps": 2600.0}]}
    assert impossible(op, result, "mine.cu") == [
        "float32 64x32768: 269% of a copy of its least bytes, faster than a copy can be"]
    result["copy_gbps"] = 8000.0  # the large copy the faster: it is the ceiling
    assert impossible(op, result, "mine.cu") == []
