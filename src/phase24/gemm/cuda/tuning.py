"""What the offline tuner times for the CUDA C GEMM ladder, and the table it writes.

Candidates for a shape: every configuration of every rung from shared-memory tiling on (v2 .. v10;
the naive and coalesced rungs are never the fastest on a shape worth a table). The table keeps
the fastest per (dtype, M, N, K) of the benchmark's shapes: launchers.tuned reads it, for the GPU
it was measured on. Until a run on that GPU writes it, tuned_configs.json has no entries and
``cuda`` runs launchers.gemm_best's heuristic. v9 and v10 (Hopper only) are candidates everywhere;
on another GPU their launchers refuse, and the tuner records each configuration as refused.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG
from phase24.gemm.cuda import launchers as ci
from phase24.gemm.cuda.configs import TUNABLE, compiled_for

TABLE = ci.TUNED_FILE
TUNED_KINDS = TUNABLE


def candidates(a: torch.Tensor, b: torch.Tensor, only: list[str] | None = None) -> list[tuple]:
    """(what a record says of it, fn(a, b, c)) for each configuration worth timing on (a, b)."""
    return [({"kind": kind, "config": list(config)},
             lambda x, y, out, kind=kind, config=config: ci.run(kind, config, x, y, out))
            for kind in TUNED_KINDS if (only is None or kind in only)
            and compiled_for(kind, a.dtype) for config in ci.configs(kind)]


def table(run: dict) -> list[dict]:
    """The fastest configuration per (dtype, M, N, K) of a tuning run, as launchers.tuned reads
    it, with each rung's own fastest ("rungs": what cuda-v2 .. cuda-v10 run on that shape), among
    the configurations the rungs still compile. A run's shape: {"dtype": "float32", "M", "N",
    "K", "best": {"kind", "config", "us"}, "all": [{"kind", "config", "us"} or {"kind",
    "config", "skipped"}, ...]}."""
    def compiled(t):  # a configuration a run timed may have left the rung since
        return tuple(t["config"]) in ci.configs(t["kind"])

    entries = []
    for e in run["shapes"]:
        timed = sorted((t for t in e.get("all", [e["best"]] if e.get("best") else [])
                        if "us" in t and compiled(t)), key=lambda t: t["us"])
        if not timed:
            continue
        rungs = {}
        for t in reversed(timed):  # the fastest of each kind is written last
            rungs[t["kind"]] = t["config"]
        entries.append({"dtype": TAG[getattr(torch, e["dtype"])], "M": e["M"], "N": e["N"],
                        "K": e["K"], "kind": timed[0]["kind"], "config": timed[0]["config"],
                        "us": timed[0]["us"], "rungs": dict(sorted(rungs.items()))})
    return entries


def write_table(run: dict, path: str | Path, source: str) -> None:
    tuned.write(path, run["gpu"], source, table(run))
