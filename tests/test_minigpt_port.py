"""`minigpt parity --file F` grades the learner's part of the port (labs/starters/my_port.py).

A solved copy passes; each planted mistake fails at the step and tensor where it diverges; the
starter as committed fails with one line that says what to write; a file that cannot be graded
gets one line. Never a traceback, and the learner's own labs/starters/my_port.py is not read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from committed import ROOT, committed
from phase24.minigpt import port_grade

SOLVED = ROOT / "labs" / "solutions" / "my_port.py"
GELU = 'F.gelu(self.c_fc(x), approximate="tanh")'
LOSS = "F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))"


def parity(*argv: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "phase24", "minigpt", "parity", *argv],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    return proc.returncode, out


def planted(tmp_path: Path, old: str, new: str) -> Path:
    text = SOLVED.read_text()
    assert old in text, old
    f = tmp_path / "my_port.py"
    f.write_text(text.replace(old, new))
    return f


def test_a_solved_copy_passes_on_the_command_line():
    rc, out = parity("--file", str(SOLVED), "--steps", "12")
    assert rc == 0, out
    assert "step 10/12: every tensor within tolerance" in out, out
    assert out.strip().splitlines()[-1].startswith("PASS: your MLP and cross_entropy match"), out


def test_a_loss_written_by_hand_passes(tmp_path):
    f = planted(tmp_path, LOSS, "(logits.logsumexp(-1) - logits.gather(-1, targets[..., None])"
                                "[..., 0]).mean()")
    v = port_grade.grade(f, steps=20)
    assert v.ok and v.worst < 0.1, v.line()


@pytest.mark.parametrize("old,new,step,tensor,words", [
    # F.gelu's default is the exact (erf) GELU: c_proj's input (the activation's output) differs
    (GELU, "F.gelu(self.c_fc(x))", 1, "transformer.h.0.mlp c_proj input", "max rel err"),
    # float32 inside the MLP: close, not the same
    (GELU, 'F.gelu(self.c_fc(x).float(), approximate="tanh").double()', 1,
     "transformer.h.0.mlp c_proj input", "err/tol"),
    # the sum over positions instead of the mean
    (LOSS, LOSS[:-1] + ', reduction="sum")', 1, "loss", "NumPy 5.56"),
    # a layer cut off from the gradient
    ("self.c_fc(x)", "self.c_fc(x).detach()", 1, "grad transformer.h.1.mlp.c_fc.bias",
     "the loss does not depend on it"),
    # the loss returned per position
    (LOSS, LOSS[:-1] + ', reduction="none")', 1, "loss", "a tensor of shape (128,)"),
    # parameters under names the checkpoint does not have
    ("self.c_fc = ", "self.fc = self.c_fc = ", 0, "transformer.h.0.mlp", "fc.weight (128, 32)"),
])
def test_a_planted_mistake_fails_naming_the_step_and_the_tensor(tmp_path, old, new, step, tensor,
                                                                 words):
    v = port_grade.grade(planted(tmp_path, old, new), steps=3)
    assert not v.ok and v.step == step and v.tensor.startswith(tensor), v.line()
    assert words in v.line(), v.line()


def test_a_mistake_on_the_command_line_is_one_line_with_its_step_and_tensor(tmp_path):
    rc, out = parity("--file", str(planted(tmp_path, GELU, "F.gelu(self.c_fc(x))")),
                     "--steps", "3")
    assert rc == 1, out
    assert out.strip().splitlines()[-1].startswith(
        "FAIL at step 1, tensor transformer.h.0.mlp c_proj input (your activation's output):"), out


def test_an_error_in_the_learners_code_names_its_line(tmp_path):
    f = planted(tmp_path, "return self.c_proj(", "return self.c_proj(x) + self.c_proj(")
    rc, out = parity("--file", str(f), "--steps", "2")
    last = out.strip().splitlines()[-1]
    assert rc == 1 and last.startswith("FAIL at step 1, tensor transformer.h.0.mlp: raised "
                                       "RuntimeError:"), out
    assert "(my_port.py:20, in forward)" in last, out


def test_the_committed_starter_fails_with_one_clear_line(tmp_path):
    starter = committed("labs/starters/my_port.py", tmp_path)
    rc, out = parity("--file", str(starter), "--steps", "2")
    lines = out.strip().splitlines()
    assert rc == 1 and len(lines) == 2, out  # the header, then the verdict
    assert lines[-1] == ("FAIL before step 1, tensor transformer.h.0.mlp: its parameters are none; "
                         "the NumPy model's are c_fc.bias (128,), c_fc.weight (128, 32), "
                         "c_proj.bias (32,), c_proj.weight (32, 128) (Linear's weight is "
                         "(out, in))"), out


def test_the_committed_starter_with_its_mlp_written_fails_at_its_loss(tmp_path):
    """Solving TODO 1 alone moves the verdict on to TODO 2, the loss."""
    text = committed("labs/starters/my_port.py", tmp_path).read_text()
    mlp = SOLVED.read_text().split("class MLP", 1)[1].split("\n\n\ndef ", 1)[0]
    head, rest = text.split("class MLP", 1)
    f = tmp_path / "half.py"
    f.write_text(head + "class MLP" + mlp + "\n\n\ndef " + rest.split("\n\n\ndef ", 1)[1])
    v = port_grade.grade(f, steps=2)
    assert (v.step, v.tensor) == (1, "loss") and ", yours 0.0 " in v.line(), v.line()


@pytest.mark.parametrize("content,said", [
    (None, "FAIL: no such file: "),
    ("import torch\n", "defines no MLP and no cross_entropy"),
    ("def f(:\n", "does not load: SyntaxError: "),
    ("raise ImportError('no module named x')\n", "does not load: ImportError: no module named x"),
    ("MLP = 3\ndef cross_entropy(a, b): pass\n", "MLP is not a torch.nn.Module class"),
])
def test_a_file_that_cannot_be_graded_gets_one_line(tmp_path, content, said):
    f = tmp_path / "port.py"
    if content is not None:
        f.write_text(content)
    rc, out = parity("--file", str(f))
    assert rc == 1 and said in out.strip().splitlines()[-1], out
