"""The Triton GEMM ladder: one file per rung, each a ``@triton.jit`` kernel beside its
``kernel[grid](...)`` launch, registered under its own name.

| name           | file               | what it adds                                            |
|----------------|--------------------|---------------------------------------------------------|
| `triton-naive` | `v0_direct.py`     | a tile of C per program, `tl.dot`, masks on every edge  |
| `triton-v1`    | `v1_grouped.py`    | grouped order for L2, a tile per shape, pipelined loads |
| `triton-v2`    | `v2_persistent.py` | persistent programs, TMA tensor descriptors (Hopper)    |
| `triton-v3`    | `v3_splitk.py`     | split-K for decode shapes, a deterministic float32 sum  |
| `triton`       | `best.py`          | the rung and tile a tuned table (or heuristic) picks    |

Each rung file has ``matmul_tiles(a, b, c, config=None)``, the tile-kernel contract of
gemm/args.py: it launches what its ``decide`` chose for the key of the operands (once per key,
common.py) with the ``kernel[grid](...)`` written in that file (``launch``). ``which(a, b, name)``
describes that same decision. float32 products are IEEE (no TF32); 16-bit inputs add in float32.

Without a GPU the kernels run in Triton's interpreter (core/triton_mode.py chooses it before
triton is imported), one call at a time. The interpreter has no bfloat16 ``tl.dot`` (it
multiplies the raw 16-bit patterns), so there the rungs refuse bfloat16 with an error; float32
and float16 run. triton-v2 runs triton-v1 there (and on GPUs without TMA), and says so.
"""

from __future__ import annotations

import torch

from phase24.core.triton_mode import INTERPRETED  # (chooses the interpreter before triton)
from phase24.gemm.args import check_inputs, entry  # noqa: E402
from phase24.gemm.triton import (best, common, v0_direct, v1_grouped,  # noqa: E402
                                 v2_persistent, v3_splitk)

RUNGS = {"triton-naive": v0_direct, "triton-v1": v1_grouped, "triton-v2": v2_persistent,
         "triton-v3": v3_splitk, "triton": best}
IMPLEMENTATIONS = {name: entry(name, rung.matmul_tiles, allow_cpu=INTERPRETED)
                   for name, rung in RUNGS.items()}


def which(a: torch.Tensor, b: torch.Tensor, name: str = "triton") -> str:
    """The launches rung ``name`` makes for operands like (a, b), in words (fallbacks included):
    the decision its ``matmul_tiles`` launches for their key (common.decided)."""
    check_inputs(a, b, name, allow_cpu=INTERPRETED)
    m, k = a.shape
    n = b.shape[1]
    if m * n == 0:
        return "nothing to launch (C is empty)"
    if k == 0:
        return "no kernel: C filled with zeros (K = 0, an empty sum)"
    if INTERPRETED and a.dtype == torch.bfloat16:
        return "refused: Triton's interpreter has no bfloat16 tl.dot"
    copied = [w for w, t in (("a", a), ("b", b)) if not t.is_contiguous()]
    copy = f" (after a row-major copy of {' and '.join(copied)})" if copied else ""
    return common.decided(RUNGS[name].decide, a, b, None).describe() + copy


__all__ = ["IMPLEMENTATIONS", "RUNGS", "INTERPRETED", "which"]
