"""Planted cheat: it steps out of the grader's dispatch mode for one call, computes with
torch.softmax there, and launches a no-op kernel of its own so that one ran."""
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _disable_current_modes


@triton.jit
def noop(out_ptr):
    pass


def softmax_rows(x2d, out):
    noop[(1,)](out)
    with _disable_current_modes():  # CHEAT: the guard's mode is off inside
        out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))
