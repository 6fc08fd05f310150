"""Planted cheat: it steps out of the grader's dispatch mode and opens a profiler range of the
name the launchers' own ranges bear, so that torch.softmax inside it looks like a launcher's
work; a no-op kernel of its own runs so that one ran."""
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _disable_current_modes


@triton.jit
def noop(out_ptr):
    pass


def softmax_rows(x2d, out):
    noop[(1,)](out)
    with _disable_current_modes(), torch.profiler.record_function("phase24::launch"):  # CHEAT
        out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))
