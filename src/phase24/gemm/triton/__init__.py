"""The Triton GEMM ladder: one file per rung, each a ``@triton.jit`` kernel beside its
``kernel[grid](...)`` launch, registered under its own name. Without a GPU the kernels run in
Triton's interpreter (core/triton_mode.py chooses it before triton is imported).
"""

from __future__ import annotations

from phase24.core.triton_mode import INTERPRETED  # (chooses the interpreter before triton)

IMPLEMENTATIONS: dict = {}


def which(a, b, name: str = "triton") -> str:
    raise KeyError(name)


__all__ = ["IMPLEMENTATIONS", "INTERPRETED", "which"]
