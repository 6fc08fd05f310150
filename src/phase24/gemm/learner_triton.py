"""Grade a learner's own Triton GEMM file (``python -m phase24 check gemm --file f.py``).

The file's ABI (see labs/starters/my_gemm.py): it defines ``@triton.jit`` kernel(s) and a Python
function ``matmul_tiles(a, b, c)`` that fills the contiguous (M, N) tensor ``c`` with A @ B,
where ``a`` (M, K) and ``b`` (K, N) are row-major and contiguous, of one dtype (float32, float16
or bfloat16), M, N, K >= 1: the tile-kernel contract of the lab's own rungs (gemm/args.py). The
checker wraps it like them: argument checks, transposed or sliced operands (copied row-major),
empty sizes and K = 0 are handled for it.

The result must come from the file's kernels: core/learner_py.py imports the file and makes
every call of ``matmul_tiles`` launch one of them, under core.guard's ComputeGuard (a file that
calls torch.matmul, falls back to it past some size or copies into ``c`` fails, naming the
operator). Without a GPU the file's kernels run in Triton's interpreter, which has no bfloat16
``tl.dot`` (it multiplies the raw 16-bit patterns): there bfloat16 is not checked, and the
checker says so.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.gemm.args import entry
from phase24.gemm.triton import INTERPRETED
from phase24.core.learner_py import PyAbi, load

ABI = PyAbi("matmul_tiles", ("a", "b", "c"), "GEMM", "labs/starters/my_gemm.py")


def load_learner_gemm(path: str | Path, witness: bool = False) -> tuple:
    """(a registry-style ``matmul(a, b, out=None)`` running the file's ``matmul_tiles`` with the
    launch check (``witness``: learner_py.load), notes [(text, failed)], the dtypes it is checked
    in here)."""
    path = Path(path)
    matmul = entry(f"triton:{path.name}", load(path, ABI, witness), allow_cpu=INTERPRETED)
    if not INTERPRETED:
        return matmul, [], None
    note = ("bfloat16: not checked here: Triton's interpreter has no bfloat16 tl.dot (it "
            "multiplies the raw 16-bit patterns); a GPU checks it")
    return matmul, [(note, False)], [torch.float32, torch.float16]
