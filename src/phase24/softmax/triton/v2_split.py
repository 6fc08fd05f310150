"""triton-v2: a long row split over many programs, in two launches.

What changed from triton-v1: a row no longer has to fit in one program. It is cut into S chunks
of SEG values, one program per chunk. The first launch writes each chunk's partial (max, sum of
exp(x - max)); the second combines the S partials of its row, M = max m_i and
S = sum s_i exp(m_i - M), and writes its chunk. No program waits for another: the launch boundary
orders the two steps, so this runs on any GPU, and in the interpreter.
Prediction: each value is read twice (once per launch), so at best 2/3 of the copy bandwidth
(three passes over the data instead of two); few long rows gain most, since one program per row
would leave most SMs idle.
Limit: none on the row length.
"""

import dataclasses

import triton
import triton.language as tl

from phase24.softmax.triton import common, parts
from phase24.softmax.triton.common import LOG2E, Launch, Plan, cdiv, next_pow2, prev_pow2


# --8<-- [start:kernel]
@triton.jit
def partials_kernel(x_ptr, out_ptr, ws_ptr, N, stride_x, S, SEG: tl.constexpr):
    # Program (row, chunk c): the (max, sum of exp(x - max)) of its chunk, into ws.
    pid = tl.program_id(0)
    row = pid // S
    cols = (pid - row * S) * SEG + tl.arange(0, SEG)
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + cols, mask=cols < N,
                other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    m_safe = tl.where(m == float("-inf"), 0.0, m)  # a chunk of -inf: (-inf, 0), not NaN
    part = ws_ptr.to(tl.pointer_type(tl.float32))
    tl.store(part + pid, m)
    tl.store(part + tl.num_programs(0) + pid, tl.sum(tl.exp2((x - m_safe) * LOG2E), axis=0))


@triton.jit
def write_kernel(x_ptr, out_ptr, ws_ptr, N, stride_x, S,
                 SEG: tl.constexpr, PBLOCK: tl.constexpr):
    # Program (row, chunk c): the row's S partials combined, PBLOCK at a time, then its chunk.
    pid = tl.program_id(0)
    row = pid // S
    part = ws_ptr.to(tl.pointer_type(tl.float32)) + row * S
    total = tl.num_programs(0)
    m_row = tl.full([], float("-inf"), tl.float32)
    s_row = tl.zeros([], tl.float32)
    for p in range(0, S, PBLOCK):
        idx = p + tl.arange(0, PBLOCK)
        pm = tl.load(part + idx, mask=idx < S, other=float("-inf"))
        ps = tl.load(part + total + idx, mask=idx < S, other=0.0)
        m_new = tl.maximum(m_row, tl.max(pm, axis=0))
        safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s_row = s_row * tl.exp2((m_row - safe) * LOG2E) \
            + tl.sum(ps * tl.exp2((pm - safe) * LOG2E), axis=0)
        m_row = m_new
    cols = (pid - row * S) * SEG + tl.arange(0, SEG)
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + cols, mask=cols < N,
                other=float("-inf")).to(tl.float32)
    y = tl.exp2((x - m_row) * LOG2E) * (1.0 / s_row)
    tl.store(out_ptr + row.to(tl.int64) * N + cols, y.to(out_ptr.dtype.element_ty),
             mask=cols < N)
# --8<-- [end:kernel]


@dataclasses.dataclass(frozen=True)
class Config:
    seg: int        # values per chunk (a power of two)
    num_warps: int
    pblock: int = 0  # partials combined per step (0: all of a row's, up to 1024)


def default_config(m: int, n: int, sms: int) -> Config:
    """Chunks of 8192 values; with few rows, smaller ones (down to 1024), so that about two
    programs per SM have work. 16 values a thread."""
    seg = 8192 if m >= sms else min(8192, max(1024, prev_pow2(m * n // (2 * sms))))
    seg = min(seg, max(16, next_pow2(n)))
    return Config(seg, min(32, max(1, seg // 512)))


def decide(x2d, out, config: Config | None = None) -> Plan:
    m, n = x2d.shape
    c = config or default_config(m, n, common.num_sms(x2d.device))
    s = cdiv(n, c.seg)
    split = parts.split_rows(decide, x2d, out, config, s, scratch=True, rung="triton-v2",
                              items="chunks")  # a program and a float32 pair per chunk
    if split:
        return split
    args = (n, x2d.stride(0), s)
    return Plan((Launch("triton-v2", partials_kernel, m * s, args,
                        dict(SEG=c.seg, num_warps=c.num_warps)),
                 Launch("triton-v2", write_kernel, m * s, args,
                        dict(SEG=c.seg, PBLOCK=c.pblock or min(1024, max(16, next_pow2(s))),
                             num_warps=c.num_warps))),
                launch, scratch="fresh", words=m * s)  # a float32 (max, sum) a chunk


def launch(p: Plan, x2d, out, ws) -> list:
    first, second = p.launches  # ws: fresh, the launch boundary orders the two steps
    return [partials_kernel[(first.grid,)](x2d, out, ws, *first.args, **first.meta),
            write_kernel[(second.grid,)](x2d, out, ws, *second.args, **second.meta)]


def softmax_rows(x2d, out, config: Config | None = None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)
