"""The tests' layers, by marker: ``gpu`` (a CUDA GPU: skipped, visibly, without one), ``nvcc``
(the CUDA compiler: skipped, visibly, without one), ``interpreter`` (Triton kernels in Triton's
interpreter, on a CPU) and ``slow``. Each machine runs its own set in one command:

    pytest                 # a CPU machine: everything that needs no GPU
    pytest -m nvcc         # what needs the compiler (builds, ptxas reports, the .cu grader)
    pytest -m gpu          # the H200 (scripts/gpu-session.sh runs it with its logs)

A test module is marked by the layer it exercises (LAYERS below); a test inside may add more.
"""

import shutil

import pytest
import torch

LAYERS = {  # module -> markers every test of it gets
    "test_bridge": ("nvcc",), "test_bridge_cache": ("nvcc",), "test_cuda_rungs": ("nvcc",),
    "test_triton_ladder": ("interpreter",),
}


def pytest_collection_modifyitems(config, items):
    gpu = torch.cuda.is_available()
    nvcc = shutil.which("nvcc") is not None
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU (runs in scripts/gpu-session.sh)")
    no_nvcc = pytest.mark.skip(reason="needs nvcc, the CUDA compiler (not on the PATH here)")
    for item in items:
        for marker in LAYERS.get(item.module.__name__.rsplit(".", 1)[-1], ()):
            item.add_marker(marker)
        if "gpu" in item.keywords and not gpu:
            item.add_marker(no_gpu)
        elif "nvcc" in item.keywords and not nvcc:
            item.add_marker(no_nvcc)
