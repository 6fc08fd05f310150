"""A checker's case: a name and how to make fresh inputs (never zeros) for a dtype and device."""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[torch.dtype, str, torch.Generator], tuple]  # -> the inputs, a tuple
    gpu_only: bool = False  # too large for the CPU / the interpreter
    sample_rows: int | None = None  # check only these many rows (first, last, random) if set


def randn(shape, dtype, device, gen, scale=3.0) -> torch.Tensor:
    """Normal values times ``scale``, drawn in float32 and rounded to ``dtype``."""
    return (torch.randn(shape, generator=gen, device=device, dtype=torch.float32) * scale).to(dtype)
