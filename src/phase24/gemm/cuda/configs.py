"""The CUDA GEMM ladder's rungs, in order: each rung's record (rung.py), which sits beside its
kernel (``v4_registers_2d.py`` beside ``v4_registers_2d.cu``), and the functions its callers ask
of a rung by its short name (``configs("v4")``, ``kernel_name("v4", config, dtype)``, ...).

Adding a rung is its .cu, its record beside it, one line below, its tests and its pages.
"""

from __future__ import annotations

import torch

from phase24.gemm.cuda import (v0_naive, v1_coalesced, v2_shared_tiles, v3_registers_1d,
                               v4_registers_2d, v5_vectorised, v6_warp_tiles, v7_prefetch, v8_mma,
                               v9_wgmma, v10_tma_producer, v11_persistent)
from phase24.gemm.cuda.rung import Rung

RECORDS: dict[str, Rung] = {m.RUNG.kind: m.RUNG for m in (
    v0_naive, v1_coalesced, v2_shared_tiles, v3_registers_1d, v4_registers_2d, v5_vectorised,
    v6_warp_tiles, v7_prefetch, v8_mma, v9_wgmma, v10_tma_producer, v11_persistent)}

# Views of the records, for the callers that ask of every rung at once.
FILES = {kind: r.file for kind, r in RECORDS.items()}
HOPPER_KINDS = {kind for kind, r in RECORDS.items() if r.hopper}
# The rungs with a table of configurations (v2 on): what the tuner times and the sanitizer forces.
TUNABLE = tuple(kind for kind, r in RECORDS.items() if r.params)


def params(kind: str) -> tuple[str, ...]:
    return RECORDS[kind].params


def source(kind: str) -> str:
    """The file of rung `kind` ('v0' .. 'v11'), in this folder."""
    return RECORDS[kind].file


def configs(kind: str) -> tuple[tuple, ...]:
    """The configurations of rung `kind`, as its instance lines give them (every dtype)."""
    return RECORDS[kind].configs


def named(kind: str, config: tuple) -> dict[str, int]:
    return RECORDS[kind].named(config)


def compiled_for(kind: str, dtype: torch.dtype) -> bool:
    """Whether rung ``kind`` has kernels for ``dtype``."""
    return RECORDS[kind].compiled_for(dtype)


def kernel_name(kind: str, config: tuple, dtype: torch.dtype) -> str:
    return RECORDS[kind].kernel_name(config, dtype)


def tile(kind: str, config: tuple) -> tuple[int, int]:
    return RECORDS[kind].tile(config)


def threads(kind: str, config: tuple) -> int:
    return RECORDS[kind].block_threads(config)


def shared_bytes(kind: str, config: tuple) -> int:
    return RECORDS[kind].shared_bytes(config)


def blocks(kind: str, config: tuple, m: int, n: int) -> int:
    return RECORDS[kind].blocks(config, m, n)
