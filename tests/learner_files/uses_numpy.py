"""Planted cheat: on a CPU, numpy computes the result in place in out's memory (no torch
operation computes); a no-op kernel of the file is launched so that one ran."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def noop(out_ptr):
    pass


def softmax_rows(x2d, out):
    noop[(1,)](out)
    x = x2d.numpy().astype(np.float64)  # CHEAT: the values leave torch
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    out.numpy()[...] = e / e.sum(axis=-1, keepdims=True)
