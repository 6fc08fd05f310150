"""An input larger than one launch takes, in parts: ranges of its rows, a launch's work each.

The kernels compute in 32-bit integers what stays below 2^31 within one launch: program ids,
rows and items (a row's chunks, or v5's slices of a row) counted from the launch's first row,
and such sums as an item plus a few grids (v3 to v5 stride over their items by the grid, the
programs resident at once: thousands). Offsets into x and out are 64-bit
(``row.to(tl.int64) * stride``), so one launch may span any number of values. What keeps the
32-bit values below 2^31 is the size of a launch: at most MAX_ITEMS items, which also keeps
every grid within the hardware's 2^31 - 1 programs, and for a rung with scratch (a word an
item: v2's partials, the exchange words of v3 to v5) at most MAX_WORDS items, which bounds
that scratch to 128 MB. An input of more runs in parts, ranges of its rows each decided as an
input of its own, one after another on the stream (``split_rows``, which every rung's decide
calls). No benchmark shape comes near either bound (2^28 values: at most 2^21 items a launch),
so those run as before. Tests set both bounds small.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from phase24.softmax.args import SoftmaxArgumentError
from phase24.softmax.triton import common

MAX_ITEMS = 2**30
MAX_WORDS = 2**24


def split_rows(decide: Callable, x2d: torch.Tensor, out: torch.Tensor, config, per_row: int, *,
               scratch: bool, rung: str, items: str) -> common.Plan | None:
    """None where x2d's rows, ``per_row`` items each, are one launch's work for ``decide``;
    else the plan that runs them in parts, ranges of rows of at most that work, each decided by
    ``decide`` as an input of its own (``decided``: equal parts share one decision). Parts
    start where x2d's and out's rows start modulo 16 bytes, so they keep the whole's alignment.
    A row of more scratch words than MAX_WORDS is a part of its own; a row of more items than
    MAX_ITEMS is refused (``rung``'s ``items``, in words), in one line."""
    m, n = x2d.shape
    cap = MAX_WORDS if scratch else MAX_ITEMS
    if m * per_row <= cap:
        return None
    if per_row > MAX_ITEMS:
        raise SoftmaxArgumentError(
            f"{rung}: a row of {n} values is {per_row} {items} here, more than one launch "
            f"takes ({MAX_ITEMS}); choose a configuration with fewer {items} a row")
    rows = cap // per_row
    if rows == 0:  # a row of more scratch words than MAX_WORDS: a launch for each row
        if m == 1:
            return None
        rows = 1
    elem = x2d.element_size()
    step = 16 // math.gcd(16, x2d.stride(0) * elem, n * elem)  # rows that span 16-byte multiples
    if rows >= step:
        rows -= rows % step
    parts = tuple((first, min(rows, m - first), common.decided(
        decide, x2d[first:first + rows], out[first:first + rows], config))
        for first in range(0, m, rows))
    head = parts[0][2].plan
    return common.Plan(head.launches, launch_parts, parts=parts)


def launch_parts(plan: common.Plan, x2d: torch.Tensor, out: torch.Tensor) -> list:
    """Run a split plan's parts in order, on the current stream (a part's scratch, fresh or
    exchange, is then never in use by another part: they run one after another)."""
    for first, rows, d in plan.parts:
        common.launch_decided(d, x2d[first:first + rows], out[first:first + rows])
    return []
