"""Lab 00 through the bridge: compile vector_add.cu, launch it on torch tensors, check it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from phase24.bridge import load_kernel


# --8<-- [start:vector_add]
def vector_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not (a.is_cuda and b.is_cuda):
        raise ValueError("vector_add: both inputs must be CUDA tensors (use .cuda())")
    if a.dtype != torch.float32 or b.dtype != torch.float32 or a.shape != b.shape:
        raise ValueError("vector_add: expected two float32 tensors of the same shape")
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    kernel = load_kernel(Path(__file__).with_name("vector_add.cu"), "vector_add")
    threads = 256
    kernel.launch(math.ceil(n / threads), threads, a, b, out, np.int64(n))  # on a's GPU
    return out
# --8<-- [end:vector_add]


def hello(n: int = 1_000_003) -> str:
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = vector_add(a, b)
    err = (out - (a + b)).abs().max().item()
    if err != 0:
        raise AssertionError(f"vector_add is wrong: max error {err}")
    return f"vector_add on {n} elements matches a + b exactly"
