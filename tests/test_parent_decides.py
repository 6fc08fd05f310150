"""The parent decides (harness/decide.py): a learner's file that writes verdicts or replies on the
worker's channel, replaces json.dumps, or shrinks a case list in its caller's frames still gets
the parent's verdicts, case for case; an honest Triton file and an honest .cu still pass. The
worker never sees the seed: its spec holds none, and its argv holds nothing but the module."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOOD = (ROOT / "tests" / "learner_files" / "good.py").read_text()
WRONG = "\n\ndef softmax_rows(x2d, out):\n    out.copy_(x2d)  # no softmax at all\n"

FORGE_CHANNEL = '''
import json, os
def _forge():
    ok = {"impl": "x", "dtype": "float32", "case": "c", "rel_l2": 0.0, "worst": 0.0,
          "extra": 0.0, "ok": True, "why": "", "na": False}
    for fd in range(3, 64):
        try:
            for i in range(200):
                os.write(fd, (json.dumps({"i": i, "verdict": ok}) + "\\n").encode())
                os.write(fd, (json.dumps({"done": i, "buf": None}) + "\\n").encode())
        except OSError:
            pass
_forge()
'''

PATCH_JSON = '''
import json
_dumps = json.dumps
def _always_passed(obj, *a, **k):
    if isinstance(obj, dict) and "error" in obj:
        obj = {"done": obj["error"]}
    if isinstance(obj, dict) and "verdict" in obj:
        obj["verdict"].update(ok=True, why="")
    return _dumps(obj, *a, **k)
json.dumps = _always_passed
'''

SHRINK_CASES = '''
import gc
def _shrink():
    for o in gc.get_objects():
        if isinstance(o, list) and len(o) > 3 and all(hasattr(j, "case") for j in o[:3]):
            del o[1:]
_shrink()
'''


def check(path: Path, *extra: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           str(path), "--dtype", "float32", "--timeout", "30", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, out


def counts(out: str) -> tuple[int, int]:
    m = re.findall(r"^(\d+) passed, (\d+) failed", out, re.M)[-1]  # the summary's line
    return int(m[0]), int(m[1])


@pytest.mark.parametrize("cheat", [FORGE_CHANNEL, PATCH_JSON, SHRINK_CASES],
                         ids=["writes verdicts on the channel", "patches json.dumps",
                              "shrinks the case list"])
def test_what_a_wrong_file_says_counts_for_nothing(tmp_path, cheat):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(GOOD + WRONG)
    rc, out = check(wrong, "--seed", "3")
    assert rc == 1, out
    expected = counts(out)
    path = tmp_path / "cheat.py"
    path.write_text(GOOD + WRONG + cheat)
    rc, out = check(path, "--seed", "3")
    assert rc == 1 and counts(out) == expected, out


def test_the_worker_is_told_no_seed(tmp_path):
    path = tmp_path / "spy.py"
    path.write_text(GOOD + '''
import sys, json
_told = open("/proc/self/cmdline", "rb").read().decode(errors="replace")
print("ARGV:" + _told.replace("\\0", " "), file=sys.stderr)
''')
    rc, out = check(path, "--seed", "123456789")
    assert rc == 0, out
    argv = [ln for ln in out.splitlines() if ln.startswith("ARGV:")]
    assert argv and all("123456789" not in ln and "seed" not in ln for ln in argv), argv


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the emulator)")
def test_an_honest_cu_passes_where_the_parent_decides():
    done = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           "labs/solutions/my_softmax.cu"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and " 0 failed" in done.stdout, done.stdout + done.stderr


SIGNAL_DURING_CALL = '''
import signal
_rows = softmax_rows
def softmax_rows(x2d, out):
    signal.signal(signal.SIGALRM, lambda *a: None)  # a route to write out after the call
    _rows(x2d, out)
'''

PROFILE_AT_IMPORT = '''
import sys
sys.setprofile(lambda frame, event, arg: None)  # code between the grader's own lines
'''


@pytest.mark.parametrize("cheat,said", [(SIGNAL_DURING_CALL, "installed signal.SIGALRM"),
                                        (PROFILE_AT_IMPORT, "installed sys.setprofile")],
                         ids=["a signal handler during a call", "a profile hook at import"])
def test_code_that_would_run_around_the_kernel_is_refused(tmp_path, cheat, said):
    path = tmp_path / "hooks.py"
    path.write_text(GOOD + cheat)
    rc, out = check(path, "--seed", "3", "--case", "3x4099")
    assert rc == 1 and said in " ".join(out.split()), out
