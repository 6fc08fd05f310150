"""What each CUDA GEMM rung compiles: its file, its configurations, its kernels' names, and the
tile and block each configuration launches with.

A rung's .cu file ends with one instance line per configuration (``V4(128, 128, 8, 8, 8)``, ...);
this table lists the same configurations, and ``kernel_name`` spells each kernel's name as the
file's ``VN_KERNEL`` makes it (gemm_v4_bm128_bn128_bk8_tm8_tn8_f32).
tests/test_gemm_cuda_rungs.py compiles every rung and checks that the kernels ptxas reports are
exactly the names this table gives.
"""

from __future__ import annotations

import math

import torch

from phase24.core.dtypes import TAG

FILES = {
    "v0": "v0_naive.cu",
    "v1": "v1_coalesced.cu",
    "v2": "v2_shared_tiles.cu",
    "v3": "v3_registers_1d.cu",
    "v4": "v4_registers_2d.cu",
    "v5": "v5_vectorised.cu",
    "v6": "v6_warp_tiles.cu",
    "v7": "v7_prefetch.cu",
    "v8": "v8_mma.cu",
    "v9": "v9_wgmma.cu",
    "v10": "v10_tma_producer.cu",
    "v11": "v11_persistent.cu",
}

# Each rung's configuration parameters, in the order of its instance lines; a kernel's name
# writes each as its lower-case name and value (bm128_bn128_...). v0 and v1 have none.
PARAMS = {
    "v0": (), "v1": (),
    "v2": ("TILE",),
    "v3": ("BM", "BN", "BK", "TM"),
    "v4": ("BM", "BN", "BK", "TM", "TN"),
    "v5": ("BM", "BN", "BK", "TM", "TN"),
    "v6": ("BM", "BN", "BK", "WM", "WN", "TM", "TN"),
    "v7": ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "G"),
    "v8": ("BM", "BN", "BK", "WM", "WN", "S", "G"),
    "v9": ("BM", "BN", "BK", "S", "G"),
    "v10": ("BM", "BN", "BK", "S", "G"),
    "v11": ("BM", "BN", "BK", "S", "G"),
}

# Each rung's configurations, built for every dtype, largest tile first (v3: the tuner's fastest
# at 4096^3 first, the untuned choice; v7, v8, v9: their 128 x 128 tiles first, the untuned
# choice, then the wider tiles only the tuner picks).
CONFIGS = {
    "v0": [()],
    "v1": [()],
    "v2": [(32,), (16,)],
    "v3": [(64, 32, 32, 8), (32, 64, 32, 4), (32, 32, 32, 4), (64, 32, 16, 8), (64, 64, 8, 8),
           (32, 64, 8, 4), (64, 32, 8, 8), (128, 32, 8, 16)],
    "v4": [(128, 128, 8, 8, 8), (128, 64, 8, 8, 8), (64, 64, 8, 4, 4)],
    "v5": [(128, 128, 8, 8, 8), (128, 128, 16, 8, 8), (64, 64, 16, 4, 4)],
    "v6": [(128, 128, 16, 64, 64, 8, 4), (128, 128, 8, 64, 32, 8, 4), (128, 64, 16, 64, 32, 8, 4),
           (64, 128, 16, 32, 64, 8, 4), (64, 64, 16, 32, 32, 4, 4), (32, 64, 16, 32, 32, 4, 4)],
    "v7": [(128, 128, 16, 64, 32, 8, 4, 8), (128, 128, 8, 64, 32, 8, 4, 8),
           (128, 256, 8, 64, 64, 8, 4, 8), (256, 128, 8, 64, 64, 8, 4, 8),
           (128, 64, 16, 64, 32, 8, 4, 8), (64, 64, 16, 32, 32, 4, 4, 8)],
    "v8": [(128, 128, 32, 64, 64, 3, 8), (128, 256, 32, 64, 64, 4, 8), (256, 128, 64, 64, 64, 3, 8),
           (128, 128, 64, 64, 64, 3, 8), (128, 256, 64, 64, 64, 3, 8), (128, 128, 64, 64, 64, 4, 8),
           (256, 128, 32, 64, 64, 4, 8), (128, 128, 32, 64, 64, 5, 8),
           (128, 128, 32, 64, 32, 3, 8), (128, 64, 32, 64, 32, 4, 8), (64, 64, 32, 32, 32, 4, 8)],
    "v9": [(128, 128, 64, 4, 8), (128, 128, 64, 6, 8), (128, 256, 64, 4, 8), (128, 128, 64, 3, 8),
           (128, 64, 64, 4, 8)],
    "v10": [(128, 256, 64, 4, 8), (128, 256, 64, 3, 8), (128, 128, 64, 6, 8), (64, 256, 64, 5, 8),
            (64, 128, 64, 8, 8)],
    "v11": [(128, 256, 64, 4, 8), (128, 256, 64, 3, 8), (128, 128, 64, 6, 8), (64, 256, 64, 5, 8),
            (64, 128, 64, 8, 8)],
}

# The Tensor Core rungs compile float16 and bfloat16 kernels only (float32 is the SIMT rungs').
SIXTEEN_BIT_ONLY = {"v8", "v9", "v10", "v11"}

# The rungs built for sm_90a alone (wgmma and TMA are Hopper's): `phase24 build` skips their files
# for Ampere and Ada, where nvcc refuses them with one line, and their launchers refuse to run on
# any GPU whose build is not sm_90a's (launchers.runs_here).
HOPPER_KINDS = {"v9", "v10", "v11"}

# The rungs whose blocks stay and walk the tiles (v11): one block per SM, at most one per tile.
PERSISTENT_KINDS = {"v11"}

# The rungs with a table of configurations (v2 on): what the tuner times and the sanitizer forces.
TUNABLE = tuple(kind for kind, params in PARAMS.items() if params)

# v0 and v1: one thread per output, 256 threads a block over a fixed tile of C (rows, columns).
FIXED_TILES = {"v0": (32, 8), "v1": (8, 32)}


def source(kind: str) -> str:
    """The file of rung `kind` ('v0' .. 'v11'), in this folder."""
    return FILES[kind]


def configs(kind: str) -> tuple[tuple, ...]:
    """The configurations of rung `kind`, as its instance lines give them (every dtype)."""
    return tuple(CONFIGS[kind])


def named(kind: str, config: tuple) -> dict[str, int]:
    """A configuration's parameters by name: {'BM': 128, 'BN': 128, ...}."""
    return dict(zip(PARAMS[kind], config))


def compiled_for(kind: str, dtype: torch.dtype) -> bool:
    """Whether rung ``kind`` has kernels for ``dtype``."""
    return dtype != torch.float32 or kind not in SIXTEEN_BIT_ONLY


def kernel_name(kind: str, config: tuple, dtype: torch.dtype) -> str:
    """The kernel of rung `kind` for `config` and `dtype`, e.g. gemm_v2_t32_bf16."""
    parts = "".join(f"{'t' if p == 'TILE' else p.lower()}{v}_" for p, v in named(kind, config).items())
    return f"gemm_{kind}_{parts}{TAG[dtype]}"


def tile(kind: str, config: tuple) -> tuple[int, int]:
    """(rows, columns) of the tile of C one block computes."""
    if kind in FIXED_TILES:
        return FIXED_TILES[kind]
    p = named(kind, config)
    return (p["TILE"], p["TILE"]) if "TILE" in p else (p["BM"], p["BN"])


def threads(kind: str, config: tuple) -> int:
    """Threads a block of this configuration has (its __launch_bounds__)."""
    p = named(kind, config)
    if kind in FIXED_TILES:
        return 256
    if kind == "v2":
        return p["TILE"] ** 2
    if kind == "v3":
        return p["BM"] * p["BN"] // p["TM"]
    if kind in ("v4", "v5"):
        return p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    if kind == "v9":  # a warpgroup (128 threads) per 64 rows of the tile
        return p["BM"] // 64 * 128
    if kind in ("v10", "v11"):  # the same, and the producer's warpgroup
        return (p["BM"] // 64 + 1) * 128
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32


def shared_bytes(kind: str, config: tuple) -> int:
    """Dynamic shared memory a block of this configuration asks for at launch (the stages of A's
    and B's tiles of v8 to v11, 2-byte values; the Hopper rungs' 1 KB more, to start them on
    a 1024-byte boundary, as the 128-byte swizzle needs); the other rungs' is static (0 here)."""
    if "S" not in PARAMS[kind]:  # the rungs with stages (v8 to v11)
        return 0
    p = named(kind, config)
    return p["S"] * (p["BM"] + p["BN"]) * p["BK"] * 2 + (1024 if kind in HOPPER_KINDS else 0)


def blocks(kind: str, config: tuple, m: int, n: int) -> int:
    """Blocks of the one-dimensional grid for an m x n C: one per tile, partial tiles included."""
    rows, cols = tile(kind, config)
    return math.ceil(m / rows) * math.ceil(n / cols)
