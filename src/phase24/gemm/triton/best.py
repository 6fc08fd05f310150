"""triton: the rung and configuration to run for a shape, from a table measured offline.

An offline tuner times each rung's candidates (v1_grouped.candidates, v3_splitk.candidates) on
the benchmark's shapes on one GPU and writes the fastest per (dtype, M, N and K rounded up to
powers of two) into triton_configs.json (beside this file) with the GPU's name. On that GPU
`triton` looks the shape up there (common.tuned_pick); on any other GPU, for shapes the table
lacks, and in the interpreter it follows the heuristic below. The table is empty until a GPU run
fills it. Either way the chosen rung may fall back (v2 without TMA runs v1), and which() says so.
This file has no kernel of its own: the plan it returns is the chosen rung's, launched by that
rung's `launch`.

Heuristic: decode shapes (M <= 64) whose tiles leave SMs idle and whose K has steps to spare go
to v3 (split-K); 16-bit inputs whose rows suit TMA on Hopper go to v2 (persistent); the rest,
float32 among them (FMA products, which the TMA loads do not speed up), to v1.
"""

from __future__ import annotations

import torch

from phase24.gemm.triton import common, v1_grouped, v2_persistent, v3_splitk
from phase24.gemm.triton.common import Plan

RUNGS = {"triton-v1": v1_grouped, "triton-v2": v2_persistent, "triton-v3": v3_splitk}


def pick(a: torch.Tensor, b: torch.Tensor, c) -> tuple:
    """(rung module, its Config or None for its own default)."""
    hit = common.tuned_pick(a, b)
    if hit is not None:
        rung = RUNGS[hit[0]]
        return rung, rung.Config(**hit[1])
    m = a.shape[0]
    if m <= 64 and v3_splitk.default_config(a, b).split > 1:
        return v3_splitk, None
    if a.dtype != torch.float32 and not v2_persistent.why_not(a, b, c):
        return v2_persistent, None
    return v1_grouped, None


def decide(a, b, c, config=None) -> Plan:
    """(``config`` is not used: the configuration is the chosen rung's.)"""
    rung, cfg = pick(a, b, c)
    return rung.decide(a, b, c, cfg)


def matmul_tiles(a, b, c, config=None) -> None:
    """The tile-kernel contract (gemm/args.py): C = A @ B into c, by the rung chosen."""
    common.run(decide, a, b, c, config)
