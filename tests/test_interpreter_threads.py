"""Triton's interpreter is not thread-safe; the lab serialises its interpreted launches, so two
threads calling an operation's Triton implementations on a CPU both get right results. Run in a
fresh process: without the lock the interpreter has corrupted the heap and aborted the process."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.interpreter,
              pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter runs on CPUs")]
ROOT = Path(__file__).resolve().parents[1]

# Each thread calls every named implementation twice on the operation's small CPU cases (its
# fresh inputs differ by thread), compared with the Op's float64 reference.
CODE = textwrap.dedent("""
    import sys, threading, torch
    from phase24.harness.ops import get

    op, names = get(sys.argv[1]), sys.argv[2:]
    cases = [c for c in op.cases(False) if "x0" not in c.name and not c.name.startswith("0x")][:4]
    bad = []
    sys.setswitchinterval(1e-6)  # threads take turns often: a race shows in every run

    def work(t):
        for i, name in enumerate(names * 2):
            for case in cases:
                inputs = case.make(torch.float32, "cpu", torch.Generator().manual_seed(100 * t + i))
                try:
                    out = op.implementations()[name](*inputs)
                    why = op.compare(out, op.reference(*inputs), torch.float32).why
                except Exception as err:
                    why = repr(err)[:300]
                if why:
                    bad.append(f"thread {t} {name} {case.name}: {why}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print("\\n".join(bad) or "all right")
    sys.exit(1 if bad else 0)
""")


@pytest.mark.parametrize("op,names", [
    ("softmax", ["triton-naive", "triton-v1", "triton-v2", "triton-v3", "triton"]),
    ("gemm", ["triton-naive", "triton-v1", "triton-v2", "triton-v3", "triton"]),
])
def test_two_threads_in_the_interpreter_both_get_right_results(op, names):
    done = subprocess.run([sys.executable, "-c", CODE, op, *names], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "all right" in done.stdout, done.stdout + done.stderr[-3000:]
