"""What `scripts/tune.py softmax triton` times for the Triton ladder, and the table it writes.

Candidates for a shape: v1's tiles where a row fits one, v2 for longer rows, v3 and v4 for long
rows (from 32768 values with few rows, 65536 otherwise), v5 from 16384, each rung's own list of
configurations. A candidate that would run another rung's kernel (a fallback) is recorded as
skipped. The table keeps the fastest per (dtype, row length rounded up to a power of two,
row-count class); the 16-bit types share theirs.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

from phase24.core.dtypes import TAG
from phase24.softmax.args import rows_class
from phase24.softmax.triton import best, common, v1_rows, v2_split, v3_lagged, v4_ring, v5_whole_row

TABLE = best.TABLE


def _configs(m: int, n: int, elem: int, sms: int) -> list[tuple[str, object]]:
    few = m < sms
    out = []
    if common.next_pow2(n) <= v1_rows.MAX_BLOCK_N:
        out += [("triton-v1", c) for c in v1_rows.candidates(n)]
    if n > v1_rows.MAX_BLOCK_N:
        out.append(("triton-v2", v2_split.default_config(m, n, sms)))
    if n >= (32768 if few else 65536):
        out += [("triton-v3", c) for c in v3_lagged.candidates(n, elem)]
    if n >= 32768:
        out += [("triton-v4", c) for c in v4_ring.candidates(n, elem)]
    if n >= 16384:
        out += [("triton-v5", c) for c in v5_whole_row.candidates(n, elem)]
    return out


def candidates(x: torch.Tensor, only: list[str] | None = None) -> list[tuple[dict, object]]:
    """(what a record says of it, fn(x2d, out), or None when it would not run its own kernel)."""
    m, n = x.shape
    out = torch.empty_like(x)
    found = []
    for name, config in _configs(m, n, x.element_size(), common.num_sms(x.device)):
        if only is not None and name not in only:
            continue
        rung = best.TUNED[name]
        plan = rung.decide(x, out, config)
        fields = {"rung": name, "config": dataclasses.asdict(config), "runs": plan.describe()}
        fn = (lambda a, b, rung=rung, config=config: rung.softmax_rows(a, b, config)) \
            if plan.launches[0].rung == name else None  # None: it falls back to another rung
        found.append((fields, fn))
    return found


def table(run: dict) -> list[dict]:
    """The fastest configuration per (dtype, BLOCK_N, rows class), as best.table reads it."""
    rows = []
    for e in run["shapes"]:
        if e["best"]:
            key = dict(block_n=common.next_pow2(e["N"]), rows=rows_class(e["M"]))
            pick = {"rung": e["best"]["rung"], "config": e["best"]["config"],
                    "us": e["best"]["us"], "shape": f"{e['M']}x{e['N']}"}
            tag = TAG[getattr(torch, e["dtype"])]
            rows.append({"dtype": tag, **key, **pick})
            if tag == "bf16":
                rows.append({"dtype": "f16", **key, **pick})
    return rows


def write_table(run: dict, path: str | Path, source: str) -> None:
    with open(path, "w") as f:
        json.dump({"gpu": run["gpu"], "source": source, "commit": run["commit"],
                   "date": run["date"], "best": table(run)}, f, indent=1)
        f.write("\n")
