"""Load built kernels and launch them on any GPU of the machine, on torch's current stream there.

A ``Kernel`` is one kernel of a .cu file, for every GPU. Each device that runs it gets its own
copy (``Kernel.on``): the build for that device (``Gpu.target``: its cubin, or the portable PTX
that the driver compiles for a GPU newer than the built ones), its own function handle, the
attributes set on the kernel, its launch configurations and its occupancy answers. A launch
runs on the device of its tensor arguments (torch's current device if it has none), with that
device's context current for the call, on that device's current torch stream.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
from pathlib import Path

import numpy as np

from phase24.bridge.driver_launch import DriverLaunch, LaunchError
from phase24.bridge.fastcall import forget_all
from phase24.bridge.nvcc import PORTABLE, Build, UnsupportedGpuError, compile_cu, target_for


@dataclasses.dataclass(frozen=True)
class Gpu:
    """One GPU of the machine, as the launcher uses it."""

    index: int
    name: str
    capability: tuple[int, int]
    sm_count: int
    smem_per_block: int = 48 * 1024  # the most shared memory a block may opt in to

    @property
    def target(self) -> str:
        """The build this GPU runs; UnsupportedGpuError on a GPU older than Ampere."""
        return target_for(self.capability, f"{self.name} (cuda:{self.index})")

    @property
    def clusters(self) -> bool:
        """Whether the thread-block-cluster kernels run here: they are built for sm_90a only."""
        try:
            return self.target == "sm_90a"
        except UnsupportedGpuError:
            return False


_gpus: dict[int, Gpu] = {}
_contexts: dict[int, object] = {}
_modules: dict[tuple[int, Path], object] = {}
_streams: dict[tuple[int, int], object] = {}
_lock = threading.Lock()
_recording = threading.local()  # the launches this thread records (bridge/replay.py)


def device_index(device=None) -> int:
    """The index of a CUDA device given as None (torch's current device), an int, a string or a
    torch.device ('cuda' alone meaning the current device)."""
    import torch

    if not torch.cuda.is_available():
        raise LaunchError("no CUDA GPU is available to launch kernels on")
    if device is None or isinstance(device, int):
        index = device
    else:
        device = torch.device(device)
        if device.type != "cuda":
            raise LaunchError(f"{device} is not a CUDA device: the lab's kernels run on CUDA GPUs")
        index = device.index
    if index is None:
        return torch.cuda.current_device()
    if not 0 <= index < torch.cuda.device_count():
        raise LaunchError(f"there is no cuda:{index}: this machine has "
                          f"{torch.cuda.device_count()} CUDA GPU(s)")
    return index


def gpu(device=None) -> Gpu:
    """What the launcher knows of a device (see device_index for the ways to name one)."""
    if getattr(device, "type", None) == "cuda" and device.index is not None:
        device = device.index  # the launchers' case (a tensor's device), without a lookup
    info = _gpus.get(device) if isinstance(device, int) else None
    if info is None:
        import torch

        index = device_index(device)
        p = torch.cuda.get_device_properties(index)
        info = _gpus[index] = Gpu(index, p.name, (p.major, p.minor), p.multi_processor_count,
                                  getattr(p, "shared_memory_per_block_optin", 48 * 1024))
    return info


def _check(result, what: str):
    """The values of a cuda.bindings call, or LaunchError saying `what` failed and why."""
    from cuda.bindings import driver

    err, *values = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"{what}: {err}")
    return values[0] if len(values) == 1 else values


def _primary_context(index: int):
    ctx = _contexts.get(index)
    if ctx is None:
        import torch
        from cuda.bindings import driver

        torch.cuda.init()  # torch first: it and the kernels share each device's primary context
        _check(driver.cuInit(0), "cuInit failed")
        ctx = _contexts[index] = _check(driver.cuDevicePrimaryCtxRetain(driver.CUdevice(index)),
                                        f"cannot use the CUDA context of cuda:{index}")
    return ctx


class on_device:
    """``with on_device(index):`` makes cuda:index's primary context (torch's) current in this
    thread for the block, then the previous one (or none) again. A class, not a generator: it
    runs at every launch."""

    __slots__ = ("ctx", "previous")

    def __init__(self, index: int):
        self.ctx = _primary_context(index)

    def __enter__(self):
        from cuda.bindings import driver

        previous = _check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent failed")
        self.previous = None if int(previous) == int(self.ctx) else previous
        if self.previous is not None:
            _check(driver.cuCtxSetCurrent(self.ctx), "cannot make a GPU's context current")

    def __exit__(self, *exc):
        if self.previous is not None:
            from cuda.bindings import driver

            driver.cuCtxSetCurrent(self.previous)


class _TorchStream:
    """Hands a torch stream to cuda.core through the ``__cuda_stream__`` protocol."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _stream(index: int):
    """cuda:index's current torch stream, wrapped once per (device, handle) as a cuda.core
    Stream (the default stream's handle, 0, is the same number on every device). Call it with
    the device's context current."""
    import torch

    handle = torch._C._cuda_getCurrentRawStream(index)  # torch.cuda.current_stream's handle
    stream = _streams.get((index, handle))
    if stream is None:
        from cuda.core import Device

        device = Device(index)
        device.set_current()  # the context is current already: this readies cuda.core's Device
        stream = _streams[(index, handle)] = device.create_stream(_TorchStream(handle))
    return stream


def _module(index: int, build: Build):
    """The loaded image of `build` for cuda:index (a function handle belongs to one device)."""
    key = (index, build.image)
    with _lock:
        module = _modules.get(key)
        if module is None:
            from cuda.core import ObjectCode

            data = build.image.read_bytes()
            if build.arch == PORTABLE:  # the driver reads PTX as a NUL-terminated string
                module = ObjectCode.from_ptx(data + b"\0", name=build.image.name)
            else:
                module = ObjectCode.from_cubin(data, name=build.image.name)
            _modules[key] = module
    return module


def sync_after_launch() -> bool:
    """PHASE24_SYNC=1 synchronises after every launch so an error names the kernel that failed."""
    return os.environ.get("PHASE24_SYNC", "0") == "1"


def _tensors_to_pointers(args) -> tuple[int | None, list]:
    """The device of the tensor arguments (None if there are none) and the arguments with each
    tensor replaced by its device address."""
    import torch

    index, out = None, []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            if a.device.type != "cuda":
                raise LaunchError(f"argument {i} is a tensor on {a.device}: kernels take CUDA "
                                  "tensors")
            if index is None:
                index = a.device.index
            elif a.device.index != index:
                raise LaunchError(f"argument {i} is on {a.device}, an earlier one on "
                                  f"cuda:{index}: a launch takes tensors of one GPU")
            a = np.uint64(a.data_ptr())
        out.append(a)
    return index, out


class Kernel:
    """One kernel of a .cu file, launchable on every GPU of the machine.

    ``launch`` takes the grid, the block and the kernel's arguments: CUDA tensors (passed as
    their device address; the launch runs on their device) and NumPy scalars of the C parameter
    type (np.uint64 for other pointers, np.int64 for ``long long``, np.int32 for ``int``,
    np.float32 for ``float``), whose bytes cuda.core copies into the parameter buffer, or a
    ctypes.Structure passed by value (tensormap.py's TensorMap), launched by the driver."""

    def __init__(self, source: str | Path, name: str, arch: str | None = None,
                 flags: tuple[str, ...] = ()):
        self.source, self.name, self.arch, self.flags = Path(source), name, arch, tuple(flags)
        self._on: dict[int, _OnDevice] = {}
        self._attributes: dict[str, int] = {}
        self._lock = threading.Lock()

    def on(self, device=None) -> _OnDevice:
        """This kernel on one device, built and loaded there the first time."""
        index = device if isinstance(device, int) else device_index(device)
        loaded = self._on.get(index)
        if loaded is None:
            with self._lock:
                loaded = self._on.get(index) or self._load(index)
        return loaded

    def _load(self, index: int) -> _OnDevice:
        build = compile_cu(self.source, self.arch or gpu(index).target, self.flags)
        with on_device(index):
            try:
                handle = _module(index, build).get_kernel(self.name)
            except Exception as err:
                raise LaunchError(f"could not load kernel {self.name} from {build.source.name} "
                                  f"({build.arch}) on cuda:{index}: {err}") from err
            loaded = _OnDevice(self, index, build, handle)
            for name, value in self._attributes.items():
                loaded.set_attribute(name, value)
        self._on[index] = loaded
        return loaded

    def launch(self, grid, block, *args, shared_bytes: int = 0) -> None:
        """Launch on the tensors' device (else torch's current one), on its current stream.
        Thread-block clusters are declared in the kernel (``__cluster_dims__``), so ``grid``
        always counts blocks."""
        index, pointers = _tensors_to_pointers(args)
        loaded = self.on(index)
        seen = getattr(_recording, "launches", None)
        if seen is not None:
            seen.append((loaded, grid, block, args, shared_bytes))
        if not any(isinstance(a, ctypes.Structure) for a in args):
            return loaded.launch(grid, block, pointers, shared_bytes)
        import torch  # a TMA tensor map, which cuda.core does not pack: through the driver

        loaded.driver_launch(grid, block, tuple((None, a) for a in pointers), shared_bytes)(
            [], torch._C._cuda_getCurrentRawStream(loaded.index))

    def set_attribute(self, name: str, value: int) -> None:
        """Set a CUfunction attribute on every device, now and on any that loads the kernel
        later: e.g. ``NON_PORTABLE_CLUSTER_SIZE_ALLOWED`` (clusters of more than 8 blocks) or
        ``MAX_DYNAMIC_SHARED_SIZE_BYTES`` (more than 48 KB)."""
        if self._attributes.get(name) == value:
            return
        with self._lock:
            for loaded in self._on.values():
                with on_device(loaded.index):
                    loaded.set_attribute(name, value)
            self._attributes[name] = value

    def allow_cluster(self, cluster: int) -> None:
        """Let this kernel run in clusters of `cluster` blocks: beyond 8 (a "non-portable" size,
        Hopper takes up to 16) the kernel must allow it first."""
        if cluster > 8:
            self.set_attribute("NON_PORTABLE_CLUSTER_SIZE_ALLOWED", 1)

    def max_active_clusters(self, block: int, cluster: int, shared_bytes: int = 0,
                            device=None) -> int:
        """How many clusters of this kernel a device runs at once (the driver's occupancy
        query, asked once per device and shape); with ``cluster == 1``, how many blocks."""
        return self.on(device).max_active_clusters(block, cluster, shared_bytes)


class _OnDevice:
    """A Kernel on one device: its build, function handle and per-device answers."""

    def __init__(self, kernel: Kernel, index: int, build: Build, handle):
        self.kernel, self.index, self.build, self.handle = kernel, index, build, handle
        self._configs: dict = {}
        self._occupancy: dict = {}

    def launch(self, grid, block, args, shared_bytes: int) -> None:
        from cuda.core import LaunchConfig, launch

        key = (grid, block, shared_bytes)
        config = self._configs.get(key)
        if config is None:
            config = self._configs[key] = LaunchConfig(grid=grid, block=block,
                                                       shmem_size=shared_bytes)
        with on_device(self.index):
            try:
                stream = _stream(self.index)
                launch(stream, config, self.handle, *args)
                if sync_after_launch():
                    stream.sync()
            except Exception as err:  # cuda.core raises CUDAError with the driver's message
                raise LaunchError(
                    f"launch of {self.kernel.name} on cuda:{self.index} failed (grid={grid}, "
                    f"block={block}, shared={shared_bytes} B, {len(args)} args): {err}") from err

    def driver_launch(self, grid, block, spec: tuple, shared_bytes: int):
        """This kernel's launch of ``grid`` x ``block`` with parameters ``spec`` (see
        driver_launch.DriverLaunch), to be replayed by the driver directly."""
        from cuda.bindings import driver

        with on_device(self.index):
            handle = self.handle.handle
            if not isinstance(handle, driver.CUfunction):  # a library's CUkernel: its function
                handle = _check(driver.cuKernelGetFunction(driver.CUkernel(int(handle))),
                                f"cannot get {self.kernel.name}'s function on cuda:{self.index}")
                for name, value in self.kernel._attributes.items():  # set on that function too
                    attr = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
                    _check(driver.cuFuncSetAttribute(handle, attr, value),
                           f"could not set {name}={value} on {self.kernel.name}")
        return DriverLaunch(self.kernel.name, self.index, int(_primary_context(self.index)),
                            int(handle), grid, block, spec, shared_bytes, sync_after_launch())

    def set_attribute(self, name: str, value: int) -> None:
        """Set the attribute on this device's function (call with its context current)."""
        from cuda.bindings import driver

        attr = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        handle = self.handle.handle
        if isinstance(handle, driver.CUfunction):
            result = driver.cuFuncSetAttribute(handle, attr, value)
        else:  # a CUkernel of a library: its attributes are set per device
            result = driver.cuKernelSetAttribute(attr, value, driver.CUkernel(int(handle)),
                                                 driver.CUdevice(self.index))
        _check(result, f"could not set {name}={value} on {self.kernel.name} on cuda:{self.index}")

    def max_active_clusters(self, block: int, cluster: int, shared_bytes: int) -> int:
        key = (block, cluster, shared_bytes)
        if key not in self._occupancy:
            with on_device(self.index):
                self._occupancy[key] = self._ask_occupancy(block, cluster, shared_bytes)
        return self._occupancy[key]

    def _ask_occupancy(self, block: int, cluster: int, shared_bytes: int) -> int:
        from cuda.core import LaunchConfig

        occ = self.handle.occupancy
        blocks = occ.max_active_blocks_per_multiprocessor(block, shared_bytes) * \
            gpu(self.index).sm_count
        if cluster == 1:
            return blocks
        config = LaunchConfig(grid=1, cluster=cluster, block=block, shmem_size=shared_bytes)
        try:
            return occ.max_active_clusters(config, stream=_stream(self.index))
        except Exception:  # an older cuda.core: SMs are grouped by 16-18, so lose ~1 in 8
            return max(1, blocks * 7 // (8 * cluster))


class recording:
    """``with recording() as seen:`` appends every Kernel.launch this thread makes in the block to
    ``seen`` as (kernel on its device, grid, block, arguments as given, shared bytes); each
    launch still runs."""

    def __enter__(self) -> list:
        self.saved = getattr(_recording, "launches", None)
        _recording.launches = self.seen = []
        return self.seen

    def __exit__(self, *exc):
        _recording.launches = self.saved


def load_kernel(source: str | Path, name: str, arch: str | None = None,
                flags: tuple[str, ...] = ()) -> Kernel:
    """Kernel ``name`` of ``source``, built for each device's target (or for ``arch`` on every
    device) with nvcc's extra ``flags`` (e.g. an -I folder), and loaded on a device when first
    used there."""
    return Kernel(source, name, arch, flags)


def clear_caches() -> None:
    """Forget every device, context, module and stream the launcher has seen (Kernel objects
    keep their own per-device copies: make new ones)."""
    with _lock:
        for cache in (_gpus, _contexts, _modules, _streams):
            cache.clear()
    forget_all()
