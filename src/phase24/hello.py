"""Lab 00 through the bridge: compile vector_add.cu, launch it on torch tensors, check it. On a
machine without a GPU the same file runs in the CUDA C emulator, on CPU tensors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from phase24 import bridge, emulator


# --8<-- [start:vector_add]
def vector_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.device != b.device:
        raise ValueError("vector_add: both inputs must be on one device")
    if a.dtype != torch.float32 or b.dtype != torch.float32 or a.shape != b.shape:
        raise ValueError("vector_add: expected two float32 tensors of the same shape")
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    load = bridge.load_kernel if a.is_cuda else emulator.load_kernel  # a GPU, or the CPU
    kernel = load(Path(__file__).with_name("vector_add.cu"), "vector_add")
    threads = 256
    kernel.launch(math.ceil(n / threads), threads, a, b, out, np.int64(n))  # on a's device
    return out
# --8<-- [end:vector_add]


def hello(n: int | None = None) -> str:
    """vector_add on n elements (1,000,003 on a GPU; 100,003 emulated), checked against a + b."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    n = n or (1_000_003 if device == "cuda" else 100_003)
    a, b = torch.randn(n, device=device), torch.randn(n, device=device)
    out = vector_add(a, b)
    err = (out - (a + b)).abs().max().item()
    if err != 0:
        raise AssertionError(f"vector_add is wrong: max error {err}")
    where = "" if device == "cuda" else (" (emulated on the CPU: correctness, no timing; "
                                         f"{math.ceil(n / 256)} blocks of 256 threads)")
    return f"vector_add on {n} elements matches a + b exactly{where}"
