"""The CUDA C GEMM ladder's launchers: one per rung (KINDS), and gemm_best (`cuda`).

Each launcher is a tile kernel of gemm/args.py, ``fn(a, b, c)``: a (M, K) and b (K, N) row-major
and contiguous, c the contiguous (M, N) output, one dtype. It picks the rung's kernel instance
(dtype and compile-time configuration, from the rung's .cu) and launches one block per tile
of C on a one-dimensional grid; what it must know of the rung is the rung's record (rung.py,
beside its .cu). A rung with several configurations takes a caller's, else the tuned table's for
this GPU and shape (tuned_configs.json, written by the tuner, one table per GPU), else its own
choice (``choose``). The Hopper-only rungs (v9 to v11) refuse, in one line, a GPU whose build is
not sm_90a's. The TMA rungs' kernels (v10, v11) take tensor maps of a and b (bridge/tensormap.py)
in place of their addresses; a persistent rung's grid (v11) has one block per SM (at most one per
tile), each block walking its tiles.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from phase24.bridge.launch import Kernel, gpu, load_kernel
from phase24.bridge.tensormap import tiled_128b
from phase24.core import tuned as tuned_tables
from phase24.core.dtypes import TAG
from phase24.gemm.args import GemmArgumentError
from phase24.gemm.cuda.configs import RECORDS, compiled_for, configs

SOURCE_DIR = Path(__file__).parent
MAX_GRID = 2**31 - 1  # blocks in a grid's x dimension
MAX_SIZE = 2**31 - 1  # M, N and K are C ints in the kernels' ABI (offsets are 64-bit)


@lru_cache(maxsize=None)
def _kernel(source: str, name: str) -> Kernel:
    return load_kernel(SOURCE_DIR / source, name)


def run(kind: str, config: tuple, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    """Launch configuration `config` of rung `kind`: one tile of C per block, or (persistent)
    one block per SM."""
    rung = RECORDS[kind]
    if not rung.compiled_for(a.dtype):
        raise GemmArgumentError(f"cuda-{kind}: the Tensor Cores' rungs take float16 and bfloat16 "
                                f"(got {a.dtype}; float32 runs on the SIMT rungs)")
    if not runs_here(kind, a.device):
        raise GemmArgumentError(f"cuda-{kind} runs on Hopper only (wgmma, built for sm_90a; not "
                                f"with PHASE24_PORTABLE=1): on {gpu(a.device).name} use cuda-v8")
    if rung.aligned_rows and not _rows_of_16_bytes(a, b, c):
        return _padded(kind, config, a, b, c)
    shared = rung.shared_bytes(config)
    if shared > 48 * 1024 and shared > gpu(a.device).smem_per_block:
        here = gpu(a.device)
        raise GemmArgumentError(f"cuda-{kind}{config}: {shared} bytes of shared memory a block; "
                                f"{here.name} gives at most {here.smem_per_block}")
    kernel = _kernel(rung.file, rung.kernel_name(config, a.dtype))
    if shared > 48 * 1024:  # beyond 48 KB a kernel must ask for it
        kernel.set_attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES", shared)
    rows, _ = rung.tile(config)
    # TMA: a's map in boxes of a tile's rows x 64 values of K, b's in boxes of 64 x 64
    operands = (lambda x, y: (tiled_128b(x, 64, rows), tiled_128b(y, 64, 64))) \
        if rung.tma else None
    launch_tiles(kernel, rung.tile(config), rung.block_threads(config), a, b, c, rung.name,
                 shared, operands, sm_count(a.device) if rung.persistent else None)


def runs_here(kind: str, device=None) -> bool:
    """Whether rung ``kind`` runs on ``device``: every rung does but the Hopper-only ones, which
    run where the device's build is sm_90a's (Gpu.clusters: a Hopper GPU, and not with
    PHASE24_PORTABLE=1)."""
    return not RECORDS[kind].hopper or gpu(device).clusters


def _rows_of_16_bytes(*ts: torch.Tensor) -> bool:
    """Every row of every matrix starts on a 16-byte boundary (cp.async copies 16 bytes)."""
    return all(t.data_ptr() % 16 == 0 and (t.shape[1] * t.element_size()) % 16 == 0 for t in ts)


def _padded(kind: str, config: tuple, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    """``run`` on copies of a, b and c whose rows are padded with zeros to a multiple of 16 bytes
    (K and N rounded up to multiples of 8): the zeros add nothing to any sum."""
    (m, k), n = a.shape, b.shape[1]
    kp, np_ = -(-k // 8) * 8, -(-n // 8) * 8
    ap = torch.zeros((m, kp), dtype=a.dtype, device=a.device)
    bp = torch.zeros((kp, np_), dtype=b.dtype, device=b.device)
    cp = torch.empty((m, np_), dtype=c.dtype, device=c.device)
    ap[:, :k].copy_(a)
    bp[:k, :n].copy_(b)
    run(kind, config, ap, bp, cp)
    c.copy_(cp[:, :n])


def launch_tiles(kernel, tile_mn: tuple[int, int], block: int, a: torch.Tensor, b: torch.Tensor,
                 c: torch.Tensor, name: str, shared: int = 0, operands=None,
                 most: int | None = None) -> None:
    """Launch a kernel of the GEMM ABI (export.cuh; a learner's kernel follows it too) with
    ``block`` threads a block, one block per ``tile_mn`` (rows, columns) tile of C on a 1-D grid.
    A grid of more than MAX_GRID blocks is split into launches over bands of rows of C.
    ``operands(a_band, b)``, if given, makes what the kernel takes in place of the two (v10:
    their TMA tensor maps). ``most``, if given, caps the grid: a persistent kernel's blocks (v11)
    walk the tiles themselves."""
    (m, k), n = a.shape, b.shape[1]
    if max(m, n, k) > MAX_SIZE:
        raise GemmArgumentError(f"{name}: M, N and K must each be below 2^31 "
                                f"(got {m} x {n} x {k})")
    rows, cols = tile_mn
    tiles_n = -(-n // cols)
    band = (MAX_GRID // tiles_n) * rows  # rows of C whose tiles fit one grid
    for start in range(0, m, band):
        stop = min(m, start + band)
        ab = (a[start:stop], b) if operands is None else operands(a[start:stop], b)
        grid = -(-(stop - start) // rows) * tiles_n
        kernel.launch(min(grid, most or grid), block, *ab, c[start:stop],
                      np.int32(stop - start), np.int32(n), np.int32(k), shared_bytes=shared)


def sm_count(device=None) -> int:
    """Multiprocessors of `device` (torch's current device if None)."""
    return gpu(device).sm_count


def choose(kind: str, m: int, n: int, device=None) -> tuple:
    """An untuned rung's configuration: the largest tile (a .cu lists them largest first)
    that still gives every multiprocessor a block; the smallest tile when none does."""
    options, rung = configs(kind), RECORDS[kind]
    sms = sm_count(device)
    return next((c for c in options if rung.blocks(c, m, n) >= sms), options[-1])


def _config(kind: str, a: torch.Tensor, b: torch.Tensor, config: tuple | None) -> tuple:
    """The configuration a rung runs: `config` if the caller forces one (it must be compiled),
    else the tuned table's for this GPU and shape, else ``choose``'s."""
    if config is not None:
        if tuple(config) not in configs(kind):
            raise ValueError(f"cuda-{kind}: configuration {tuple(config)} is not compiled; "
                             f"choose one of {configs(kind)}")
        return tuple(config)
    if len(configs(kind)) == 1:  # v0, v1: nothing to choose
        return configs(kind)[0]
    own = tuned_entry(a, b)[2].get(kind)
    return own if own in configs(kind) else choose(kind, a.shape[0], b.shape[1], a.device)


# ---- one launcher per rung ---------------------------------------------------------------------

def launcher(kind: str):
    """Rung ``kind``'s tile kernel ``fn(a, b, c, config=None)``: the forced, tuned or chosen
    configuration (``_config``), launched by ``run``."""
    def fn(a, b, c, config: tuple | None = None):
        run(kind, _config(kind, a, b, config), a, b, c)

    fn.__name__ = f"gemm_{kind}"
    return fn


KINDS = {kind: launcher(kind) for kind in RECORDS}


# ---- cuda: the best rung for the shape ---------------------------------------------------------

TUNED_FILE = SOURCE_DIR / "tuned_configs.json"


def _tuned_key(e: dict) -> tuple:
    return (e["dtype"], e["M"], e["N"], e["K"])


def _tuned_value(e: dict) -> tuple:
    rungs = {kind: tuple(config) for kind, config in e.get("rungs", {}).items()}
    return (e["kind"], tuple(e["config"] or ()), rungs)


def tuned(gpu_name: str) -> dict:
    """Best (rung, configuration, {rung: its own best configuration}) per benchmark shape,
    measured by the offline tuner on the GPU named in the file; {} for other GPUs (and while the
    table is empty), which use the heuristic of ``gemm_best``."""
    return tuned_tables.load(TUNED_FILE, gpu_name, key=_tuned_key, value=_tuned_value)


def tuned_entry(a, b) -> tuple:
    """The tuned table's entry of a's GPU for this shape and dtype, or (None, None, {})."""
    table = tuned(gpu(a.device).name)
    return table.get((TAG[a.dtype], a.shape[0], b.shape[1], a.shape[1]), (None, None, {}))


def tuned_hit(a, b) -> tuple | None:
    """(rung, configuration) of the tuned table of a's GPU for this shape and dtype, or None
    (also where the table's rung does not run here: v9 to v11 under PHASE24_PORTABLE=1)."""
    kind, config, _ = tuned_entry(a, b)
    return (kind, config) if kind in KINDS and config in configs(kind) and \
        compiled_for(kind, a.dtype) and runs_here(kind, a.device) else None


def gemm_best(a, b, c):
    """The tuned table's rung and configuration for the shape (v9 to v11, wgmma, where one
    measured fastest on a Hopper GPU), else v8 (Tensor Cores, every GPU) for float16 and
    bfloat16 and v7 (warp tiles, prefetched loads, grouped order) for float32, with their own
    choice of tile (``choose``): v8's Tensor Cores outrun v7's FFMAs on every 16-bit shape
    (results/h200/gemm/ has the runs)."""
    hit = tuned_hit(a, b)
    if hit:
        return run(*hit, a, b, c)
    return KINDS["v7" if a.dtype == torch.float32 else "v8"](a, b, c)


# Each registry name's tile kernel: every rung's, by its record's name, and the best's.
RUNGS = {**{r.name: KINDS[kind] for kind, r in RECORDS.items()}, "cuda": gemm_best}
