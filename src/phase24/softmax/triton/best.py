"""triton: the rung and configuration to run for a shape, from a table measured offline.

scripts/tune_triton.py times every rung's candidate configurations on the benchmark's shapes on
one GPU and writes the fastest per (dtype, row length rounded up to a power of two, rows class)
into src/phase24/softmax/triton_configs.json, with the GPU's name. On that GPU `triton`
looks the shape up there; on any other GPU, and for shapes the table lacks, it follows the
heuristic below. Either way the chosen rung may fall back (see each rung), and which() says so.
Nothing is timed here.
"""
# Measured (H200, results/h200/softmax.json, copy 4273 GB/s):
# bulk rows of 128-262144 values, % of copy: fp32 90.7-98.3, bf16 88.1-98.6;
# few rows (1x32768, 8x131072, 64x32768, 64x262144), us:
# fp32 6.9 / 10.1 / 11.4 / 44.2; bf16 7.0 / 9.0 / 9.1 / 29.1.

from __future__ import annotations

import functools
import json
from pathlib import Path

import torch

from phase24.softmax.args import DTYPE_TAG, rows_class
from phase24.softmax.triton_ladder import (common, v1_rows, v2_split, v3_lagged, v4_ring,
                                           v5_whole_row)
from phase24.softmax.triton_ladder.common import Plan, next_pow2

TABLE = Path(__file__).resolve().parents[1] / "triton_configs.json"
TUNED = {"triton-v1": v1_rows, "triton-v2": v2_split, "triton-v3": v3_lagged,
         "triton-v4": v4_ring, "triton-v5": v5_whole_row}


@functools.cache
def table(gpu: str) -> dict:
    """{(dtype tag, BLOCK_N, rows class): (rung, config)} measured on this GPU, or {}."""
    if not TABLE.exists():
        return {}
    data = json.loads(TABLE.read_text())
    if data["gpu"] != gpu:
        return {}
    return {(e["dtype"], e["block_n"], e["rows"]): (e["rung"], e["config"]) for e in data["best"]}


def lookup(x2d) -> tuple | None:
    """The table's (rung module, config) for x2d on its GPU, or None."""
    if common.INTERPRETED or not x2d.is_cuda:
        return None
    m, n = x2d.shape
    key = (DTYPE_TAG[x2d.dtype], next_pow2(n), rows_class(m))
    hit = table(torch.cuda.get_device_name(x2d.device)).get(key)
    if hit is None:
        return None
    rung = TUNED[hit[0]]
    return rung, rung.Config(**hit[1])


def plan(x2d, out, config=None) -> Plan:
    hit = lookup(x2d)
    if hit is not None:
        rung, cfg = hit
        return rung.plan(x2d, out, cfg)
    m, n = x2d.shape
    if next_pow2(n) <= v1_rows.MAX_BLOCK_N:  # a row fits one program
        return v1_rows.plan(x2d, out)
    if m < common.num_sms(x2d.device):  # few long rows: spread each over many programs
        return v3_lagged.plan(x2d, out)
    return v5_whole_row.plan(x2d, out)  # many long rows (it falls back to v4, v3, v2)
