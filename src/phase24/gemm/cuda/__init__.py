"""The CUDA C GEMM ladder: one .cu file per rung in this folder, the small headers they share
(one idea each), each rung's record beside its file (``v4_registers_2d.py``: what the launcher
must know of it; configs.py lists them) and their launchers (launchers.py), as registry entries.

``IMPLEMENTATIONS`` maps "cuda-naive", "cuda-v1" .. "cuda-v11" and "cuda" (the best rung for each
shape) to ``matmul(a, b, out=None)``; ``RUNGS`` maps the same names to their tile kernels;
``which(a, b, name)`` says which kernel runs for the operands; ``build_jobs(targets)`` lists the
files ``phase24 build`` compiles (the Hopper-only ones, ``HOPPER_ONLY``: v9's to v11's, for sm_90a
alone).
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.bridge.launch import recording
from phase24.bridge.replay import Replays
from phase24.gemm.args import check_inputs, entry, row_major
from phase24.gemm.cuda.configs import FILES, HOPPER_KINDS
from phase24.gemm.cuda.launchers import RUNGS

SOURCE_DIR = Path(__file__).parent
# Kernel files that use Hopper-only instructions (wgmma), built for sm_90a alone.
HOPPER_ONLY = {FILES[kind] for kind in HOPPER_KINDS}


def build_jobs(targets) -> list[tuple[Path, str]]:
    """(file, target) for every rung's file and target; the Hopper-only files for sm_90a alone."""
    return [(SOURCE_DIR / name, t) for name in sorted(FILES.values()) for t in targets
            if t == "sm_90a" or name not in HOPPER_ONLY]


# Each shape's launch, chosen by its launcher on the first call and replayed after (the choice is
# Python that costs as much as a small product).
replays = Replays()


def _replayed(kernel):
    def replayed(a, b, c):
        replays(kernel, a, b, c)

    replayed.__name__ = kernel.__name__
    return replayed


IMPLEMENTATIONS = {name: entry(name, _replayed(kernel)) for name, kernel in RUNGS.items()}


def which(a: torch.Tensor, b: torch.Tensor, name: str = "cuda") -> str:
    """The launches rung ``name`` makes for operands like ``a`` and ``b``, in words: each kernel
    with its grid and block, recorded as its launcher makes them (on a's GPU; the launches run)."""
    check_inputs(a, b, name)
    m, n = a.shape[0], b.shape[1]
    if m == 0 or n == 0 or a.shape[1] == 0:
        return "nothing to launch (an empty product)"
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    with torch.cuda.device(a.device), recording() as seen:
        RUNGS[name](row_major(a), row_major(b), out)
    return "; ".join(f"{name} {loaded.kernel.name} ({loaded.kernel.source.name}): grid {grid}, "
                     f"block {block}" for loaded, grid, block, _, _ in seen)


__all__ = ["HOPPER_ONLY", "IMPLEMENTATIONS", "RUNGS", "SOURCE_DIR", "build_jobs", "which"]
