"""What the offline tuner (scripts/tune.py gemm triton) times for the Triton GEMM ladder, and the
table it writes, triton_configs.json, which `triton` (best.py) reads on the GPU it was made on.

Candidates for a shape: v1's tiles and stage counts (v1_grouped.candidates); on a GPU with TMA and
operands it can take, the same tiles in v2's persistent kernel (stages fitted beside C's tile);
for decode shapes (M <= 64) v3's split-K configurations. The table keeps the fastest per
(dtype, shape class): M, N and K rounded up to powers of two (common.shape_class); where two
benchmark shapes share a class, the larger one's entry is kept.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG
from phase24.gemm.triton import common, v1_grouped, v2_persistent, v3_splitk

TABLE = common.TABLE


def candidates(a: torch.Tensor, b: torch.Tensor, only: list[str] | None = None) -> list[tuple]:
    """(what a record says of it, fn(a, b, c)) for each configuration worth timing on (a, b)."""
    (m, k), n = a.shape, b.shape[1]
    elem, smem = a.element_size(), common.smem_per_program(a.device)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    tma = a.dtype != torch.float32 and not v2_persistent.why_not(a, b, c)
    rungs = {"triton-v1": (v1_grouped.matmul_tiles, v1_grouped.candidates(m, n, k, elem, smem))}
    if tma:
        rungs["triton-v2"] = (v2_persistent.matmul_tiles,
                              [v2_persistent.fitted(cfg, elem, smem) for cfg in rungs["triton-v1"][1]])
    if m <= 64:
        rungs["triton-v3"] = (v3_splitk.matmul_tiles, v3_splitk.candidates(
            m, n, k, elem, smem, common.num_sms(a.device)))
    return [({"rung": name, "config": dataclasses.asdict(cfg)},
             lambda x, y, out, fn=fn, cfg=cfg: fn(x, y, out, cfg))
            for name, (fn, configs) in rungs.items() if only is None or name in only
            for cfg in dict.fromkeys(configs)]


def table(run: dict) -> list[dict]:
    """The fastest configuration per (dtype, shape class) of a tuning run, as common.tuned_pick
    reads it. A run's shape: {"dtype", "M", "N", "K", "best": {"rung", "config", "us"}}."""
    best = {}
    for e in sorted((e for e in run["shapes"] if e.get("best")),
                    key=lambda e: e["M"] * e["N"] * e["K"]):
        dtype = TAG[getattr(torch, e["dtype"])]
        m, n, k = common.shape_class(e["M"], e["N"], e["K"])
        best[(dtype, m, n, k)] = {"dtype": dtype, "m": m, "n": n, "k": k,
                                  "rung": e["best"]["rung"], "config": e["best"]["config"],
                                  "us": e["best"]["us"], "shape": [e["M"], e["N"], e["K"]]}
    return list(best.values())


def write_table(run: dict, path: str | Path, source: str) -> None:
    tuned.write(path, run["gpu"], source, table(run))
