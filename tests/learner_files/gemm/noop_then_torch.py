"""A cheat: it launches a kernel of its own that does nothing, then writes torch.matmul's
result into c. The grader must fail it, naming the torch operation (core/guard.py)."""
import torch
import triton


@triton.jit
def nothing(c_ptr):
    pass


def matmul_tiles(a, b, c):
    nothing[(1,)](c)
    torch.matmul(a, b, out=c)
