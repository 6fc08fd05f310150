"""A correct Triton softmax (the positive control): one program per row, three passes over the
row in chunks of at most 4096 values (its maximum, its sum of exponentials, the output), so that
rows of any length compile once per dtype."""
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, out_row = x_ptr + row * stride, out_ptr + row * n
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_row + cols, mask=cols < n, other=float("-inf")).to(tl.float32))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
        tl.store(out_row + cols, (tl.exp(x - row_max) / total).to(out_ptr.dtype.element_ty),
                 mask=cols < n)


def softmax_rows(x2d, out):
    m, n = x2d.shape
    row_softmax[(m,)](x2d, out, n, x2d.stride(0), BLOCK=min(triton.next_power_of_2(n), 4096))
