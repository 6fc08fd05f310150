"""Softmax over the last dimension: the registry every tool of the lab reads.

    from phase24.softmax import softmax, which
    y = softmax(x)                  # the best CUDA C rung for x's shape (impl="cuda")
    y = softmax(x, impl="triton")   # or any name of IMPLEMENTATIONS
    print(which(x, "cuda"))         # the kernel(s) that run for x, with their launch

``IMPLEMENTATIONS`` maps a name to ``f(x, out=None) -> tensor``: torch's, the CUDA C ladder's
(``cuda/``) and the Triton ladder's (``triton/``). ``spec.OP`` is this operation as the lab's
commands see it.
"""

from __future__ import annotations

import torch

from phase24.softmax.args import SoftmaxArgumentError, check_input, check_out
from phase24.softmax.reference import softmax_reference


def _torch_softmax(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    check_input(x, "torch", allow_cpu=True, ours=False)
    y = torch.softmax(x, dim=-1)
    if out is None:
        return y
    return check_out(out, x, "torch").copy_(y)


def _registered() -> dict:
    from phase24.softmax import cuda, triton

    return {"torch": _torch_softmax, **cuda.IMPLEMENTATIONS, **triton.IMPLEMENTATIONS}


IMPLEMENTATIONS: dict = _registered()


def softmax(x: torch.Tensor, impl: str = "cuda") -> torch.Tensor:
    """Softmax of ``x`` over its last dimension with the named implementation."""
    try:
        fn = IMPLEMENTATIONS[impl]
    except (KeyError, TypeError):
        raise SoftmaxArgumentError(
            f"unknown implementation {impl!r}; choose one of {sorted(IMPLEMENTATIONS)}") from None
    try:
        return fn(x)
    except SoftmaxArgumentError as err:
        if not _only_the_device(x) or torch.cuda.is_available():
            raise
        raise SoftmaxArgumentError(
            f"{err}; but this machine has no CUDA GPU: here use softmax(x, impl='torch'), or a "
            "Triton implementation (impl='triton', 'triton-naive', ...), which runs CPU tensors "
            "in Triton's interpreter") from None


def which(x: torch.Tensor, impl: str = "cuda") -> str:
    """What ``impl`` launches for a tensor like ``x``, in words (fallbacks included)."""
    from phase24.softmax import cuda, triton

    if impl in triton.RUNGS:
        return triton.which(x, impl)
    if impl in cuda.RUNGS:
        return cuda.which(x, impl)
    if impl == "torch":
        return "torch.softmax"
    raise SoftmaxArgumentError(
        f"unknown implementation {impl!r}; choose one of {sorted(IMPLEMENTATIONS)}")


def _only_the_device(x) -> bool:
    """Whether ``x`` is a CPU tensor that a CUDA implementation refuses for its device alone."""
    if not isinstance(x, torch.Tensor) or x.device.type == "cuda":
        return False
    try:
        check_input(x, "", allow_cpu=True)
    except SoftmaxArgumentError:
        return False
    return True


__all__ = ["IMPLEMENTATIONS", "SoftmaxArgumentError", "softmax", "softmax_reference", "which"]
