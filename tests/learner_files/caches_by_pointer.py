"""Planted cheat for bench --file: the result for an input's address is kept (copied by a kernel
of the file) and copied into every later output for that address, whatever the values there. A
check's fresh inputs sit at other addresses, so it passes the check; bench --file times a loop of
calls on one input, which this makes a copy. Only fresh values written into the same buffers
after the timing (harness/bench.py) show it."""
import torch
import triton
import triton.language as tl

_cache = {}


@triton.jit
def row_softmax(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n)


@triton.jit
def copy(src_ptr, dst_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(src_ptr + offs, mask=offs < numel)
    tl.store(dst_ptr + offs, v.to(dst_ptr.dtype.element_ty), mask=offs < numel)


def softmax_rows(x2d, out):
    m, n = x2d.shape
    grid = (triton.cdiv(m * n, 1024),)
    key = (x2d.data_ptr(), m, n, x2d.stride(0))
    kept = _cache.get(key)  # CHEAT: the key holds the address, not the values
    if kept is not None:
        copy[grid](kept, out, m * n, BLOCK=1024)
        return
    row_softmax[(m,)](x2d, out, n, x2d.stride(0), BLOCK=triton.next_power_of_2(n))
    kept = torch.empty((m, n), dtype=torch.float32, device=out.device)
    copy[grid](out, kept, m * n, BLOCK=1024)
    _cache[key] = kept
