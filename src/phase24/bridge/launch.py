"""Load cubins and launch their kernels through NVIDIA's cuda.core, on torch's current stream."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from phase24.bridge.nvcc import PORTABLE, Build, compile_cu, target_for


class LaunchError(RuntimeError):
    """A kernel could not be loaded or launched; the message names the kernel and the launch."""


class _TorchStream:
    """Hands torch's current stream to cuda.core through the ``__cuda_stream__`` protocol."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


@lru_cache(maxsize=1)
def _device():
    import torch
    from cuda.core import Device

    if not torch.cuda.is_available():
        raise LaunchError("no CUDA GPU is available to launch kernels on")
    torch.cuda.init()  # torch's primary context first, so cuda.core shares it
    dev = Device(torch.cuda.current_device())
    dev.set_current()
    return dev


_streams: dict = {}


def _stream():
    """torch's current stream, wrapped once per handle as a cuda.core Stream."""
    import torch

    handle = torch.cuda.current_stream().cuda_stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = _device().create_stream(_TorchStream(handle))
    return stream


def sync_after_launch() -> bool:
    """PHASE24_SYNC=1 synchronises after every launch so an error names the kernel that failed."""
    return os.environ.get("PHASE24_SYNC", "0") == "1"


class Kernel:
    """One kernel of a loaded cubin; ``launch`` takes the grid, block and the kernel's arguments.

    Arguments must be numpy scalars of the C parameter type (np.uint64 for pointers, np.int64
    for ``long long``, np.int32 for ``int``, np.float32 for ``float``): cuda.core copies their
    bytes into the kernel's parameter buffer.
    """

    def __init__(self, build: Build, name: str, handle):
        self.build, self.name, self._kernel = build, name, handle
        self._configs: dict = {}
        self._attributes: dict = {}

    @property
    def resources(self):
        return self.build.kernels.get(self.name)

    def launch(self, grid, block, *args, shared_bytes: int = 0) -> None:
        """Launch on torch's current stream. Thread-block clusters are declared in the kernel
        (``__cluster_dims__``), so ``grid`` always counts blocks."""
        from cuda.core import LaunchConfig, launch

        key = (grid, block, shared_bytes)
        config = self._configs.get(key)
        if config is None:
            config = LaunchConfig(grid=grid, block=block, shmem_size=shared_bytes)
            self._configs[key] = config
        try:
            launch(_stream(), config, self._kernel, *args)
            if sync_after_launch():
                import torch

                torch.cuda.current_stream().synchronize()
        except Exception as err:  # cuda.core raises CUDAError with the driver's message
            raise LaunchError(
                f"launch of {self.name} failed (grid={grid}, block={block}, "
                f"shared={shared_bytes} B, {len(args)} args): {err}") from err


    def set_attribute(self, name: str, value: int) -> None:
        """Set a CUfunction attribute once, e.g. ``NON_PORTABLE_CLUSTER_SIZE_ALLOWED`` (clusters
        of more than 8 blocks) or ``MAX_DYNAMIC_SHARED_SIZE_BYTES`` (more than 48 KB)."""
        if self._attributes.get(name) == value:
            return
        from cuda.bindings import driver

        attr = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        handle = self._kernel.handle
        if isinstance(handle, driver.CUfunction):
            (err,) = driver.cuFuncSetAttribute(handle, attr, value)
        else:
            (err,) = driver.cuKernelSetAttribute(attr, value, driver.CUkernel(int(handle)),
                                                 driver.CUdevice(_device().device_id))
        if err != driver.CUresult.CUDA_SUCCESS:
            raise LaunchError(f"could not set {name}={value} on {self.name}: {err}")
        self._attributes[name] = value

    def allow_cluster(self, cluster: int) -> None:
        """Let this kernel run in clusters of `cluster` blocks: beyond 8 (a "non-portable" size,
        Hopper takes up to 16) the kernel must allow it first."""
        if cluster > 8:
            self.set_attribute("NON_PORTABLE_CLUSTER_SIZE_ALLOWED", 1)

    def max_active_clusters(self, block: int, cluster: int, shared_bytes: int = 0) -> int:
        """How many clusters of this kernel the GPU runs at once (the driver's occupancy query);
        with ``cluster == 1``, how many blocks."""
        from cuda.core import LaunchConfig

        occ = self._kernel.occupancy
        per_sm = occ.max_active_blocks_per_multiprocessor(block, shared_bytes)
        blocks = per_sm * _device().properties.multiprocessor_count
        if cluster == 1:
            return blocks
        config = LaunchConfig(grid=1, cluster=cluster, block=block, shmem_size=shared_bytes)
        try:
            return occ.max_active_clusters(config, stream=_stream())
        except Exception:  # an older cuda.core: SMs are grouped by 16-18, so lose ~1 in 8
            return max(1, blocks * 7 // (8 * cluster))


@lru_cache(maxsize=None)
def _module(image: Path, portable: bool):
    from cuda.core import ObjectCode

    _device()
    if portable:  # the driver reads PTX as a NUL-terminated string
        return ObjectCode.from_ptx(image.read_bytes() + b"\0")
    return ObjectCode.from_cubin(image.read_bytes())


def _current_target() -> str:
    import torch

    return target_for(torch.cuda.get_device_capability(), torch.cuda.get_device_name())


def load_kernel(source: str | Path, name: str, arch: str | None = None) -> Kernel:
    """Compile (or take from the cache) ``source`` and return its kernel ``name``."""
    build = compile_cu(source, arch or _current_target())
    try:
        handle = _module(build.image, build.arch == PORTABLE).get_kernel(name)
    except Exception as err:
        raise LaunchError(f"could not load kernel {name} from {build.source.name} "
                          f"({build.arch}): {err}") from err
    return Kernel(build, name, handle)


def ptr(t) -> np.uint64:
    """A tensor's device address as a kernel argument."""
    return np.uint64(t.data_ptr())
