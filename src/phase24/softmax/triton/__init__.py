"""The Triton softmax ladder: one file per rung, each a ``@triton.jit`` (or ``@gluon.jit``)
kernel with its launcher, registered under its own name.

| name           | file              | what it adds                                              |
|----------------|-------------------|-----------------------------------------------------------|
| `triton-naive` | `v0_naive.py`     | one program per row, the whole row in one block           |
| `triton-v1`    | `v1_rows.py`      | several short rows per program, warps sized to the tile   |
| `triton-v2`    | `v2_split.py`     | a long row split over programs, in two launches           |
| `triton-v3`    | `v3_lagged.py`    | one launch, one read: programs trade partials and wait     |
| `triton-v4`    | `v4_ring.py`      | v3 with its chunks in a shared-memory ring (Gluon)         |
| `triton-v5`    | `v5_whole_row.py` | the whole row in shared memory (Gluon)                    |
| `triton`       | `best.py`         | the rung and configuration a tuned table picks per shape  |

Each rung file has ``softmax_rows(x2d, out, config=None)``, the learner's starter's contract
(labs/starters/my_softmax.py): it launches the kernel(s) with ``kernel[(grid,)](...)`` written in
that file (``launch``), after ``decide`` chose the grid, arguments, scratch and any fallback to
another rung, once per key (common.py). ``which(x, name)`` describes that same decision. An
input larger than one launch takes (more than 2^30 rows, or 2^24 chunks where a rung keeps a
word a chunk) runs in parts, ranges of its rows launched one after another (parts.py).

Without a GPU the kernels run in Triton's interpreter. Triton chooses between compiling and
interpreting when it is first imported, from the variable TRITON_INTERPRET; so that nothing has
to be set by hand, a process that has no CUDA GPU and has not set the variable gets
TRITON_INTERPRET=1 (core/triton_mode.py), before triton is imported. (The Gluon rungs have no
interpreter: there they run the rung they fall back to.)
"""

from __future__ import annotations

import functools

import torch

import phase24.core.triton_mode  # noqa: F401  (chooses the interpreter before triton is imported)
from phase24.softmax.args import check_input, entry, rows_view  # noqa: E402
from phase24.softmax.triton import (best, common, v0_naive, v1_rows, v2_split,  # noqa: E402
                                    v3_lagged, v4_ring, v5_whole_row)

RUNGS = {"triton-naive": v0_naive, "triton-v1": v1_rows, "triton-v2": v2_split,
         "triton-v3": v3_lagged, "triton-v4": v4_ring, "triton-v5": v5_whole_row,
         "triton": best}
INTERPRETED = common.INTERPRETED
CPU_HINT = (" (without a GPU, Triton's interpreter runs CPU tensors; it is chosen when triton is "
            "first imported, with TRITON_INTERPRET=1, which the lab sets where no GPU is found)")
IMPLEMENTATIONS = {name: entry(name, rung.softmax_rows, allow_cpu=INTERPRETED, cpu_hint=CPU_HINT,
                         launches=None if INTERPRETED else functools.partial(common.fast_launches,
                                                                             rung.decide))
                   for name, rung in RUNGS.items()}


def which(x: torch.Tensor, name: str = "triton") -> str:
    """The launches rung ``name`` makes for a tensor like ``x``, in words (fallbacks included):
    the decision its ``softmax_rows`` launches for x's key (common.decided, made once a key)."""
    check_input(x, name, allow_cpu=INTERPRETED, cpu_hint=CPU_HINT)
    if x.numel() == 0:
        return "nothing to launch (empty tensor)"
    x2d = rows_view(x)
    out = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
    return common.decided(RUNGS[name].decide, x2d, out).plan.describe()


__all__ = ["IMPLEMENTATIONS", "RUNGS", "INTERPRETED", "which"]
