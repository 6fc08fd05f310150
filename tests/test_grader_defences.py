"""The grader's own defences, on a CPU: a worker cannot hold it, a lost-context status cannot be
faked with an exit status, bad arguments get one line, nvcc never waits on stdin, and a .cu in
Latin-1 or with headers that include each other still gets a verdict."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU machine's behaviour")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def phase24(*argv: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "phase24", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("option,value,said", [
    ("--timeout", "-5", "give a finite number of seconds above 0"),
    ("--timeout", "inf", "give a finite number of seconds above 0"),
    ("--timeout", "nan", "give a finite number of seconds above 0"),
    ("--seed", str(2**64), "a seed is from 0 to 2^63 - 1"),
    ("--seed", "-1", "a seed is from 0 to 2^63 - 1"),
])
def test_an_argument_out_of_range_is_one_line(option, value, said):
    done = phase24("check", "softmax", "--impl", "torch", option, value)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, \
        done.stderr


def test_a_shape_of_nothing_is_refused():
    done = phase24("bench", "softmax", "--shapes", "0x5")
    assert done.returncode != 0 and "M and N must be at least 1" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def _learner(tmp_path: Path, body: str) -> Path:
    good = (ROOT / "tests" / "learner_files" / "good.py").read_text()
    path = tmp_path / "mine.py"
    path.write_text(good + "\n" + body)
    return path


def test_an_exit_status_of_the_learners_own_is_a_verdict_not_a_restart(tmp_path):
    """sys.exit(3) was the worker's own 'CUDA context lost' status: the grader restarted workers
    on that case forever. Now the worker must say so on its protocol, which an exit cannot."""
    path = _learner(tmp_path, "_rows = softmax_rows\n\ndef softmax_rows(x2d, out):\n"
                              "    import os\n    os._exit(3)\n")
    t0 = time.monotonic()
    done = phase24("check", "softmax", "--file", str(path), "--dtype", "float32", "--case",
                   "33x127", timeout=240)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "exited with status 3" in out, out
    assert time.monotonic() - t0 < 120


def test_loading_has_its_own_time_limit(tmp_path):
    path = _learner(tmp_path, "import time\ntime.sleep(600)\n")
    t0 = time.monotonic()
    done = phase24("check", "softmax", "--file", str(path), "--load-timeout", "5", timeout=300)
    assert done.returncode == 1 and "loading took longer than 5 s" in done.stdout, done.stdout
    assert time.monotonic() - t0 < 60


def test_a_signal_to_the_grader_ends_its_worker(tmp_path):
    """A SIGTERM (a `timeout`, a cancelled job) ended the grader and left a hung worker spinning:
    the worker is a process group of its own, so it must be ended on purpose."""
    path = _learner(tmp_path, "_rows = softmax_rows\n\ndef softmax_rows(x2d, out):\n"
                              "    open(__file__ + '.pid', 'w').write(str(__import__('os').getpid()))\n"
                              "    while True:\n        pass\n")
    proc = subprocess.Popen([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                             str(path), "--timeout", "300"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pid_file = Path(str(path) + ".pid")
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    worker = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM" in err, err
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


@needs_nvcc
def test_a_cu_file_in_latin_1_with_headers_that_include_each_other_gets_a_verdict(tmp_path):
    (tmp_path / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n')
    (tmp_path / "b.cuh").write_text('#pragma once\n#include "a.cuh"\n')
    good = (ROOT / "tests" / "learner_files" / "good.cu").read_text()
    (tmp_path / "row_softmax.cuh").write_text(
        (ROOT / "tests" / "learner_files" / "row_softmax.cuh").read_text())
    path = tmp_path / "mine.cu"
    path.write_bytes('#include "a.cuh"\n// año: una línea en Latin-1\n'.encode("latin-1")
                     + good.encode())
    done = phase24("check", "softmax", "--file", str(path))
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "51 passed, 0 failed" in out and "Traceback" not in out, out


@needs_nvcc
def test_nvcc_never_waits_on_stdin(tmp_path):
    path = tmp_path / "stdin.cu"
    path.write_text('#include "/dev/stdin"\n')
    proc = subprocess.Popen([sys.executable, "-m", "phase24", "check", "softmax", "--file",
                             str(path)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # stdin open, never written
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in out + err, out + err


def test_each_learner_file_has_its_own_log():
    """Two checks of different files with one seed (two terminals, or pytest -n) must not write
    each other's rows: a learner's file gets the log of its own name."""
    done = phase24("check", "softmax", "--file", "tests/learner_files/good.py", "--seed", "5",
                   "--case", "1", "--dtype", "float32")
    assert done.returncode == 0 and "out/check/softmax-good.py-5.log" in done.stdout, done.stdout
    done = phase24("check", "softmax", "--impl", "torch", "--seed", "5", "--case", "1")
    assert "out/check/softmax-5.log" in done.stdout, done.stdout
