"""Planted bug: the kernel writes a new tensor, which softmax_rows returns; out, the tensor the
caller reads, is never written."""
import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n)


def softmax_rows(x2d, out):
    m, n = x2d.shape
    result = torch.empty((m, n), dtype=out.dtype, device=out.device)
    row_softmax[(m,)](x2d, result, n, x2d.stride(0), BLOCK=triton.next_power_of_2(n))
    return result  # BUG: out is never written
