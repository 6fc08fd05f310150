"""The CUDA C softmax ladder: one .cu file per rung in this folder, the small headers they share
(one idea each), the configurations each rung compiles (configs.py), and their launchers
(launchers.py) as registry entries.

``IMPLEMENTATIONS`` maps "cuda-naive", "cuda-v1" .. "cuda-v10" and "cuda" (the best rung for
each shape) to ``softmax(x, out=None)``; ``RUNGS`` maps the same names to their row kernels;
``which(x, name)`` says which kernel(s) run for ``x``; ``build_jobs(targets)`` lists the files
``phase24 build`` compiles (the Hopper-only ones, ``HOPPER_ONLY``, for sm_90a alone).
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch

from phase24.bridge.launch import recording
from phase24.bridge.replay import Replays
from phase24.softmax.args import check_input, entry, rows_view
from phase24.softmax.cuda.configs import CLUSTER_KINDS, FILES
from phase24.softmax.cuda.launchers import RUNGS

SOURCE_DIR = Path(__file__).parent
# Kernel files that use Hopper-only features (thread-block clusters), built for sm_90a alone.
HOPPER_ONLY = {FILES[kind] for kind in CLUSTER_KINDS}


def build_jobs(targets) -> list[tuple[Path, str]]:
    """(file, target) for every rung's file and target; the Hopper-only files for sm_90a alone."""
    return [(SOURCE_DIR / name, t) for name in sorted(FILES.values()) for t in targets
            if t == "sm_90a" or name not in HOPPER_ONLY]


# Each shape's launches, chosen by its launcher on the first call and replayed after (the
# launcher's choice is Python that costs as much as the kernel on a few rows).
replays = Replays()


def _replayed(rows):
    def replayed(x2d, out):
        replays(rows, x2d, out)

    replayed.__name__ = rows.__name__
    return replayed


IMPLEMENTATIONS = {name: entry(name, _replayed(rows), launches=functools.partial(replays.launches, rows))
                   for name, rows in RUNGS.items()}


def which(x: torch.Tensor, name: str = "cuda") -> str:
    """The launches rung ``name`` makes for a tensor like ``x``, in words: each kernel with its
    grid, block and dynamic shared memory, recorded as its launcher makes them (on ``x``'s GPU;
    the launches run)."""
    check_input(x, name)
    if x.numel() == 0:
        return "nothing to launch (empty tensor)"
    x2d = rows_view(x)
    out = torch.empty(x2d.shape, dtype=x.dtype, device=x.device)
    with torch.cuda.device(x.device), recording() as seen:
        RUNGS[name](x2d, out)
    return "; ".join(f"{name} {loaded.kernel.name} ({loaded.kernel.source.name}): grid {grid}, "
                     f"block {block}, {shared} B dynamic shared memory"
                     for loaded, grid, block, _, shared in seen)


__all__ = ["HOPPER_ONLY", "IMPLEMENTATIONS", "RUNGS", "SOURCE_DIR", "build_jobs", "which"]
