"""The CUDA C GEMM ladder: one .cu file per rung in this folder, the small headers they share
(one idea each) and their launchers, as registry entries.

``IMPLEMENTATIONS`` maps "cuda-naive", "cuda-v1" .. and "cuda" (the best rung for each shape)
to ``matmul(a, b, out=None)``; ``which(a, b, name)`` says what runs; ``build_jobs(targets)``
lists the files ``phase24 build`` compiles.
"""

from __future__ import annotations

from pathlib import Path

SOURCE_DIR = Path(__file__).parent
HOPPER_ONLY: set[str] = set()
IMPLEMENTATIONS: dict = {}


def build_jobs(targets) -> list[tuple[Path, str]]:
    return [(f, t) for f in sorted(SOURCE_DIR.glob("v*.cu")) for t in targets]


def which(a, b, name: str = "cuda") -> str:
    raise KeyError(name)
