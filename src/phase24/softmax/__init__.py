"""Softmax over the last dimension: the one registry every tool of the lab reads.

``IMPLEMENTATIONS`` maps a name to a callable ``f(x) -> new tensor``. The checker, the
benchmark, the profiler, the tests and the docs all take their list of implementations from it.
"""

from __future__ import annotations

from typing import Callable

import torch

from phase24.softmax.args import SoftmaxArgumentError, check_input, run_rows
from phase24.softmax.reference import softmax_reference

Softmax = Callable[[torch.Tensor], torch.Tensor]


def _torch_softmax(x: torch.Tensor) -> torch.Tensor:
    check_input(x, "torch", allow_cpu=True, ours=False)
    return torch.softmax(x, dim=-1)


def _registered() -> dict[str, Softmax]:
    from phase24.softmax import cuda_impls, triton_ladder

    impls: dict[str, Softmax] = {"torch": _torch_softmax}
    impls.update(cuda_impls.IMPLEMENTATIONS)
    impls.update(triton_ladder.IMPLEMENTATIONS)
    return impls


IMPLEMENTATIONS: dict[str, Softmax] = _registered()


def softmax(x: torch.Tensor, impl: str = "cuda") -> torch.Tensor:
    """Softmax of ``x`` over its last dimension with the named implementation."""
    try:
        fn = IMPLEMENTATIONS[impl]
    except KeyError:
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


def _only_the_device(x) -> bool:
    """Whether ``x`` is a CPU tensor that a CUDA implementation refuses for its device alone."""
    if not isinstance(x, torch.Tensor) or x.device.type == "cuda":
        return False
    try:
        check_input(x, "", allow_cpu=True)
    except SoftmaxArgumentError:
        return False
    return True


__all__ = ["IMPLEMENTATIONS", "SoftmaxArgumentError", "softmax", "softmax_reference",
           "check_input", "run_rows"]
