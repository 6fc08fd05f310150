"""triton-naive: one program per row, the whole row in one block.

The float64 formula, translated: load the row (lanes past its end read -inf, which adds nothing),
subtract its maximum, exponentiate, divide by the sum, store. It is Triton's fused-softmax
tutorial in its simplest form, and what the learner's starter (labs/starters/my_softmax.py) asks
for. Every value is read once and written once; the warps grow with the row.
Limit: the row is one block, so rows longer than MAX_N are refused (`triton` takes any length).
"""
# Measured (H200, results/h200/softmax.json, copy 4273 GB/s):
# bulk rows of 128-65536 values, % of copy: fp32 39.4-99.2, bf16 19.7-98.1;
# few rows (1x32768, 8x131072, 64x32768, 64x262144), us:
# fp32 8.6 / - / 11.3 / -; bf16 7.5 / - / 9.1 / -.

import triton
import triton.language as tl

from phase24.softmax.args import SoftmaxArgumentError
from phase24.softmax.triton_ladder.common import LOG2E, Launch, Plan, next_pow2

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


def plan(x2d, out, config=None) -> Plan:
    m, n = x2d.shape
    if n > MAX_N:
        raise SoftmaxArgumentError(
            f"triton-naive: rows of {n} values do not fit in one block (at most {MAX_N}); use "
            "'triton', which splits long rows")
    bn = next_pow2(n)
    warps = 4 if bn <= 2048 else 8 if bn <= 8192 else 16 if bn <= 16384 else 32
    return Plan((Launch("triton-naive", naive_kernel, m, (n, x2d.stride(0)),
                        dict(BLOCK_N=bn, num_warps=warps)),))
