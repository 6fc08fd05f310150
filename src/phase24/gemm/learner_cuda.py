"""Grade a learner's own CUDA C GEMM: `phase24 check gemm --file my_gemm.cu`.

The file follows the ladder's kernel ABI (gemm/cuda/export.cuh; labs/starters/my_gemm.cu says
it for the learner):

    #define TILE_M 16     // rows of C one block computes      (default 16)
    #define TILE_N 16     // columns of C one block computes   (default 16)
    #define THREADS 256   // threads per block                 (default 256)
    extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c,
                                        int M, int N, int K);

a is M x K, b is K x N and c is M x N, row-major and contiguous. The grid is one-dimensional,
one block per TILE_M x TILE_N tile of C in row-major order of tiles (block_tile.cuh, which the
file may include); past 2^31 - 1 blocks it is launched in bands of rows (a, c and M those of the
band), as the ladder's rungs are. gemm_f16 (__half) and gemm_bf16 (__nv_bfloat16) are graded
too when the file defines them. core/learner_cu.py reads them from the compiled cubin and
checks their parameters.
"""

from __future__ import annotations

from pathlib import Path

import torch

from phase24.gemm.args import GemmArgumentError, entry
from phase24.core import learner_cu

STARTER = "labs/starters/my_gemm.cu"
# (offset, size) in bytes of const T* a, const T* b, T* c, int M, int N, int K
ABI = learner_cu.KernelAbi("gemm", ((0, 8), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4)),
                           "(const T* a, const T* b, T* c, int M, int N, int K)", STARTER)
DEFAULTS = {"TILE_M": 16, "TILE_N": 16, "THREADS": 256}
# A learner's file may include the ladder's headers (block_tile.cuh, elements.cuh, ...) by name.
LAB_HEADERS = (f"-I{Path(__file__).resolve().parent / 'cuda'}",)


def launch_shape(source: str, name: str) -> tuple[tuple[int, int], int]:
    """((TILE_M, TILE_N), THREADS) of the file's #defines; GemmArgumentError if one is 0."""
    shape = learner_cu.defines(source, DEFAULTS)
    zero = [key for key, value in shape.items() if value == 0]
    if zero:
        raise GemmArgumentError(f"{name}: #define {zero[0]} 0: a block needs threads and a tile "
                                "of C of at least one row and one column")
    return (shape["TILE_M"], shape["TILE_N"]), shape["THREADS"]


def load_learner_gemm(path: str | Path):
    """A registry-style ``matmul(a, b, out=None)`` for the learner's kernels (its ``abi`` says
    what the cubin has), and the dtypes it covers."""
    from phase24.gemm.cuda.launchers import launch_tiles

    path = Path(path)
    tile, threads = launch_shape(learner_cu.source_text(path), path.name)
    abi, kernels = learner_cu.load(path, ABI, LAB_HEADERS)

    def tiles(a, b, c):
        if a.dtype not in kernels:
            raise GemmArgumentError(f"{path.name} has no kernel for {a.dtype}")
        launch_tiles(kernels[a.dtype], tile, threads, a, b, c, path.name)

    matmul = entry(path.name, tiles, allow_cpu=not torch.cuda.is_available())  # emulated
    matmul.abi = abi
    return matmul, list(kernels)


COUNTED = (64, 64, 64)  # the M, N, K `check --file` counts without a GPU (harness/counted.py)


def counted(path: Path) -> tuple[dict, dict, str]:
    """One emulated launch of the file's gemm_f32 on COUNTED, counted: (counts, the operation's
    minimum bytes and its FLOPs, the launch in words)."""
    import numpy as np

    (rows, cols), threads = launch_shape(learner_cu.source_text(path), path.name)
    abi, kernels = learner_cu.load_emulated(path, ABI, LAB_HEADERS)
    if torch.float32 not in kernels:
        raise GemmArgumentError(f"{path.name} has no gemm_f32 to count")
    m, n, k = COUNTED
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    grid = -(-m // rows) * -(-n // cols)
    kernel = kernels[torch.float32]
    counts = kernel.launch(grid, threads, a, b, c, np.int32(m), np.int32(n), np.int32(k),
                           counts=True, schedules=1)
    ideal = {"bytes": dict(zip(kernel.param_names[:3], (4 * m * k, 4 * k * n, 4 * m * n))),
             "flops": 2 * m * n * k,
             "flops_words": "2·M·N·K"}
    return counts, ideal, (f"gemm_f32 on {m} x {n} x {k} float32, one launch of {grid} blocks of "
                           f"{threads} threads ({rows} x {cols} tiles of C)")
