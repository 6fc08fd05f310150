"""What each CUDA rung compiles: its file, its configurations, and its kernels' names.

A rung's .cu file ends with one instance line per configuration (``V4(32, 2)``, ...); this table
lists the same configurations, in the order the launchers scan them, and ``kernel_name`` spells
each kernel's name as the file's ``VN_KERNEL`` makes it. tests/test_bridge.py compiles every rung
and checks that the kernels ptxas reports are exactly the names this table gives.
"""

from __future__ import annotations

import torch

from phase24.core.dtypes import TAG, vec16

FILES = {
    "v0": "v0_naive.cu",
    "v1": "v1_block_smem.cu",
    "v2": "v2_online_shuffle.cu",
    "v3": "v3_registers_vec16.cu",
    "v4": "v4_shape_specialised.cu",
    "v5": "v5_cluster.cu",
    "v6": "v6_lean.cu",
    "v7": "v7_cluster_lean.cu",
    "v8": "v8_pipelined.cu",
    "v9": "v9_cluster_smem.cu",
    "v10": "v10_cluster_push.cu",
}

# The rungs that give a row to a thread-block cluster: built for sm_90a (Hopper) alone; elsewhere
# their launchers fall back to v2.
CLUSTER_KINDS = ("v5", "v7", "v8", "v9", "v10")

# The letters of each tunable rung's kernel names, one per parameter of its configuration:
# softmax_v4_g32_k2_bf16 is v4's (GROUP=32, K=2) for bfloat16.
PARAMS = {"v3": "k", "v4": "gk", "v5": "tkc", "v6": "gk", "v7": "tkc", "v8": "tc",
          "v9": "tksc", "v10": "tksc"}

CLUSTERS = (1, 2, 4, 8, 16)  # 16 is "non-portable": the launcher allows it on the kernel first
V4_SHAPES = [(1, 1), (1, 2), (2, 2), (4, 1), (4, 2), (4, 4), (8, 1), (8, 2), (8, 4),
             (16, 1), (16, 2), (16, 4), (32, 1), (32, 2), (32, 4), (32, 8),
             (64, 4), (64, 8), (128, 2), (128, 4), (128, 8), (256, 2), (256, 4), (256, 8),
             (512, 2), (512, 4), (512, 8), (1024, 2), (1024, 4)]
V7_BLOCKS = [(256, 4), (512, 4), (1024, 4), (512, 8), (1024, 8)]
V9_BLOCKS = [(256, 4, 4), (512, 4, 4), (1024, 4, 4), (256, 4, 12), (512, 4, 12), (1024, 4, 12),
             (256, 4, 28)]
V10_BLOCKS = [(128, 4, 0), (256, 4, 0), (512, 4, 0), (1024, 4, 0), (512, 4, 4), (1024, 4, 4),
              (256, 4, 12), (512, 4, 12)]

# Each rung's configurations: "every" is built for every dtype, "float32" for float32 alone (the
# 16-bit types would not fit them in registers). v0-v2 have none: one kernel per dtype.
CONFIGS = {
    "v0": {"every": [()]},
    "v1": {"every": [()]},
    "v2": {"every": [()]},
    "v3": {"every": [(1,), (2,), (4,), (8,), (16,)]},  # K slots of 16 bytes a thread
    "v4": {"every": V4_SHAPES},  # (GROUP, K)
    "v5": {"every": [(256, 2, 2), (256, 4, 2), (512, 4, 2), (1024, 2, 2), (1024, 4, 2),  # (THREADS,
                     (256, 2, 4), (256, 4, 4), (512, 2, 4), (512, 4, 4), (1024, 2, 4),  # K, CLUSTER)
                     (1024, 4, 4), (256, 2, 8), (256, 4, 8), (512, 2, 8), (512, 4, 8),
                     (1024, 2, 8), (1024, 4, 8)],
           "float32": [(512, 8, 2), (512, 8, 4), (512, 8, 8), (1024, 8, 4), (1024, 8, 8)]},
    "v6": {"every": V4_SHAPES, "float32": [(1024, 8)]},  # (GROUP, K)
    "v7": {"every": [(t, k, c) for c in CLUSTERS for t, k in V7_BLOCKS]},  # (THREADS, K, CLUSTER)
    "v8": {"every": [(t, c) for c in CLUSTERS for t in (256, 512, 1024)]},  # (THREADS, CLUSTER)
    "v9": {"every": [(*b, c) for c in CLUSTERS for b in V9_BLOCKS]},  # (THREADS, K, S, CLUSTER)
    "v10": {"every": [(*b, c) for c in CLUSTERS for b in V10_BLOCKS]},  # as v9's
}

# 16-byte slots per row that a configuration of each tunable rung holds.
SLOTS = {
    "v4": lambda group, k: group * k,
    "v5": lambda threads, k, cluster: threads * k * cluster,
    "v6": lambda group, k: group * k,
    "v7": lambda threads, k, cluster: threads * k * cluster,
    "v8": lambda threads, cluster: threads * 4 * cluster,
    "v9": lambda threads, k, s, cluster: threads * (k + s) * cluster,
    "v10": lambda threads, k, s, cluster: threads * (k + s) * cluster,
}


def source(kind: str) -> str:
    """The file of rung `kind` ('v0' .. 'v10'), in this folder."""
    return FILES[kind]


def configs(kind: str, dtype: torch.dtype) -> tuple[tuple, ...]:
    """The configurations of rung `kind` compiled for `dtype`, in the order the launchers scan."""
    table = CONFIGS[kind]
    return tuple(table["every"]) + tuple(table.get("float32", []) if dtype == torch.float32 else ())


def kernel_name(kind: str, config: tuple, dtype: torch.dtype) -> str:
    """The kernel of rung `kind` for `config` and `dtype`, e.g. softmax_v4_g32_k2_bf16."""
    params = "".join(f"{letter}{value}_" for letter, value in zip(PARAMS.get(kind, ""), config))
    return f"softmax_{kind}_{params}{TAG[dtype]}"


def capacity(kind: str, config: tuple, dtype: torch.dtype) -> int:
    """The longest row (in values) that configuration `config` of rung `kind` holds."""
    return SLOTS[kind](*config) * vec16(dtype)
