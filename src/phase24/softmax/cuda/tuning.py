"""What `scripts/tune.py softmax cuda` times for the CUDA C ladder, and the table it writes.

Candidates for a shape: every configuration of a tunable rung (v4 .. v10; the cluster rungs on
Hopper only) that holds the row without more than twice its room (four times for few rows, where
bigger clusters may pay), and v3 where its largest block holds the row. The table keeps the
fastest per (dtype, N, row-count class); the 16-bit types share theirs.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG, vec16
from phase24.softmax.args import rows_class
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.cuda.configs import SLOTS

TABLE = ci.TUNED_FILE


def candidates(x: torch.Tensor, only: list[str] | None = None) -> list[tuple[dict, object]]:
    """(what a record says of it, fn(x2d, out)) for each configuration worth timing on x."""
    m, n = x.shape
    dtype, vw = x.dtype, vec16(x.dtype)
    room = 4 * n if ci._few(m) else 2 * n
    kinds = [k for k in SLOTS if (ci.has_clusters() or k not in ci.CLUSTER_KINDS)
             and (only is None or k in only)]
    found = [({"kind": kind, "config": c},
              lambda a, b, kind=kind, c=c: ci.KINDS[kind](a, b, config=c))
             for kind in kinds for c in ci.configs(kind, dtype)
             if n <= ci.capacity(kind, c, dtype) <= (2 * n if kind in ("v4", "v5", "v6") else room)
             or (n < vw and c == (1, 1))]  # rows shorter than a slot: v4/v6's smallest
    v3_reach = 256 * ci.configs("v3", dtype)[-1][0] * vw  # its largest K, 256 threads
    if n <= v3_reach and (only is None or "v3" in only):  # v3 has no choice to force
        found.append(({"kind": "v3", "config": None}, ci.rows_v3))
    return found


def table(run: dict) -> list[dict]:
    """The fastest configuration per (dtype, N, row-count class), as launchers.tuned reads it."""
    best = [{"dtype": TAG[getattr(torch, e["dtype"])], "N": e["N"], "rows": rows_class(e["M"]),
             "kind": e["best"]["kind"], "config": e["best"]["config"], "us": e["best"]["us"]}
            for e in run["shapes"] if e["best"]]
    return best + [{**b, "dtype": "f16"} for b in best if b["dtype"] == "bf16"]


def write_table(run: dict, path: str | Path, source: str) -> None:
    tuned.write(path, run["gpu"], source, table(run))
