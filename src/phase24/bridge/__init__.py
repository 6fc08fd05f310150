"""The bridge to the GPU: compile .cu files with nvcc, load the cubins, launch on torch's stream.

Everything in the lab that runs CUDA C goes through here:
``compile_cu`` (nvcc -> cached cubin + ptxas resource report, works without a GPU) and
``load_kernel`` / ``Kernel.launch`` (cuda.core, needs a GPU).
"""

from phase24.bridge.nvcc import (
    ARCHS,
    Build,
    KernelResources,
    NvccError,
    arch_of_current_gpu,
    compile_cu,
    kernel_source,
)
from phase24.bridge.launch import Kernel, LaunchError, load_kernel

__all__ = ["ARCHS", "Build", "KernelResources", "NvccError", "arch_of_current_gpu", "compile_cu",
           "kernel_source", "Kernel", "LaunchError", "load_kernel"]
