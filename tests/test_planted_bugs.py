"""scripts/planted_bugs.py's entries still apply: each one's text appears exactly once in the file
it names, so a bug can still be planted (moving code, such as the grouped tile order into
block_tile.cuh, must move the entry too). Which tests catch each bug is seen on the GPU."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_planted_bug_still_applies():
    done = subprocess.run([sys.executable, "scripts/planted_bugs.py", "--list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_jobs_run_entries_together_and_the_triton_situations_alone_after(monkeypatch):
    import importlib.util
    import threading

    spec = importlib.util.spec_from_file_location("planted_bugs", ROOT / "scripts" / "planted_bugs.py")
    planted = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "planted_bugs", planted)  # dataclasses look their module up
    spec.loader.exec_module(planted)
    running, most, lock = set(), [0], threading.Lock()
    release = [threading.Barrier(2, timeout=10)]  # with jobs=2, a and b run at the same time

    def fake_run(bug, timeout):
        with lock:
            running.add(bug.name)
            most[0] = max(most[0], len(running))
            others = set(running) - {bug.name}
        if bug.name in ("a", "b") and release[0]:
            release[0].wait()
        with lock:
            running.discard(bug.name)
        return "caught", 0.0, ",".join(sorted(others))

    monkeypatch.setattr(planted, "run", fake_run)
    bug = lambda name, test: planted.Bug(name, "", "", "", "", (test,), True)
    bugs = [bug("s1", f"{planted.GPU_TESTS}::x"), bug("a", "tests/test_gemm_cuda_gpu.py::y"),
            bug("s2", f"{planted.GPU_TESTS}::z"), bug("b", "tests/test_softmax_gpu.py::w")]
    done = list(planted.results(bugs, 1.0, jobs=2))
    assert [b.name for b, _ in done][2:] == ["s1", "s2"]  # alone, in order, after the rest
    assert {b.name: r[2] for b, r in done}["s1"] == "" and most[0] == 2
    release[0] = None
    assert [b.name for b, _ in planted.results(bugs, 1.0, jobs=1)] == ["s1", "a", "s2", "b"]
