"""A CUDA GEMM rung's record: what the launcher must know of its .cu file to run it.

Each rung's record sits beside its kernel (``v4_registers_2d.py`` beside ``v4_registers_2d.cu``)
and says what the .cu cannot: its registry name, the threads a block has, and what it needs of
the GPU and of its operands. The rest is read from the .cu itself, so it is written once: the
configuration parameters from its ``#define V4(BM, BN, BK, TM, TN)`` line, the configurations
from its instance lines between ``--8<-- [start:configs]`` and ``[end:configs]`` (``V4(128, 128,
8, 8, 8) ...``, largest tile first), and each kernel's name as the file's ``V4_KERNEL`` spells it
(gemm_v4_bm128_bn128_bk8_tm8_tn8_f32). tests/test_gemm_cuda_rungs.py compiles every rung and
checks that the kernels ptxas reports are exactly the names the records give.
"""

from __future__ import annotations

import dataclasses
import math
import re
from functools import cached_property
from pathlib import Path
from typing import Callable

import torch

from phase24.core.dtypes import TAG

FOLDER = Path(__file__).parent
HOPPER_ALIGN = 1024  # bytes: the 128-byte swizzle's tiles start on a 1024-byte boundary


@dataclasses.dataclass(frozen=True)
class Rung:
    kind: str                          # "v4": the rung's short name, its kernels' prefix
    name: str                          # "cuda-v4": its registry name
    file: str                          # "v4_registers_2d.cu", in this folder
    threads: Callable[[dict], int]     # a block's threads, from a configuration's parameters
    fixed_tile: tuple[int, int] | None = None  # a tile of C not set by parameters (v0, v1)
    sixteen_bit: bool = False          # float16 and bfloat16 kernels only (the Tensor Cores')
    hopper: bool = False               # built for sm_90a alone (wgmma, TMA)
    aligned_rows: bool = False         # copies rows 16 bytes at a time (cp.async, TMA)
    tma: bool = False                  # its kernels take TMA tensor maps of a and b
    persistent: bool = False           # one block per SM, each walking its tiles

    @cached_property
    def _source(self) -> str:
        return (FOLDER / self.file).read_text()

    @cached_property
    def params(self) -> tuple[str, ...]:
        """The configuration's parameters, in the order of the instance lines (none: v0, v1)."""
        m = re.search(rf"^#define {self.kind.upper()}\(([^)]*)\)", self._source, re.M)
        return tuple(p.strip() for p in m[1].split(",")) if m else ()

    @cached_property
    def configs(self) -> tuple[tuple[int, ...], ...]:
        """The configurations the .cu builds, in its order (one, empty, without parameters)."""
        if not self.params:
            return ((),)
        block = re.search(r"\[start:configs\](.*?)\[end:configs\]", self._source, re.S)[1]
        code = "\n".join(line for line in block.splitlines() if not line.lstrip().startswith("//"))
        return tuple(tuple(int(v) for v in m.split(","))
                     for m in re.findall(rf"\b{self.kind.upper()}\(([\d,\s]+)\)", code))

    def named(self, config: tuple) -> dict[str, int]:
        """A configuration's parameters by name: {'BM': 128, 'BN': 128, ...}."""
        return dict(zip(self.params, config))

    def compiled_for(self, dtype: torch.dtype) -> bool:
        return dtype != torch.float32 or not self.sixteen_bit

    def kernel_name(self, config: tuple, dtype: torch.dtype) -> str:
        """The kernel for ``config`` and ``dtype``, e.g. gemm_v2_t32_bf16."""
        parts = "".join(f"{'t' if p == 'TILE' else p.lower()}{v}_"
                        for p, v in self.named(config).items())
        return f"gemm_{self.kind}_{parts}{TAG[dtype]}"

    def tile(self, config: tuple) -> tuple[int, int]:
        """(rows, columns) of the tile of C one block computes."""
        if self.fixed_tile:
            return self.fixed_tile
        p = self.named(config)
        return (p["TILE"], p["TILE"]) if "TILE" in p else (p["BM"], p["BN"])

    def block_threads(self, config: tuple) -> int:
        """Threads a block of this configuration has (its __launch_bounds__)."""
        return self.threads(self.named(config))

    def shared_bytes(self, config: tuple) -> int:
        """Dynamic shared memory a block asks for at launch: the S stages of A's and B's tiles,
        2-byte values (and, on Hopper, HOPPER_ALIGN more to align them); 0 for the rungs whose
        shared memory is static (no stages)."""
        p = self.named(config)
        if "S" not in p:
            return 0
        return p["S"] * (p["BM"] + p["BN"]) * p["BK"] * 2 + (HOPPER_ALIGN if self.hopper else 0)

    def blocks(self, config: tuple, m: int, n: int) -> int:
        """Blocks of the one-dimensional grid for an m x n C: one per tile, partial ones too."""
        rows, cols = self.tile(config)
        return math.ceil(m / rows) * math.ceil(n / cols)


def warps(p: dict) -> int:
    """Threads of a warp-tiled block: a warp per WM x WN tile of the block's BM x BN (v6 to v8)."""
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32


def warpgroups(p: dict) -> int:
    """Threads of a wgmma block: a warpgroup (128 threads) per 64 rows of its tile (v9)."""
    return p["BM"] // 64 * 128


def with_producer(p: dict) -> int:
    """A wgmma block's warpgroups and one more, the producer's (v10, v11)."""
    return warpgroups(p) + 128
