"""Planted bug: a Triton kernel is defined, but softmax_rows computes the result with
torch.softmax and never launches it."""
import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("-inf"))
    tl.store(out_ptr + row * n + cols, x, mask=cols < n)


def softmax_rows(x2d, out):
    out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))  # BUG: no Triton
