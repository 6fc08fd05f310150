"""triton: the rung and configuration to run for a shape, from a table measured offline.

scripts/tune.py softmax triton times every rung's candidate configurations on the benchmark's shapes on
one GPU and writes the fastest per (dtype, row length rounded up to a power of two, rows class)
into triton_configs.json (beside this file), with the GPU's name. On that GPU `triton` looks the
shape up there; on any other GPU, and for shapes the table lacks, it follows the heuristic below.
Either way the chosen rung may fall back (see each rung), and which() says so. Nothing is timed
here, and the table is read once per shape: `softmax_rows` decides once per key (common.py).
This file has no kernel of its own: the plan it returns is the chosen rung's, launched by that
rung's `launch`.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG
from phase24.softmax.args import rows_class
from phase24.softmax.triton import common, v1_rows, v2_split, v3_lagged, v4_ring, v5_whole_row
from phase24.softmax.triton.common import Plan, next_pow2

TABLE = Path(__file__).resolve().parent / "triton_configs.json"
TUNED = {"triton-v1": v1_rows, "triton-v2": v2_split, "triton-v3": v3_lagged,
         "triton-v4": v4_ring, "triton-v5": v5_whole_row}


def _key(e: dict) -> tuple:
    return (e["dtype"], e["block_n"], e["rows"])


def _value(e: dict) -> tuple:
    return (e["rung"], e["config"])


def table(gpu: str) -> dict:
    """{(dtype tag, BLOCK_N, rows class): (rung, config)} measured on this GPU, or {}."""
    return tuned.load(TABLE, gpu, key=_key, value=_value)


def lookup(x2d) -> tuple | None:
    """The table's (rung module, config) for x2d on its GPU, or None."""
    if common.INTERPRETED or not x2d.is_cuda:
        return None
    m, n = x2d.shape
    hit = table(torch.cuda.get_device_name(x2d.device)).get((TAG[x2d.dtype], next_pow2(n),
                                                             rows_class(m)))
    if hit is None:
        return None
    rung = TUNED[hit[0]]
    return rung, rung.Config(**hit[1])


def decide(x2d, out, config=None) -> Plan:
    hit = lookup(x2d)
    if hit is not None:
        rung, cfg = hit
        return rung.decide(x2d, out, cfg)
    m, n = x2d.shape
    if next_pow2(n) <= v1_rows.MAX_BLOCK_N:  # a row fits one program
        return v1_rows.decide(x2d, out)
    if m < common.num_sms(x2d.device):  # few long rows: spread each over many programs
        return v3_lagged.decide(x2d, out)
    return v5_whole_row.decide(x2d, out)  # many long rows (it falls back to v4, v3, v2)


def softmax_rows(x2d, out, config=None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched
    by the chosen rung's kernel."""
    common.launch_rows(decide, x2d, out, config)
