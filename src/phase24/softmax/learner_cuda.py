"""Grade a learner's own CUDA C softmax: `phase24 check softmax --file my_softmax.cu`.

The file follows the lab's kernel ABI (see kernels/softmax_common.cuh):

    #define THREADS 256          // threads per block            (default 256)
    #define ROWS_PER_BLOCK 1     // rows each block handles      (default 1)
    extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                           long long x_stride);

The grid has ceil(M / ROWS_PER_BLOCK) blocks. Kernels named softmax_f16 (__half) and
softmax_bf16 (__nv_bfloat16) are graded too when the file defines them.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import torch

from phase24.softmax.args import SoftmaxArgumentError, check_input, run_rows

TAGS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def launch_shape(source: str) -> tuple[int, int]:
    def define(name, default):
        m = re.search(rf"^\s*#define\s+{name}\s+(\d+)", source, re.MULTILINE)
        return int(m.group(1)) if m else default

    return define("THREADS", 256), define("ROWS_PER_BLOCK", 1)


def kernels_in(source: str) -> list[str]:
    return [tag for tag in TAGS if re.search(rf"\bsoftmax_{tag}\s*\(", source)]


def load_learner_softmax(path: str | Path):
    """Return a registry-style callable for the learner's kernels, and the dtypes it covers."""
    from phase24.bridge import load_kernel

    path = Path(path)
    source = path.read_text()
    tags = kernels_in(source)
    if not tags:
        raise SoftmaxArgumentError(
            f"{path.name}: defines no kernel named softmax_f32, softmax_f16 or softmax_bf16 "
            "(see the ABI in lab 01)")
    threads, rows_per_block = launch_shape(source)
    kernels = {TAGS[t]: load_kernel(path, f"softmax_{t}") for t in tags}

    def rows(x2d, out):
        m, n = x2d.shape
        kernels[x2d.dtype].launch(math.ceil(m / rows_per_block), threads,
                                  np.uint64(x2d.data_ptr()), np.uint64(out.data_ptr()),
                                  np.int64(m), np.int32(n), np.int64(x2d.stride(0)))

    def softmax(x):
        check_input(x, path.name)
        if x.dtype not in kernels:
            raise SoftmaxArgumentError(f"{path.name} has no kernel for {x.dtype}")
        return run_rows(rows, x)

    return softmax, [TAGS[t] for t in tags]
