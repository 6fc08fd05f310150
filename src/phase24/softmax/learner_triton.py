"""Grade a learner's own Triton softmax file (``python -m phase24 check softmax --file f.py``).

The file's ABI (see labs/starters/my_softmax.py): it defines ``@triton.jit`` kernel(s) and a
Python function ``softmax_rows(x2d, out)`` that fills the contiguous (M, N) tensor ``out`` with
the softmax of each row of ``x2d``, an (M, N) view whose last dim has stride 1 and whose row
stride ``x2d.stride(0)`` may be anything >= N. The checker wraps it like the built-in kernels:
argument checks, any leading shape, empty tensors and non-contiguous inputs are handled for it.

The result must come from the file's kernels: core/learner_py.py imports the file and makes
every call of ``softmax_rows`` launch one of them, under core.guard's ComputeGuard (a file that
calls torch.softmax, falls back to it on long rows or copies into ``out`` fails, naming the
operator). Without a GPU the file's kernels run in Triton's interpreter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from phase24.core.learner_py import LearnerFileError, PyAbi, load
from phase24.softmax.args import entry
from phase24.softmax.triton import INTERPRETED

__all__ = ["ABI", "LearnerFileError", "load_learner_softmax"]

ABI = PyAbi("softmax_rows", ("x2d", "out"), "softmax", "labs/starters/my_softmax.py")


def load_learner_softmax(path: str | Path,
                         witness: bool = False) -> Callable[[torch.Tensor], torch.Tensor]:
    """Import the learner's .py file and return a registry-style ``softmax(x, out=None)`` that
    runs the file's ``softmax_rows`` with the launch check (``witness``: learner_py.load)."""
    path = Path(path)
    return entry(f"triton:{path.name}", load(path, ABI, witness), allow_cpu=INTERPRETED)
