"""The CUDA C softmax ladder as registry entries: one launcher per rung, plus `cuda`, the best.

Each rung is a .cu file in phase24/kernels; its launcher picks the kernel instance (dtype
and compile-time configuration) and the launch shape, then calls it through the bridge.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from phase24.bridge.launch import Kernel, gpu, load_kernel, ptr
from phase24.softmax.args import DTYPE_TAG, check_input, run_rows

MAX_GRID = 2**31 - 1


def vec_width(dtype: torch.dtype) -> int:
    """Elements in one 16-byte access."""
    return 16 // torch.empty((), dtype=dtype).element_size()


@lru_cache(maxsize=None)
def _kernel(source: str, name: str) -> Kernel:
    return load_kernel(f"{_kernels_dir()}/{source}", name)


def _kernels_dir() -> str:
    from phase24.bridge.nvcc import KERNELS_DIR

    return str(KERNELS_DIR)


def sm_count(device=None) -> int:
    """Multiprocessors of `device` (torch's current device if None)."""
    return gpu(device).sm_count


def has_clusters(device=None) -> bool:
    """Whether the cluster rungs run on `device`: its build is sm_90a's (Hopper)."""
    return gpu(device).clusters


def _launch(source: str, name: str, x2d: torch.Tensor, out: torch.Tensor, grid: int, block: int):
    m, n = x2d.shape
    _kernel(source, name).launch(
        min(grid, MAX_GRID), block, x2d, out, np.int64(m), np.int32(n),
        np.int64(x2d.stride(0)))


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


def capacity(kind: str, config: tuple, dtype) -> int:
    """The longest row (in values) that configuration `config` of rung `kind` holds."""
    return SLOTS[kind](*config) * vec_width(dtype)


def reach(kind: str, dtype) -> int:
    """The longest row any compiled configuration of rung `kind` holds."""
    return max(capacity(kind, c, dtype) for c in configs(kind, dtype))


def _check_fits(kind: str, config, x2d) -> None:
    """A configuration forced by a caller must be compiled for the dtype and hold the row; else
    say so (never garbage)."""
    if tuple(config) not in configs(kind, x2d.dtype):
        raise ValueError(f"{kind}: configuration {config} is not compiled for {x2d.dtype}")
    n, cap = x2d.shape[1], capacity(kind, config, x2d.dtype)
    if cap < n:
        raise ValueError(f"{kind}: configuration {config} holds rows of at most {cap} "
                         f"values, not {n}")


# ---- v0 .. v3: one launch shape each -------------------------------------------------------

def rows_v0(x2d, out):
    m = x2d.shape[0]
    _launch("softmax_v0_naive.cu", f"softmax_v0_{DTYPE_TAG[x2d.dtype]}", x2d, out,
            math.ceil(m / 128), 128)


def rows_v1(x2d, out):
    _launch("softmax_v1_block_smem.cu", f"softmax_v1_{DTYPE_TAG[x2d.dtype]}", x2d, out,
            x2d.shape[0], 256)


def rows_v2(x2d, out):
    _launch("softmax_v2_online_shuffle.cu", f"softmax_v2_{DTYPE_TAG[x2d.dtype]}", x2d, out,
            x2d.shape[0], 256)


V3_KS = (1, 2, 4, 8, 16)


def rows_v3(x2d, out):
    n = x2d.shape[1]
    k = next((k for k in V3_KS if 256 * k * vec_width(x2d.dtype) >= n), None)
    if k is None:  # the row does not fit in the registers of one block
        return rows_v2(x2d, out)
    _launch("softmax_v3_registers_vec16.cu", f"softmax_v3_k{k}_{DTYPE_TAG[x2d.dtype]}", x2d, out,
            x2d.shape[0], 256)


# ---- v4: launch shape chosen from N ------------------------------------------------------------

# (GROUP, K) pairs compiled in softmax_v4_shape_specialised.cu.
V4_CONFIGS = ((1, 1), (1, 2), (2, 2), (4, 1), (4, 2), (4, 4), (8, 1), (8, 2), (8, 4),
              (16, 1), (16, 2), (16, 4), (32, 1), (32, 2), (32, 4), (32, 8),
              (64, 4), (64, 8), (128, 2), (128, 4), (128, 8), (256, 2), (256, 4), (256, 8),
              (512, 2), (512, 4), (512, 8), (1024, 2), (1024, 4))


def v4_choose(n: int, dtype) -> tuple[int, int] | None:
    """The (GROUP, K) that covers a row of n with the least waste, K as close to 4 as possible."""
    slots = math.ceil(n / vec_width(dtype))
    fits = [(g, k) for g, k in V4_CONFIGS if g * k >= slots]
    if not fits:
        return None
    return min(fits, key=lambda gk: (gk[0] * gk[1], abs(gk[1] - 4)))


def rows_v4(x2d, out, config: tuple[int, int] | None = None):
    m, n = x2d.shape
    config = config or tuned_config("v4", x2d) or v4_choose(n, x2d.dtype)
    if config is None:
        return rows_v2(x2d, out)
    group, k = config
    _check_fits("v4", config, x2d)
    block = group if group > 32 else 128  # short rows: several groups share a block
    _launch("softmax_v4_shape_specialised.cu", f"softmax_v4_g{group}_k{k}_{DTYPE_TAG[x2d.dtype]}",
            x2d, out, math.ceil(m / (block // group)), block)


# ---- v5: a thread-block cluster per row (Hopper) -------------------------------------------------

# (THREADS, K, CLUSTER) triples compiled in softmax_v5_cluster.cu; the last five are fp32 only.
V5_CONFIGS = ((256, 2, 2), (256, 4, 2), (512, 4, 2), (1024, 2, 2), (1024, 4, 2),
              (256, 2, 4), (256, 4, 4), (512, 2, 4), (512, 4, 4), (1024, 2, 4), (1024, 4, 4),
              (256, 2, 8), (256, 4, 8), (512, 2, 8), (512, 4, 8), (1024, 2, 8), (1024, 4, 8))
V5_CONFIGS_F32 = ((512, 8, 2), (512, 8, 4), (512, 8, 8), (1024, 8, 4), (1024, 8, 8))


def v5_configs(dtype):
    return V5_CONFIGS + (V5_CONFIGS_F32 if dtype == torch.float32 else ())


def v5_choose(m: int, n: int, dtype) -> tuple[int, int, int] | None:
    """Fewest blocks per row that still give the GPU ~2 blocks per SM; least waste after that."""
    slots = math.ceil(n / vec_width(dtype))
    fits = [(t, k, c) for t, k, c in v5_configs(dtype) if t * k * c >= slots]
    if not fits:
        return None
    want = 2 * sm_count() if torch.cuda.is_available() else 264

    def cost(tkc):
        t, k, c = tkc
        return (m * c < want and c < 8, c if m * c >= want else -c, t * k * c, abs(k - 4))

    return min(fits, key=cost)


def rows_v5(x2d, out, config: tuple[int, int, int] | None = None):
    _rows_cluster("v5", "softmax_v5_cluster.cu", v5_choose, x2d, out, config)


def _rows_cluster(kind: str, source: str, choose, x2d, out, config):
    """v5, v7, v9, v10: one cluster of config[-1] blocks of config[0] threads per row. `config`
    is forced, else tuned, else choose(m, n, dtype); its kernel is
    softmax_<kind>_t<THREADS>_k<K>[_s<S>]_c<CLUSTER>_<dtype>, S the shared-memory slots."""
    m, n = x2d.shape
    config = config or tuned_config(kind, x2d) or choose(m, n, x2d.dtype)
    if config is None or not has_clusters(x2d.device):
        return rows_v2(x2d, out)
    _check_fits(kind, config, x2d)
    fields = "_".join(f"{f}{v}" for f, v in zip(("t", "k", "s"), config[:-1]))
    kernel = _kernel(source, f"softmax_{kind}_{fields}_c{config[-1]}_{DTYPE_TAG[x2d.dtype]}")
    shared = _dynamic_shared(kernel, 16 * config[2] * config[0]) if len(config) == 4 else 0
    _cluster_per_row(kernel, x2d, out, config[0], config[-1], shared_bytes=shared)


def _cluster_per_row(kernel: Kernel, x2d, out, threads: int, cluster: int, shared_bytes: int = 0):
    """Launch a kernel that gives each row one cluster of `cluster` blocks; the grid counts
    blocks, so more than MAX_GRID // cluster rows take several launches."""
    m, n = x2d.shape
    kernel.allow_cluster(cluster)
    rows_per_launch = MAX_GRID // cluster
    for start in range(0, m, rows_per_launch):
        stop = min(m, start + rows_per_launch)
        kernel.launch((stop - start) * cluster, threads, x2d[start:stop],
                      out[start:stop], np.int64(stop - start), np.int32(n),
                      np.int64(x2d.stride(0)), shared_bytes=shared_bytes)


# ---- v6: v4's launch shapes, lean reductions -------------------------------------------------

# (GROUP, K) pairs compiled in softmax_v6_lean.cu: v4's, and one more for fp32 alone.
V6_CONFIGS = V4_CONFIGS
V6_CONFIGS_F32 = ((1024, 8),)


def v6_configs(dtype):
    return V6_CONFIGS + (V6_CONFIGS_F32 if dtype == torch.float32 else ())


def rows_v6(x2d, out, config: tuple[int, int] | None = None):
    m, n = x2d.shape
    config = config or tuned_config("v6", x2d) or v4_choose(n, x2d.dtype)
    if config is None:
        return rows_v2(x2d, out)
    group, k = config
    _check_fits("v6", config, x2d)
    block = group if group > 32 else 128
    _launch("softmax_v6_lean.cu", f"softmax_v6_g{group}_k{k}_{DTYPE_TAG[x2d.dtype]}",
            x2d, out, math.ceil(m / (block // group)), block)


# ---- v7: v5's cluster, lean reductions, raw 16-byte slots, clusters up to 16 (Hopper) ---------

# (THREADS, K, CLUSTER) triples compiled in softmax_v7_cluster_lean.cu: K raw 16-byte slots
# per thread (K = 4: 2048 threads per SM; K = 8: 1024).
V7_CONFIGS = tuple((t, k, c) for c in (1, 2, 4, 8, 16)
                   for t, k in ((256, 4), (512, 4), (1024, 4), (512, 8), (1024, 8)))


def v7_choose(m: int, n: int, dtype) -> tuple[int, int, int] | None:
    """Blocks of 1024 x 4 slots in the smallest cluster that holds the row (fewest barriers);
    for few rows, the largest cluster of the smallest blocks that hold it (more SMs at work)."""
    fits = [tkc for tkc in V7_CONFIGS if capacity("v7", tkc, dtype) >= n and tkc[1] == 4]
    if not fits:
        return None
    if _few(m):
        return max(fits, key=lambda tkc: (tkc[2], -tkc[0]))
    return min(fits, key=lambda tkc: (tkc[2], -tkc[0]))


def rows_v7(x2d, out, config: tuple[int, int, int] | None = None):
    _rows_cluster("v7", "softmax_v7_cluster_lean.cu", v7_choose, x2d, out, config)


# ---- v8: persistent clusters, the next row prefetched into shared memory (Hopper) ------------

# (THREADS, CLUSTER) pairs compiled in softmax_v8_pipelined.cu; a block holds THREADS x 4 slots
# of 16 bytes in registers and as many in shared memory.
V8_CONFIGS = tuple((t, c) for c in (1, 2, 4, 8, 16) for t in (256, 512, 1024))


def _v8_grid_clusters(name: str, threads: int, cluster: int, device=None) -> int:
    """Clusters that run at once on `device`: the persistent kernel's grid (one wave, no tail)."""
    kernel = _kernel("softmax_v8_pipelined.cu", name)
    return max(1, kernel.max_active_clusters(threads, cluster, 64 * threads, device=device))


def rows_v8(x2d, out, config: tuple[int, int] | None = None):
    m, n = x2d.shape
    tag = DTYPE_TAG[x2d.dtype]
    if config is None:
        config = tuned_config("v8", x2d)
    if config is None:
        fits = [tc for tc in V8_CONFIGS if capacity("v8", tc, x2d.dtype) >= n]
        config = min(fits, key=lambda tc: (tc[1], -tc[0])) if fits else None
    if config is None or not has_clusters(x2d.device):
        return rows_v2(x2d, out)
    t, c = config
    _check_fits("v8", config, x2d)
    name = f"softmax_v8_t{t}_c{c}_{tag}"
    kernel = _kernel("softmax_v8_pipelined.cu", name)
    smem = _dynamic_shared(kernel, 64 * t)  # the next row's slots
    kernel.allow_cluster(c)
    clusters = min(m, _v8_grid_clusters(name, t, c, x2d.device))
    kernel.launch(clusters * c, t, x2d, out, np.int64(m), np.int32(n),
                  np.int64(x2d.stride(0)), shared_bytes=smem)


# ---- v9: v7 with part of each block's chunk in shared memory (Hopper) --------------------------

# (THREADS, K, S, CLUSTER) compiled in softmax_v9_cluster_smem.cu: K slots of 16 bytes per
# thread in registers, S in shared memory.
V9_CONFIGS = tuple((t, k, s, c) for c in (1, 2, 4, 8, 16)
                   for t, k, s in ((256, 4, 4), (512, 4, 4), (1024, 4, 4), (256, 4, 12),
                                   (512, 4, 12), (1024, 4, 12), (256, 4, 28)))


def rows_v9(x2d, out, config: tuple[int, int, int, int] | None = None):
    _rows_cluster("v9", "softmax_v9_cluster_smem.cu", _smem_choose("v9"), x2d, out, config)


def _smem_choose(kind: str):
    """v9 and v10 untuned: the rung's default block in the smallest cluster that holds the row;
    rows longer than that: the configuration that holds the least beyond the row."""
    def choose(m: int, n: int, dtype):
        fits = [cfg for cfg in configs(kind, dtype) if capacity(kind, cfg, dtype) >= n]
        preferred = [cfg for cfg in fits if cfg[:3] == DEFAULT_BLOCK[kind]]
        return min(preferred or fits, key=lambda cfg: (capacity(kind, cfg, dtype), cfg[3]),
                   default=None)
    return choose


# ---- v10: v9 with the cluster's partials pushed into every block (Hopper) ------------------------

# (THREADS, K, S, CLUSTER) compiled in softmax_v10_cluster_push.cu; S = 0 is v7's block.
V10_CONFIGS = tuple((t, k, s, c) for c in (1, 2, 4, 8, 16)
                    for t, k, s in ((256, 4, 0), (512, 4, 0), (1024, 4, 0), (512, 4, 4),
                                    (1024, 4, 4), (256, 4, 12), (512, 4, 12)))
# Untuned, each rung's block: v9's 128 KB (two per SM); v10's 512 x 4 slots in registers, the
# tuner's most frequent choice.
DEFAULT_BLOCK = {"v9": (512, 4, 12), "v10": (512, 4, 0)}


def rows_v10(x2d, out, config: tuple[int, int, int, int] | None = None):
    _rows_cluster("v10", "softmax_v10_cluster_push.cu", _smem_choose("v10"), x2d, out, config)


def _dynamic_shared(kernel: Kernel, nbytes: int) -> int:
    """Let the kernel take nbytes of dynamic shared memory and return nbytes. Without the
    attribute a block gets 48 KB in all, its static shared memory included (so exactly 48 KB of
    dynamic shared memory fails to launch)."""
    kernel.set_attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES", nbytes)
    return nbytes


def _few(m: int) -> bool:
    return m <= 256


def rows_class(m: int) -> int:
    """The row-count class tuned configurations are kept per: 0 for up to 16 rows, 1 for up to
    256 (too few to fill the SMs one row each), 2 beyond. (One class for every M <= 256 let the
    64-row winner of N = 32768 overwrite the 1-row one.)"""
    return 0 if m <= 16 else 1 if m <= 256 else 2


# ---- cuda: the best rung for the shape ---------------------------------------------------------

TUNED_FILE = Path(__file__).with_name("tuned_configs.json")


@lru_cache(maxsize=None)
def tuned() -> dict:
    """Best configuration per benchmark shape, measured by scripts/tune_softmax.py on the GPU
    named in the file (results/h200/tune.json); other GPUs use the heuristics above."""
    if not TUNED_FILE.exists() or not torch.cuda.is_available():
        return {}
    data = json.loads(TUNED_FILE.read_text())
    if data["gpu"] != torch.cuda.get_device_name():
        return {}
    return {(e["dtype"], e["N"], e["rows"]): (e["kind"], tuple(e["config"] or ()))
            for e in data["best"]}


def tuned_config(kind: str, x2d) -> tuple | None:
    m, n = x2d.shape
    hit = tuned().get((DTYPE_TAG[x2d.dtype], n, rows_class(m)))
    return hit[1] if hit and hit[0] == kind else None


# Rows at least this long go to a cluster kernel when there are few of them (Hopper).
CLUSTER_FOR_FEW_ROWS_FROM_N = 8192


def rows_best(x2d, out):
    m, n = x2d.shape
    clusters = has_clusters(x2d.device)
    hit = tuned().get((DTYPE_TAG[x2d.dtype], n, rows_class(m)))
    if hit and (hit[0] not in CLUSTER_KINDS or clusters):
        return KINDS[hit[0]](x2d, out)
    if n <= reach("v4", x2d.dtype) and not (clusters and _few(m) and n >= CLUSTER_FOR_FEW_ROWS_FROM_N):
        return rows_v6(x2d, out)
    if clusters and n <= reach("v10", x2d.dtype):
        return rows_v10(x2d, out)  # its default block, the smallest cluster that holds the row
    if n <= reach("v4", x2d.dtype):
        return rows_v6(x2d, out)
    return rows_v2(x2d, out)


def configs(kind: str, dtype) -> tuple:
    """The configurations of rung `kind` compiled for `dtype`."""
    return {"v4": V4_CONFIGS, "v5": v5_configs(dtype), "v6": v6_configs(dtype), "v7": V7_CONFIGS,
            "v8": V8_CONFIGS, "v9": V9_CONFIGS, "v10": V10_CONFIGS}[kind]


KINDS = {"v3": rows_v3, "v4": rows_v4, "v5": rows_v5, "v6": rows_v6, "v7": rows_v7,
         "v8": rows_v8, "v9": rows_v9, "v10": rows_v10}
# The tunable rungs that give a row to a thread-block cluster: Hopper (sm_90) only; elsewhere
# their launchers fall back to v2.
CLUSTER_KINDS = ("v5", "v7", "v8", "v9", "v10")


RUNGS = {
    "cuda-naive": rows_v0,
    "cuda-v1": rows_v1,
    "cuda-v2": rows_v2,
    "cuda-v3": rows_v3,
    "cuda-v4": rows_v4,
    "cuda-v5": rows_v5,
    "cuda-v6": rows_v6,
    "cuda-v7": rows_v7,
    "cuda-v8": rows_v8,
    "cuda-v9": rows_v9,
    "cuda-v10": rows_v10,
    "cuda": rows_best,
}

# Kernel files that use Hopper-only features and are built for sm_90a alone.
HOPPER_ONLY = {"softmax_v5_cluster.cu", "softmax_v7_cluster_lean.cu", "softmax_v8_pipelined.cu",
               "softmax_v9_cluster_smem.cu", "softmax_v10_cluster_push.cu"}


def _entry(name, rows):
    def softmax(x: torch.Tensor) -> torch.Tensor:
        check_input(x, name)
        return run_rows(rows, x)

    softmax.__name__ = f"softmax_{name.replace('-', '_')}"
    softmax.__doc__ = f"Softmax over the last dimension with {name} ({rows.__name__})."
    return softmax


IMPLEMENTATIONS = {name: _entry(name, rows) for name, rows in RUNGS.items()}
