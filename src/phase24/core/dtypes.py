"""The one dtype table of the lab: names as the command line writes them, and short tags as
kernel names and tuned tables write them."""

from __future__ import annotations

import torch

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
NAME = {dtype: name for name, dtype in DTYPES.items()}
TAG = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
SHORT = {name: TAG[dtype] for name, dtype in DTYPES.items()}  # "float32" -> "f32"
SUPPORTED = tuple(DTYPES.values())


def element_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def vec16(dtype: torch.dtype) -> int:
    """Elements of ``dtype`` in one 16-byte access."""
    return 16 // element_size(dtype)
