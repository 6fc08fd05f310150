"""The CUDA C ladder's launchers: rows_v0 .. rows_v10, one per rung, and rows_best (`cuda`).

Each rung is a .cu file of this folder; its launcher picks the kernel instance (dtype and
compile-time configuration, from configs.py's table) and the launch shape, then calls it through
the bridge. A tunable rung takes a caller's configuration, else the tuned table's for the shape
(tuned_configs.json, written by scripts/tune.py softmax cuda on one GPU), else its own choice (CHOOSE).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from phase24.bridge.launch import Kernel, gpu, load_kernel
from phase24.core import tuned as tuned_tables
from phase24.core.dtypes import TAG, vec16
from phase24.softmax.args import rows_class
from phase24.softmax.cuda.configs import CLUSTER_KINDS, capacity, configs, kernel_name, source

SOURCE_DIR = Path(__file__).parent
MAX_GRID = 2**31 - 1


@lru_cache(maxsize=None)
def _kernel(source: str, name: str) -> Kernel:
    return load_kernel(SOURCE_DIR / source, name)


HOPPER_SMS = 132  # an H100 SXM's or an H200's multiprocessors: v5's choice where no GPU is seen


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


def _run_rung(kind: str, config: tuple, x2d, out, grid: int, block: int):
    _launch(source(kind), kernel_name(kind, config, x2d.dtype), x2d, out, grid, block)


@lru_cache(maxsize=None)  # rows_best asks at every choice
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


def _config(kind: str, x2d, config: tuple | None) -> tuple | None:
    """The configuration a tunable rung runs: `config` if the caller forces one (checked), else
    the tuned table's for this GPU and shape, else the rung's own choice (None: none holds it)."""
    if config:
        _check_fits(kind, config, x2d)
        return config
    m, n = x2d.shape
    return tuned_config(kind, x2d) or CHOOSE[kind](m, n, x2d.dtype, x2d.device.index)


# ---- v0 .. v3: one launch shape each -------------------------------------------------------

def rows_v0(x2d, out):
    _run_rung("v0", (), x2d, out, math.ceil(x2d.shape[0] / 128), 128)


def rows_v1(x2d, out):
    _run_rung("v1", (), x2d, out, x2d.shape[0], 256)


def rows_v2(x2d, out):
    _run_rung("v2", (), x2d, out, x2d.shape[0], 256)


def rows_v3(x2d, out):
    n = x2d.shape[1]
    k = next((k for k, in configs("v3", x2d.dtype) if 256 * k * vec16(x2d.dtype) >= n), None)
    if k is None:  # the row does not fit in the registers of one block
        return rows_v2(x2d, out)
    _run_rung("v3", (k,), x2d, out, x2d.shape[0], 256)


# ---- v4, v6: launch shape chosen from N ------------------------------------------------------

def v4_choose(n: int, dtype) -> tuple[int, int] | None:
    """The (GROUP, K) that covers a row of n with the least waste, K as close to 4 as possible."""
    slots = math.ceil(n / vec16(dtype))
    fits = [(g, k) for g, k in configs("v4", dtype) if g * k >= slots]
    if not fits:
        return None
    return min(fits, key=lambda gk: (gk[0] * gk[1], abs(gk[1] - 4)))


def group_block(group: int) -> int:
    """Threads a block of v4 or v6 has: a group of 64 or more is a whole block; shorter groups
    share blocks of 128."""
    return group if group > 32 else 128


def _rows_group(kind: str, x2d, out, config):
    """v4 and v6: GROUP = config[0] threads per row (which configuration: _config)."""
    config = _config(kind, x2d, config)
    if config is None:
        return rows_v2(x2d, out)
    block = group_block(config[0])
    _run_rung(kind, config, x2d, out, math.ceil(x2d.shape[0] / (block // config[0])), block)


def rows_v4(x2d, out, config: tuple[int, int] | None = None):
    _rows_group("v4", x2d, out, config)


# ---- v5: a thread-block cluster per row (Hopper) -------------------------------------------------

def v5_choose(m: int, n: int, dtype, device=None) -> tuple[int, int, int] | None:
    """Fewest blocks per row that still give the GPU ~2 blocks per SM; least waste after that."""
    slots = math.ceil(n / vec16(dtype))
    fits = [(t, k, c) for t, k, c in configs("v5", dtype) if t * k * c >= slots]
    if not fits:
        return None
    want = 2 * (sm_count(device) if torch.cuda.is_available() else HOPPER_SMS)

    def cost(tkc):
        t, k, c = tkc
        return (m * c < want and c < 8, c if m * c >= want else -c, t * k * c, abs(k - 4))

    return min(fits, key=cost)


def rows_v5(x2d, out, config: tuple[int, int, int] | None = None):
    _rows_cluster("v5", x2d, out, config)


def _rows_cluster(kind: str, x2d, out, config):
    """v5, v7, v9, v10: one cluster of config[-1] blocks of config[0] threads per row; v9's and
    v10's (THREADS, K, S, CLUSTER) hold S slots a thread in shared memory (which configuration:
    _config)."""
    config = _config(kind, x2d, config)
    if config is None or not has_clusters(x2d.device):
        return rows_v2(x2d, out)
    kernel = _kernel(source(kind), kernel_name(kind, config, x2d.dtype))
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
        kernel.launch((stop - start) * cluster, threads, x2d[start:stop], out[start:stop],
                      np.int64(stop - start), np.int32(n), np.int64(x2d.stride(0)),
                      shared_bytes=shared_bytes)


# ---- v6: v4's launch shapes, lean reductions -------------------------------------------------

def rows_v6(x2d, out, config: tuple[int, int] | None = None):
    _rows_group("v6", x2d, out, config)


# ---- v7: v5's cluster, lean reductions, raw 16-byte slots, clusters up to 16 (Hopper) ---------

def v7_choose(m: int, n: int, dtype, device=None) -> tuple[int, int, int] | None:
    """Blocks of 1024 x 4 slots in the smallest cluster that holds the row (fewest barriers);
    for few rows, the largest cluster of the smallest blocks that hold it (more SMs at work)."""
    fits = [tkc for tkc in configs("v7", dtype) if capacity("v7", tkc, dtype) >= n and tkc[1] == 4]
    if not fits:
        return None
    if _few(m):
        return max(fits, key=lambda tkc: (tkc[2], -tkc[0]))
    return min(fits, key=lambda tkc: (tkc[2], -tkc[0]))


def rows_v7(x2d, out, config: tuple[int, int, int] | None = None):
    _rows_cluster("v7", x2d, out, config)


# ---- v8: persistent clusters, the next row prefetched into shared memory (Hopper) ------------

def v8_choose(m: int, n: int, dtype, device=None) -> tuple[int, int] | None:
    """The smallest cluster that holds the row, of the largest blocks."""
    fits = [tc for tc in configs("v8", dtype) if capacity("v8", tc, dtype) >= n]
    return min(fits, key=lambda tc: (tc[1], -tc[0])) if fits else None


def _v8_grid_clusters(name: str, threads: int, cluster: int, device=None) -> int:
    """Clusters that run at once on `device`: the persistent kernel's grid (one wave, no tail)."""
    kernel = _kernel(source("v8"), name)
    return max(1, kernel.max_active_clusters(threads, cluster, 64 * threads, device=device))


def rows_v8(x2d, out, config: tuple[int, int] | None = None):
    m, n = x2d.shape
    config = _config("v8", x2d, config)
    if config is None or not has_clusters(x2d.device):
        return rows_v2(x2d, out)
    t, c = config
    name = kernel_name("v8", config, x2d.dtype)
    kernel = _kernel(source("v8"), name)
    smem = _dynamic_shared(kernel, 64 * t)  # the next row's slots
    kernel.allow_cluster(c)
    clusters = min(m, _v8_grid_clusters(name, t, c, x2d.device))
    kernel.launch(clusters * c, t, x2d, out, np.int64(m), np.int32(n),
                  np.int64(x2d.stride(0)), shared_bytes=smem)


# ---- v9: v7 with part of each block's chunk in shared memory (Hopper) --------------------------

def rows_v9(x2d, out, config: tuple[int, int, int, int] | None = None):
    _rows_cluster("v9", x2d, out, config)


def _smem_choose(kind: str):
    """v9 and v10 untuned: the rung's default block in the smallest cluster that holds the row;
    rows longer than that: the configuration that holds the least beyond the row."""
    def choose(m: int, n: int, dtype, device=None):
        fits = [cfg for cfg in configs(kind, dtype) if capacity(kind, cfg, dtype) >= n]
        preferred = [cfg for cfg in fits if cfg[:3] == DEFAULT_BLOCK[kind]]
        return min(preferred or fits, key=lambda cfg: (capacity(kind, cfg, dtype), cfg[3]),
                   default=None)
    return choose


# ---- v10: v9 with the cluster's partials pushed into every block (Hopper) ------------------------

# Untuned, each rung's block: v9's 128 KB (two per SM); v10's 512 x 4 slots in registers, the
# tuner's most frequent choice.
DEFAULT_BLOCK = {"v9": (512, 4, 12), "v10": (512, 4, 0)}


def rows_v10(x2d, out, config: tuple[int, int, int, int] | None = None):
    _rows_cluster("v10", x2d, out, config)


def _group_choose(m: int, n: int, dtype, device=None):
    return v4_choose(n, dtype)  # v6 runs v4's launch shapes


# Each tunable rung's own choice of configuration for an untuned (m, n, dtype, device): a scan of
# its configurations (up to ~200 us), made once per shape since `cuda`'s entries replay launches.
CHOOSE = {"v4": _group_choose, "v5": v5_choose, "v6": _group_choose, "v7": v7_choose,
          "v8": v8_choose, "v9": _smem_choose("v9"), "v10": _smem_choose("v10")}


def _dynamic_shared(kernel: Kernel, nbytes: int) -> int:
    """Let the kernel take nbytes of dynamic shared memory and return nbytes. Without the
    attribute a block gets 48 KB in all, its static shared memory included (so exactly 48 KB of
    dynamic shared memory fails to launch)."""
    kernel.set_attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES", nbytes)
    return nbytes


def _few(m: int) -> bool:
    return m <= 256


# ---- cuda: the best rung for the shape ---------------------------------------------------------

TUNED_FILE = SOURCE_DIR / "tuned_configs.json"


def _tuned_key(e: dict) -> tuple:
    return (e["dtype"], e["N"], e["rows"])


def _tuned_value(e: dict) -> tuple:
    return (e["kind"], tuple(e["config"] or ()))


def tuned(gpu_name: str) -> dict:
    """Best configuration per benchmark shape, measured by scripts/tune.py softmax cuda on the GPU
    named in the file (results/h200/tune.json); {} for other GPUs, which use the heuristics
    above."""
    return tuned_tables.load(TUNED_FILE, gpu_name, key=_tuned_key, value=_tuned_value)


def tuned_hit(x2d) -> tuple | None:
    """(rung, configuration) of the tuned table of x2d's GPU for its shape, or None."""
    m, n = x2d.shape
    return tuned(gpu(x2d.device).name).get((TAG[x2d.dtype], n, rows_class(m)))


def tuned_config(kind: str, x2d) -> tuple | None:
    hit = tuned_hit(x2d)
    return hit[1] if hit and hit[0] == kind else None


# Rows at least this long go to a cluster kernel when there are few of them (Hopper).
CLUSTER_FOR_FEW_ROWS_FROM_N = 8192


def rows_best(x2d, out):
    m, n = x2d.shape
    clusters = has_clusters(x2d.device)
    hit = tuned_hit(x2d)
    if hit and (hit[0] not in CLUSTER_KINDS or clusters):
        return KINDS[hit[0]](x2d, out)
    if n <= reach("v4", x2d.dtype) and not (clusters and _few(m) and n >= CLUSTER_FOR_FEW_ROWS_FROM_N):
        return rows_v6(x2d, out)
    if clusters and n <= reach("v10", x2d.dtype):
        return rows_v10(x2d, out)  # its default block, the smallest cluster that holds the row
    if n <= reach("v4", x2d.dtype):
        return rows_v6(x2d, out)
    return rows_v2(x2d, out)


KINDS = {"v3": rows_v3, "v4": rows_v4, "v5": rows_v5, "v6": rows_v6, "v7": rows_v7,
         "v8": rows_v8, "v9": rows_v9, "v10": rows_v10}

# Each registry name's row kernel.
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
