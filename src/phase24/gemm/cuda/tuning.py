"""What the offline tuner times for the CUDA C GEMM ladder, and the table it writes.

Candidates for a shape: every configuration of every rung from shared-memory tiling on (v2 .. v8;
the naive and coalesced rungs are never the fastest on a shape worth a table). The table keeps
the fastest per (dtype, M, N, K) of the benchmark's shapes: launchers.tuned reads it, for the GPU
it was measured on. Until a run on that GPU writes it, tuned_configs.json has no entries and
``cuda`` runs launchers.gemm_best's heuristic.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG
from phase24.gemm.cuda import launchers as ci
from phase24.gemm.cuda.configs import compiled_for

TABLE = ci.TUNED_FILE
TUNED_KINDS = ("v2", "v3", "v4", "v5", "v6", "v7", "v8")


def candidates(a: torch.Tensor, b: torch.Tensor, only: list[str] | None = None) -> list[tuple]:
    """(what a record says of it, fn(a, b, c)) for each configuration worth timing on (a, b)."""
    return [({"kind": kind, "config": list(config)},
             lambda x, y, out, kind=kind, config=config: ci.run(kind, config, x, y, out))
            for kind in TUNED_KINDS if (only is None or kind in only)
            and compiled_for(kind, a.dtype) for config in ci.configs(kind)]


def table(run: dict) -> list[dict]:
    """The fastest configuration per (dtype, M, N, K) of a tuning run, as launchers.tuned reads
    it. A run's shape: {"dtype": "float32", "M", "N", "K", "best": {"kind", "config", "us"}}."""
    return [{"dtype": TAG[getattr(torch, e["dtype"])], "M": e["M"], "N": e["N"], "K": e["K"],
             "kind": e["best"]["kind"], "config": e["best"]["config"], "us": e["best"]["us"]}
            for e in run["shapes"] if e.get("best")]


def write_table(run: dict, path: str | Path, source: str) -> None:
    tuned.write(path, run["gpu"], source, table(run))
