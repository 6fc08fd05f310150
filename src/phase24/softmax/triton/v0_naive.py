"""triton-naive: one program per row, the whole row in one block.

The float64 formula, translated: load the row (lanes past its end read -inf, which adds nothing),
subtract its maximum, exponentiate, divide by the sum, store. It is Triton's fused-softmax
tutorial in its simplest form, and what the learner's starter (labs/starters/my_softmax.py) asks
for. Every value is read once and written once; the warps grow with the row.
Limit: the row is one block, so rows longer than MAX_N are refused (`triton` takes any length).
"""

import triton
import triton.language as tl

from phase24.softmax.args import SoftmaxArgumentError
from phase24.softmax.triton import common, parts
from phase24.softmax.triton.common import LOG2E, Launch, Plan, next_pow2

MAX_N = 65536


# --8<-- [start:kernel]
@triton.jit
def naive_kernel(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: row * stride_x may pass 2^31
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)  # subtract first, then scale: exp(x - max)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * N + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
# --8<-- [end:kernel]


def decide(x2d, out, config=None) -> Plan:
    m, n = x2d.shape
    if n > MAX_N:
        raise SoftmaxArgumentError(
            f"triton-naive: rows of {n} values do not fit in one block (at most {MAX_N}); use "
            "'triton', which splits long rows")
    split = parts.split_rows(decide, x2d, out, config, 1, scratch=False, rung="triton-naive",
                              items="rows")  # a grid of m programs, below 2^31 in each launch
    if split:
        return split
    bn = next_pow2(n)
    warps = 4 if bn <= 2048 else 8 if bn <= 8192 else 16 if bn <= 16384 else 32
    return Plan((Launch("triton-naive", naive_kernel, m, (n, x2d.stride(0)),
                        dict(BLOCK_N=bn, num_warps=warps)),), launch)


def launch(p: Plan, x2d, out) -> list:
    (k,) = p.launches
    return [naive_kernel[(k.grid,)](x2d, out, *k.args, **k.meta)]


def softmax_rows(x2d, out, config=None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)
