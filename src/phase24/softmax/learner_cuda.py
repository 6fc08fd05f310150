"""Grade a learner's own CUDA C softmax: `phase24 check softmax --file my_softmax.cu`.

The file follows the lab's kernel ABI (see softmax/cuda/export.cuh):

    #define THREADS 256          // threads per block            (default 256)
    #define ROWS_PER_BLOCK 1     // rows each block handles      (default 1)
    extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                           long long x_stride);

The grid has ceil(M / ROWS_PER_BLOCK) blocks. Kernels named softmax_f16 (__half) and
softmax_bf16 (__nv_bfloat16) are graded too when the file defines them. core/learner_cu.py
reads them from the compiled cubin and checks their parameters.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from phase24.core import learner_cu
from phase24.softmax.args import SoftmaxArgumentError, entry

# (offset, size) in bytes of const T* x, T* y, long long M, int N, long long x_stride
ABI = learner_cu.KernelAbi("softmax", ((0, 8), (8, 8), (16, 8), (24, 4), (32, 8)),
                           "(const T* x, T* y, long long M, int N, long long x_stride)", "lab 01")
# A learner's file may include the ladder's headers (vec16.cuh, reduce.cuh, ...) by name.
LAB_HEADERS = (f"-I{Path(__file__).resolve().parent / 'cuda'}",)


def launch_shape(source: str) -> tuple[int, int]:
    shape = learner_cu.defines(source, {"THREADS": 256, "ROWS_PER_BLOCK": 1})
    return shape["THREADS"], shape["ROWS_PER_BLOCK"]


def load_learner_softmax(path: str | Path):
    """Return a registry-style callable for the learner's kernels, and the dtypes it covers.

    The callable is ``softmax(x, out=None)`` (the checker hands in outputs inside guard regions)
    and its ``abi`` says what was found in the cubin."""
    path = Path(path)
    abi, kernels = learner_cu.load(path, ABI, LAB_HEADERS)
    threads, rows_per_block = launch_shape(learner_cu.source_text(path))

    def rows(x2d, out):
        if x2d.dtype not in kernels:
            raise SoftmaxArgumentError(f"{path.name} has no kernel for {x2d.dtype}")
        m, n = x2d.shape
        kernels[x2d.dtype].launch(math.ceil(m / rows_per_block), threads, x2d, out,
                                  np.int64(m), np.int32(n), np.int64(x2d.stride(0)))

    softmax = entry(path.name, rows, allow_cpu=not torch.cuda.is_available())  # emulated
    softmax.abi = abi
    return softmax, list(kernels)


COUNTED = (64, 1024)  # the shape `check --file` counts without a GPU (harness/counted.py)


def counted(path: Path) -> tuple[dict, dict, str]:
    """One emulated launch of the file's softmax_f32 on COUNTED, counted: (counts, the
    operation's minimum bytes and its FLOPs, the launch in words)."""
    abi, kernels = learner_cu.load_emulated(path, ABI, LAB_HEADERS)
    if torch.float32 not in kernels:
        raise SoftmaxArgumentError(f"{path.name} has no softmax_f32 to count")
    threads, rows_per_block = launch_shape(learner_cu.source_text(path))
    m, n = COUNTED
    x, y = torch.randn(m, n), torch.empty(m, n)
    grid = math.ceil(m / rows_per_block)
    kernel = kernels[torch.float32]
    counts = kernel.launch(grid, threads, x, y, np.int64(m), np.int32(n), np.int64(n),
                           counts=True, schedules=1)
    ideal = {"bytes": dict(zip(kernel.param_names[:2], (4 * m * n,) * 2)), "flops": 5 * m * n,
             "flops_words": "about 5 an element (max, subtract, exp, add, divide)"}
    return counts, ideal, (f"softmax_f32 on {m} x {n} float32, one launch of {grid} blocks of "
                           f"{threads} threads")
