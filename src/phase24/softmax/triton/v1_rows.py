"""triton-v1: a tile of several short rows per program, the warps sized to the tile.

What changed from triton-naive: a program of the naive kernel holds one row, so a row of 128
float32 values keeps a whole program busy for 512 bytes, and the GPU spends its time starting
programs. Here a program takes BLOCK_M whole rows (BLOCK_M x BLOCK_N >= about 2048 values) and
reduces along the tile's second axis; the warps follow the tile (about 16 values a thread), so
long rows get enough threads and short ones not too many.
Prediction: short rows move from launch-bound towards the copy ceiling; rows of 2048 values and
more, where a naive program already moves 8 KB or more, change little.
Limit: rows of at most MAX_BLOCK_N values (one row per program at that length); longer rows are
refused (`triton` takes any length).
"""

import dataclasses

import triton
import triton.language as tl

from phase24.softmax.args import SoftmaxArgumentError
from phase24.softmax.triton import common, parts
from phase24.softmax.triton.common import LOG2E, Launch, Plan, cdiv, next_pow2

MAX_BLOCK_N = 32768


# --8<-- [start:kernel]
@triton.jit
def rows_kernel(x_ptr, out_ptr, M, N, stride_x,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    r64 = rows.to(tl.int64)[:, None]
    x = tl.load(x_ptr + r64 * stride_x + cols[None, :], mask=mask,
                other=float("-inf")).to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=1)[:, None]) * LOG2E)
    y = e * (1.0 / tl.sum(e, axis=1))[:, None]
    tl.store(out_ptr + r64 * N + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)
# --8<-- [end:kernel]


@dataclasses.dataclass(frozen=True)
class Config:
    block_m: int    # rows per tile
    num_warps: int


def _config(bn: int, tile: int, per_thread: int) -> Config:
    block_m = max(1, tile // bn)
    return Config(block_m, min(32, max(4, block_m * bn // (32 * per_thread))))


def default_config(n: int) -> Config:
    """Tiles of at least 2048 values, about 16 values a thread, 4 to 32 warps."""
    return _config(next_pow2(n), 2048, 16)


def candidates(n: int) -> list[Config]:
    """What scripts/tune.py softmax triton times: tiles of 2048 and 4096 values, 8, 16 or 32 values a
    thread."""
    bn = next_pow2(n)
    return list(dict.fromkeys([default_config(n)] + [_config(bn, tile, per_thread)
                                                     for tile in (2048, 4096)
                                                     for per_thread in (8, 16, 32)]))


def decide(x2d, out, config: Config | None = None) -> Plan:
    m, n = x2d.shape
    bn = next_pow2(n)
    if bn > MAX_BLOCK_N:
        raise SoftmaxArgumentError(
            f"triton-v1: rows of {n} values are longer than a tile holds (at most {MAX_BLOCK_N}); "
            "use 'triton', which splits long rows")
    split = parts.split_rows(decide, x2d, out, config, 1, scratch=False, rung="triton-v1",
                              items="rows")  # rows (pid * BLOCK_M + ...) below 2^31 a launch
    if split:
        return split
    c = config or default_config(n)
    return Plan((Launch("triton-v1", rows_kernel, cdiv(m, c.block_m), (m, n, x2d.stride(0)),
                        dict(BLOCK_M=c.block_m, BLOCK_N=bn, num_warps=c.num_warps)),), launch)


def launch(p: Plan, x2d, out) -> list:
    (k,) = p.launches
    return [rows_kernel[(k.grid,)](x2d, out, *k.args, **k.meta)]


def softmax_rows(x2d, out, config: Config | None = None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)
