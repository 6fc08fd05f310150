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
    return fn(x)


__all__ = ["IMPLEMENTATIONS", "SoftmaxArgumentError", "softmax", "softmax_reference",
           "check_input", "run_rows"]
