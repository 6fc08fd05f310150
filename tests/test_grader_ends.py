"""The grader always ends, and leaves nothing behind: a file that closes its descriptors and spins
gets a verdict within --timeout; a child the file detaches (a new session, so outside the
worker's process group) is ended with the check; a grader killed with SIGKILL takes its worker
with it (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOOD = (ROOT / "tests" / "learner_files" / "good.py").read_text()
linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux's /proc")

CLOSES_AND_SPINS = '''
_rows = softmax_rows
def softmax_rows(x2d, out):
    import os
    os.closerange(0, 1024)
    while True:
        pass
'''

DETACHES_A_CHILD = '''
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # MARK"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''

SLOW = '''
_rows = softmax_rows
def softmax_rows(x2d, out):
    import time
    time.sleep(600)
'''


def _file(tmp_path: Path, body: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(GOOD + body.replace("MARK", name))
    return path


def _alive(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmd:
                found.append(int(entry))
    return found


def check(path: Path, timeout: int = 10) -> tuple[int, str, float]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                           str(path), "--dtype", "float32", "--case", "3x4099", "--timeout",
                           str(timeout)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - t0


@linux
def test_a_file_that_closes_its_descriptors_and_spins_gets_a_verdict(tmp_path):
    rc, out, took = check(_file(tmp_path, CLOSES_AND_SPINS, "spins.py"))
    assert rc == 1 and "Traceback" not in out, out
    assert "closed its channel to the grader" in out or "timed out after 10 s" in out, out
    assert took < 2 * 10 + 30 + 60, took  # two cases at most before "not run", and the loads
    assert not _alive("spins.py") or not any(_alive("phase24.harness.isolate")), out


@linux
def test_a_detached_child_of_the_file_is_ended_with_the_check(tmp_path):
    rc, out, _ = check(_file(tmp_path, DETACHES_A_CHILD, "detaches.py"))
    assert rc == 0 and "Traceback" not in out, out  # the file is right; its child still goes
    time.sleep(0.5)
    assert _alive("detaches.py") == [], "a child of the checked file outlived the check"


@linux
def test_killing_the_grader_with_sigkill_ends_its_worker(tmp_path):
    path = _file(tmp_path, SLOW, "sleeps.py")
    grader = subprocess.Popen([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                               str(path), "--dtype", "float32", "--case", "3x4099"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def workers():
        return [p for p in _alive("phase24.harness.isolate")
                if Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]
                == str(grader.pid)]

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not workers():
        time.sleep(0.5)
    mine = workers()
    assert mine, "the grader started no worker"
    time.sleep(3)  # the worker is loading the file or sleeping in it
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    time.sleep(2)
    assert [p for p in mine if Path(f"/proc/{p}").exists()
            and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"] == []


@linux
def test_ctrl_c_and_a_keyboard_interrupt_in_the_file_leave_one_line_and_no_folder(tmp_path):
    raises = _file(tmp_path, "\n_rows = softmax_rows\ndef softmax_rows(x2d, out):\n"
                   "    raise KeyboardInterrupt\n", "interrupts.py")
    rc, out, _ = check(raises)
    assert rc == 1 and "Traceback" not in out and "KeyboardInterrupt" in out, out
    grader = subprocess.Popen([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                               str(_file(tmp_path, SLOW, "sleeps2.py")), "--dtype", "float32",
                               "--case", "3x4099"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    time.sleep(20)  # loaded, and asleep in its first call
    grader.send_signal(signal.SIGINT)
    out, _ = grader.communicate(timeout=60)
    assert grader.returncode == 128 + signal.SIGINT and "stopped by SIGINT" in out, out
    assert "Traceback" not in out, out
    left = list(Path("/dev/shm").glob(f"phase24-case-{grader.pid}-*")) + \
        list(Path(tempfile.gettempdir()).glob(f"phase24-case-{grader.pid}-*"))
    assert left == [], left
