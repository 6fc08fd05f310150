"""The bridge to the GPU: compile .cu files with nvcc, load the builds, launch on torch's stream.

Everything in the lab that runs CUDA C goes through here:
``compile_cu`` (nvcc -> cached cubin or portable PTX + ptxas resource report, works without a
GPU), ``prebuild`` (many files at once, in parallel), ``load_kernel`` / ``Kernel.launch``
(cuda.core, needs a GPU: any GPU of the machine, from Ampere on) and ``replay.Replays`` (a
launcher's launches chosen once per shape, then replayed).
"""

from phase24.bridge.nvcc import (
    ARCHS,
    PORTABLE,
    TARGETS,
    Build,
    KernelResources,
    NvccError,
    UnsupportedGpuError,
    compile_cu,
    target_for,
)
from phase24.bridge.launch import Gpu, Kernel, LaunchError, clear_caches, gpu, load_kernel
from phase24.bridge.prebuild import prebuild

__all__ = ["ARCHS", "PORTABLE", "TARGETS", "Build", "KernelResources", "NvccError",
           "UnsupportedGpuError", "compile_cu", "target_for", "Gpu", "Kernel",
           "LaunchError", "clear_caches", "gpu", "load_kernel", "prebuild"]
