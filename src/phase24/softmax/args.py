"""What every softmax implementation of the lab does before and after its kernels: the argument
checks, the row view, the output, and the entry that the registry holds.

Each implementation is written as a *row kernel*: ``rows(x2d, out2d)`` where ``x2d`` is a 2-D
(M, N) view whose last dimension has stride 1 (rows may start anywhere: any row stride, any
alignment) and ``out2d`` is a contiguous (M, N) tensor of the same dtype. ``entry`` turns a row
kernel into ``softmax(x, out=None)`` for any tensor a caller passes: ``out``, when given, is the
contiguous output to fill (the checker hands in one it has poisoned); else a new one is made.
"""

from __future__ import annotations

from typing import Callable

import torch

from phase24.bridge.fastcall import FastCalls
from phase24.core.dtypes import SUPPORTED
from phase24.core.op import OpArgumentError
from phase24.core.outputs import overlaps

# The lab's kernels index a row with 32-bit offsets (a chunk may start up to 1M values past
# the row's end): rows must be shorter than this. Any number of rows is fine.
MAX_ROW = 2**31 - 2**20

RowKernel = Callable[[torch.Tensor, torch.Tensor], None]
Softmax = Callable[..., torch.Tensor]


def rows_class(m: int) -> int:
    """The row-count class a tuned table (cuda's and triton's) keeps an entry per: 0 for up to
    16 rows, 1 for up to 256 (too few to fill the SMs one row each), 2 beyond. (One class for
    every M <= 256 let the 64-row winner of N = 32768 overwrite the 1-row one.)"""
    return 0 if m <= 16 else 1 if m <= 256 else 2


class SoftmaxArgumentError(OpArgumentError):
    """A softmax was called with an input it cannot take (device, dtype, layout or shape)."""


def check_input(x: object, name: str, *, allow_cpu: bool = False, ours: bool = True,
                cpu_hint: str = "") -> torch.Tensor:
    """Raise SoftmaxArgumentError naming the problem, or return ``x`` unchanged.

    ``ours``: the lab's own kernels, which also refuse what only torch's softmax can take
    (rows of 2^31 values or more, inputs that need a gradient). The usual input passes one
    expression (it runs at every call); the reasons are worked out only for one that fails."""
    if type(x) is torch.Tensor and x.dtype in SUPPORTED and x.layout is torch.strided \
            and x.dim() > 0 and (x.is_cuda or allow_cpu) \
            and not (ours and (x.requires_grad or x.shape[-1] >= MAX_ROW)):
        return x
    if not isinstance(x, torch.Tensor):
        raise SoftmaxArgumentError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.layout != torch.strided:
        raise SoftmaxArgumentError(
            f"{name}: a {x.layout} tensor is not supported; pass a dense tensor (x.to_dense())")
    if x.dtype not in SUPPORTED:
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


def check_out(out: torch.Tensor, x: torch.Tensor, name: str) -> torch.Tensor:
    """``out`` if it can hold the softmax of ``x`` (same shape, dtype and device, contiguous)."""
    if not isinstance(out, torch.Tensor) or out.shape != x.shape or out.dtype != x.dtype \
            or out.device != x.device or not out.is_contiguous():
        raise SoftmaxArgumentError(
            f"{name}: out must be a contiguous tensor of the input's shape {tuple(x.shape)}, "
            f"dtype {x.dtype} and device {x.device}")
    if overlaps(out, x):
        raise SoftmaxArgumentError(f"{name}: out overlaps the input; pass an output of its own")
    return out


def rows_view(x: torch.Tensor) -> torch.Tensor:
    """``x`` as the (M, N) row-kernel input: a view when the layout allows it, else a copy."""
    if x.dim() == 2 and x.is_contiguous():
        return x  # the usual case, first (it runs at every call)
    n = x.shape[-1]
    x2d = x.reshape(-1, n) if x.dim() != 2 else x
    if x2d.stride(-1) != 1 or x2d.stride(0) < n:
        x2d = x2d.contiguous()
    return x2d


def run_rows(kernel: RowKernel, x: torch.Tensor, out: torch.Tensor | None = None,
             learn: Callable | None = None) -> torch.Tensor:
    """Apply a row kernel over the last dimension of ``x``, for any leading shape and strides,
    into ``out`` (checked by the caller) or a new tensor; then ``learn(x2d, out2d)``, if given."""
    if out is None:
        out = torch.empty_like(x) if x.is_contiguous() else \
            torch.empty_like(x, memory_format=torch.contiguous_format)
    if out.numel() == 0:
        return out
    x2d, out2d = rows_view(x), out if out.dim() == 2 else out.view(-1, x.shape[-1])
    kernel(x2d, out2d)
    if learn is not None:
        learn(x2d, out2d)
    return out


def entry(name: str, rows: RowKernel, *, allow_cpu: bool = False, cpu_hint: str = "",
          launches: Callable | None = None) -> Softmax:
    """The registry's ``softmax(x, out=None)`` for a row kernel: the argument checks, the output,
    then the kernel, under x's GPU when it is not the current one (a launcher reads the current
    device's SMs and tuned table).

    ``launches(x2d, out2d)``, where given, says what the row kernel launched for that key (see
    bridge/fastcall.py): a later call with the same key is then made from C++, checks, output
    and launches, and returns before any of the Python below."""
    current = torch._C._cuda_getDevice if torch.cuda.is_available() else (lambda: 0)
    fast = FastCalls(MAX_ROW)
    learn = None if launches is None else (
        lambda x2d, out2d: fast.learn(x2d, out2d, launches) if x2d.is_cuda else None)

    def softmax(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        y = fast.call(x, out)
        if y is not None:
            return y
        check_input(x, name, allow_cpu=allow_cpu, cpu_hint=cpu_hint)
        if out is not None:
            check_out(out, x, name)
        if x.is_cuda and x.get_device() != current():
            with torch.cuda.device(x.device):
                return run_rows(rows, x, out, learn)
        return run_rows(rows, x, out, learn)

    softmax.__name__ = f"softmax_{name.replace('-', '_').replace(':', '_').replace('.', '_')}"
    softmax.__doc__ = f"Softmax over the last dimension with {name}."
    softmax.fast = fast
    return softmax
