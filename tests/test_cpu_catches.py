"""What a GPU would catch, a CPU catches too: a softmax wrong past 8192 columns, a GEMM that drops
K past 256, and one that multiplies float32 in TF32 (Triton's default for float32 on a GPU; the
interpreter rounds its operands as the tensor cores do: core/triton_mode.py) all fail
`check --file` on a CPU, while the solutions they are planted in pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU's case list")
GOOD = ROOT / "tests" / "learner_files" / "good.py"
GEMM = ROOT / "labs" / "solutions" / "my_gemm.py"
STORE = "mask=cols < n)\n"
PLANTED = {
    "softmax wrong past 8192 columns": (
        "softmax", GOOD, lambda t: t[:t.rindex(STORE)] + "mask=(cols < n) & (cols < 8192))\n"
        + t[t.rindex(STORE) + len(STORE):], "2x12289"),
    "gemm that drops K past 256": (
        "gemm", GEMM, lambda t: t.replace("for k0 in range(0, K, BLOCK_K):",
                                          "for k0 in range(0, min(K, 256), BLOCK_K):"), "9x20x300"),
    "gemm in TF32": (
        "gemm", GEMM, lambda t: t.replace('input_precision="ieee"', 'input_precision="tf32"'),
        "33x65x129"),
}


def check(op: str, path: Path, case: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "phase24", "check", op, "--file", str(path),
                           "--dtype", "float32", "--case", case, "--seed", "4"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, out


@pytest.mark.parametrize("name", PLANTED)
def test_a_cpu_catches_it(name, tmp_path):
    op, source, plant, case = PLANTED[name]
    rc, out = check(op, source, case)
    assert rc == 0 and "1 passed, 0 failed" in out, out
    planted = tmp_path / source.name
    text = source.read_text()
    assert plant(text) != text
    planted.write_text(plant(text))
    rc, out = check(op, planted, case)
    assert rc == 1 and "0 passed, 1 failed" in out, out
