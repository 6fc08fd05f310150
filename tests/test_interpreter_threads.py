"""Triton's interpreter is not thread-safe; the lab serialises its interpreted launches, so two
threads calling the Triton implementations on a CPU both get right results. Run in a fresh
process: without the lock the interpreter has corrupted the heap and aborted the process."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.interpreter,
              pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter runs on CPUs")]
ROOT = Path(__file__).resolve().parents[1]

CODE = textwrap.dedent("""
    import sys, threading, torch
    from phase24.softmax import IMPLEMENTATIONS
    from phase24.softmax.spec import compare
    from phase24.softmax.reference import softmax_reference

    bad, names = [], sys.argv[1:]
    sys.setswitchinterval(1e-6)  # threads take turns often: a race shows in every run

    def work(t):
        for i, name in enumerate(names * 2):
            g = torch.Generator().manual_seed(100 * t + i)
            x = torch.randn(9, 700 + 37 * t, generator=g).mul(3)
            try:
                why = compare(IMPLEMENTATIONS[name](x), softmax_reference(x), x.dtype).why
            except Exception as err:
                why = repr(err)[:300]
            if why:
                bad.append(f"thread {t} {name}: {why}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print("\\n".join(bad) or "all right")
    sys.exit(1 if bad else 0)
""")


def test_two_threads_in_the_interpreter_both_get_right_results():
    done = subprocess.run([sys.executable, "-c", CODE, "triton-naive", "triton-v1", "triton-v2", "triton-v3", "triton"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "all right" in done.stdout, done.stdout + done.stderr[-3000:]
