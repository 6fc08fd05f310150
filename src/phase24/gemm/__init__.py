"""GEMM, C = A @ B for 2-D operands: the registry every tool of the lab reads.

    from phase24.gemm import matmul, which
    c = matmul(a, b)                  # the best CUDA C rung for the shape (impl="cuda")
    c = matmul(a, b, impl="triton")   # or any name of IMPLEMENTATIONS
    print(which(a, b, "cuda"))        # what runs for these operands

``IMPLEMENTATIONS`` maps a name to ``f(a, b, out=None) -> tensor``: cuBLAS through torch (the
ceiling every other is measured against), the CUDA C ladder's (``cuda/``) and the Triton
ladder's (``triton/``). ``spec.OP`` is this operation as the lab's commands see it.
"""

from __future__ import annotations

import contextlib
import threading

import torch

from phase24.gemm.args import GemmArgumentError, check_inputs, check_out


_FLAGS = threading.Lock()
_inside = [0, None]  # calls of _cublas running now, the flags they found before the first


@contextlib.contextmanager
def _exact_matmul():
    """torch's TF32 and reduced-precision flags off while any thread is inside, put back as the
    first one found them when the last one leaves: two threads cannot leave them changed."""
    flags = torch.backends.cuda.matmul
    names = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
             "allow_bf16_reduced_precision_reduction")
    with _FLAGS:
        if _inside[0] == 0:
            _inside[1] = [getattr(flags, n) for n in names]
            for n in names:
                setattr(flags, n, False)
        _inside[0] += 1
    try:
        yield
    finally:
        with _FLAGS:
            _inside[0] -= 1
            if _inside[0] == 0:
                for n, v in zip(names, _inside[1]):
                    setattr(flags, n, v)


def _cublas(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """torch.matmul, i.e. cuBLAS on a GPU, in true float32 (no TF32) and with float32 sums for
    half-precision operands (no reduced-precision reductions): what the ladders compute."""
    check_inputs(a, b, "cublas", allow_cpu=True)
    if out is not None:
        check_out(out, a.shape[0], b.shape[1], a, "cublas", b)
    with _exact_matmul():
        return torch.matmul(a, b, out=out)


def _registered() -> dict:
    from phase24.gemm import cuda, triton

    return {"cublas": _cublas, **cuda.IMPLEMENTATIONS, **triton.IMPLEMENTATIONS}


IMPLEMENTATIONS: dict = _registered()


def matmul(a: torch.Tensor, b: torch.Tensor, impl: str = "cuda") -> torch.Tensor:
    """C = A @ B with the named implementation."""
    if impl not in IMPLEMENTATIONS:
        raise GemmArgumentError(f"unknown implementation {impl!r}; choose one of "
                                f"{sorted(IMPLEMENTATIONS)}")
    return IMPLEMENTATIONS[impl](a, b)


def which(a: torch.Tensor, b: torch.Tensor, impl: str = "cuda") -> str | None:
    """What ``impl`` launches for operands like these, in words (None for cuBLAS); ValueError
    naming the implementations for a name that is none of them."""
    from phase24.gemm import cuda, triton

    for ladder in (cuda, triton):
        if impl in ladder.IMPLEMENTATIONS:
            return ladder.which(a, b, impl)
    if impl != "cublas":
        raise ValueError(f"which: unknown implementation {impl!r} of gemm; choose from "
                         f"{', '.join(IMPLEMENTATIONS)}")
    return None


__all__ = ["IMPLEMENTATIONS", "GemmArgumentError", "matmul", "which"]
