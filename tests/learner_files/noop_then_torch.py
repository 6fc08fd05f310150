"""Planted cheat: softmax_rows launches a Triton kernel that does nothing, so a kernel of the
file ran, then torch computes the result and copies it into out."""
import torch
import triton
import triton.language as tl


@triton.jit
def noop(out_ptr):
    pass


def softmax_rows(x2d, out):
    noop[(1,)](out)
    out.copy_(torch.softmax(x2d, dim=-1))  # CHEAT: torch computes the result
