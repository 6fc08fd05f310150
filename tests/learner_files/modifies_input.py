"""Planted bug: the kernel overwrites its input with zeros and writes 1/N, the softmax of the
zeros. Checked against a reference computed after the call, it would pass."""
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(x_ptr + row * stride + cols, x * 0, mask=cols < n)  # BUG: writes its input
    y = tl.full((BLOCK,), 1.0, tl.float32) / n
    tl.store(out_ptr + row * n + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n)


def softmax_rows(x2d, out):
    m, n = x2d.shape
    row_softmax[(m,)](x2d, out, n, x2d.stride(0), BLOCK=triton.next_power_of_2(n))
