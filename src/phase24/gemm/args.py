"""What every GEMM implementation of the lab does before and after its kernels: the argument
checks, the operands in the layout a kernel reads, the output, and the registry's entry.

Each implementation is written as a *tile kernel*: ``kernel(a, b, c)`` where ``a`` is (M, K),
``b`` is (K, N), both row-major and contiguous (a copy is made where the caller's are not), and
``c`` is the contiguous (M, N) output of the same dtype. ``entry`` turns a tile kernel into
``matmul(a, b, out=None)`` for any 2-D operands a caller passes.
"""

from __future__ import annotations

from typing import Callable

import torch

from phase24.core.dtypes import SUPPORTED
from phase24.core.op import OpArgumentError
from phase24.core.outputs import overlaps

TileKernel = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None]


class GemmArgumentError(OpArgumentError):
    """A matmul was called with operands it cannot take (device, dtype, rank, sizes)."""


def check_inputs(a: object, b: object, name: str, *, allow_cpu: bool = False) -> None:
    """Raise GemmArgumentError naming the problem, or return (the usual case in one test)."""
    if type(a) is torch.Tensor and type(b) is torch.Tensor and a.dim() == 2 and b.dim() == 2 \
            and a.dtype in SUPPORTED and b.dtype == a.dtype and a.shape[1] == b.shape[0] \
            and a.device == b.device and (a.is_cuda or allow_cpu) \
            and a.layout is torch.strided and b.layout is torch.strided \
            and not (a.requires_grad or b.requires_grad):
        return
    for what, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise GemmArgumentError(f"{name}: {what} must be a torch.Tensor, got {type(t).__name__}")
        if t.layout != torch.strided:
            raise GemmArgumentError(f"{name}: {what} is a {t.layout} tensor; pass a dense one")
        if t.dim() != 2:
            raise GemmArgumentError(f"{name}: {what} has {t.dim()} dimensions; this matmul takes "
                                    "2-D operands (for a batch, loop or use torch.matmul)")
        if t.dtype not in SUPPORTED:
            raise GemmArgumentError(f"{name}: dtype {t.dtype} is not supported; use float32, "
                                    "float16 or bfloat16")
        if t.requires_grad:
            raise GemmArgumentError(f"{name}: {what} requires a gradient, and this kernel has no "
                                    "backward pass; call it under torch.no_grad()")
    if a.dtype != b.dtype:
        raise GemmArgumentError(f"{name}: a is {a.dtype} and b is {b.dtype}; give both one dtype")
    if a.shape[1] != b.shape[0]:
        raise GemmArgumentError(f"{name}: inner dimensions differ: a is {tuple(a.shape)}, b is "
                                f"{tuple(b.shape)} (a's columns must equal b's rows)")
    if a.device != b.device:
        raise GemmArgumentError(f"{name}: a is on {a.device} and b on {b.device}; put both on one")
    raise GemmArgumentError(f"{name}: the operands are on {a.device}, but this implementation "
                            "runs on a CUDA GPU; move them with .cuda()")


def check_out(out: object, m: int, n: int, a: torch.Tensor, name: str,
              b: torch.Tensor | None = None) -> torch.Tensor:
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (m, n) or out.dtype != a.dtype \
            or out.device != a.device or not out.is_contiguous():
        raise GemmArgumentError(f"{name}: out must be a contiguous ({m}, {n}) tensor of dtype "
                                f"{a.dtype} on {a.device}")
    for operand, which in ((a, "a"), (b, "b")):
        if operand is not None and overlaps(out, operand):
            raise GemmArgumentError(f"{name}: out overlaps {which}; pass an output of its own")
    return out


def row_major(t: torch.Tensor) -> torch.Tensor:
    """``t`` itself when it is row-major and contiguous, else a contiguous copy."""
    return t if t.is_contiguous() else t.contiguous()


def entry(name: str, kernel: TileKernel, *, allow_cpu: bool = False) -> Callable:
    """The registry's ``matmul(a, b, out=None)`` for a tile kernel: checks, operands in
    row-major order, the output, then the kernel under the operands' GPU."""

    def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        check_inputs(a, b, name, allow_cpu=allow_cpu)
        m, n = a.shape[0], b.shape[1]
        out = torch.empty((m, n), dtype=a.dtype, device=a.device) if out is None else \
            check_out(out, m, n, a, name, b)
        if out.numel() == 0:
            return out
        if a.shape[1] == 0:  # an empty sum
            return out.zero_()
        if a.is_cuda and a.get_device() != torch.cuda.current_device():
            with torch.cuda.device(a.device):
                kernel(row_major(a), row_major(b), out)
        else:
            kernel(row_major(a), row_major(b), out)
        return out

    matmul.__name__ = f"matmul_{name.replace('-', '_')}"
    matmul.__doc__ = f"C = A @ B with {name}."
    return matmul
