"""Argument checking and shape handling shared by every softmax implementation.

Each implementation is written as a *row kernel*: ``kernel(x2d, out2d)`` where ``x2d`` is a
2-D (M, N) view whose last dimension has stride 1 (rows may start anywhere: any row stride,
any alignment) and ``out2d`` is a fresh contiguous (M, N) tensor of the same dtype. This module
turns any tensor a user passes into that form, and the result back into the user's shape.
"""

from __future__ import annotations

from typing import Callable

import torch

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Each dtype's short name in kernel names and tuned tables.
DTYPE_TAG = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def rows_class(m: int) -> int:
    """The row-count class a tuned table (cuda's and triton's) keeps an entry per: 0 for up to
    16 rows, 1 for up to 256 (too few to fill the SMs one row each), 2 beyond. (One class for
    every M <= 256 let the 64-row winner of N = 32768 overwrite the 1-row one.)"""
    return 0 if m <= 16 else 1 if m <= 256 else 2

# The lab's kernels index a row with 32-bit offsets (a chunk may start up to 1M values past
# the row's end): rows must be shorter than this. Any number of rows is fine.
MAX_ROW = 2**31 - 2**20

RowKernel = Callable[[torch.Tensor, torch.Tensor], None]


class SoftmaxArgumentError(ValueError):
    """A softmax was called with an input it cannot take (device, dtype, layout or shape)."""


def check_input(x: object, name: str, *, allow_cpu: bool = False, ours: bool = True,
                cpu_hint: str = "") -> torch.Tensor:
    """Raise SoftmaxArgumentError naming the problem, or return ``x`` unchanged.

    ``ours``: the lab's own kernels, which also refuse what only torch's softmax can take
    (rows of 2^31 values or more, inputs that need a gradient)."""
    if not isinstance(x, torch.Tensor):
        raise SoftmaxArgumentError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.layout != torch.strided:
        raise SoftmaxArgumentError(
            f"{name}: a {x.layout} tensor is not supported; pass a dense tensor (x.to_dense())")
    if x.dtype not in SUPPORTED_DTYPES:
        raise SoftmaxArgumentError(
            f"{name}: dtype {x.dtype} is not supported; use float32, float16 or bfloat16")
    if x.dim() == 0:
        raise SoftmaxArgumentError(
            f"{name}: a 0-d tensor has no last dimension to normalise over; pass at least 1-d")
    if ours and x.shape[-1] >= MAX_ROW:
        raise SoftmaxArgumentError(
            f"{name}: rows of {x.shape[-1]} values are too long: the lab's kernels take rows "
            f"of fewer than {MAX_ROW} values (torch.softmax takes any length)")
    if ours and x.requires_grad:
        raise SoftmaxArgumentError(
            f"{name}: the input requires a gradient, and this kernel has no backward pass "
            "(custom autograd comes in Phase 25); call it under torch.no_grad(), on x.detach(), "
            "or use torch.softmax")
    if x.device.type != "cuda" and not allow_cpu:
        raise SoftmaxArgumentError(
            f"{name}: input is on device '{x.device}', but this implementation runs on a CUDA "
            f"GPU; move it with x.cuda(){cpu_hint}")
    return x


_poison: float | None = None


class poisoned_outputs:
    """Within this context every output is filled with ``value`` before the kernel runs, so an
    element the kernel forgets to write shows up (the checker uses NaN and then a finite value)."""

    def __init__(self, value: float):
        self.value = value

    def __enter__(self):
        global _poison
        self.saved, _poison = _poison, self.value

    def __exit__(self, *exc):
        global _poison
        _poison = self.saved


def run_rows(kernel: RowKernel, x: torch.Tensor) -> torch.Tensor:
    """Apply a row kernel over the last dimension of ``x``, for any leading shape and strides."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    if _poison is not None:
        out.fill_(_poison)
    if out.numel() == 0:
        return out
    kernel(rows_view(x), out if out.dim() == 2 else out.view(-1, x.shape[-1]))
    return out


def rows_view(x: torch.Tensor) -> torch.Tensor:
    """``x`` as the (M, N) row-kernel input: a view when the layout allows it, else a copy."""
    n = x.shape[-1]
    x2d = x.reshape(-1, n) if x.dim() != 2 else x
    if x2d.stride(-1) != 1 or x2d.stride(0) < n:
        x2d = x2d.contiguous()
    return x2d
