"""A recorded launch replayed by the driver itself: ``cuLaunchKernel`` through ctypes, with the
kernel's parameters packed once, so that a call changes only the tensors' addresses.

cuda.core's ``launch`` checks and packs every argument at every call, which on a slow host costs
as much as a short kernel; a replayed launch (bridge/replay.py) has nothing left to decide. Its
parameters live in ctypes objects made once, a lock keeps two threads from filling them at once,
and the launch goes on the current torch stream of the kernel's device, with that device's
context current for the call (it is, after torch allocated the output there; else it is made so).
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

# The C type of each kind of scalar argument a launcher passes (see Kernel.launch).
CTYPES = {np.uint64: ctypes.c_uint64, np.int64: ctypes.c_int64, np.int32: ctypes.c_int32,
          np.uint32: ctypes.c_uint32, np.float32: ctypes.c_float}

_lib = None


class LaunchError(RuntimeError):
    """A kernel could not be loaded or launched; the message names the kernel and the launch."""


def _driver():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


def current_context() -> int:
    """The calling thread's current CUDA context, as an integer (0 if none)."""
    current = ctypes.c_void_p()
    _driver().cuCtxGetCurrent(ctypes.byref(current))
    return current.value or 0


def error_name(code: int) -> str:
    name = ctypes.c_char_p()
    _driver().cuGetErrorName(code, ctypes.byref(name))
    return (name.value or b"CUDA error %d" % code).decode()


class DriverLaunch:
    """One launch of a loaded kernel (``function``: its CUfunction in ``context``, as an int),
    with ``spec`` giving each parameter as (None, scalar or structure), (which tensor, byte
    offset) or (which tensor, fn(its address) -> a structure to pass: a TMA tensor map)."""

    def __init__(self, name: str, index: int, context: int, function: int, grid: int, block: int,
                 spec: tuple, shared: int, sync: bool = False):
        self.name, self.index, self.context, self.function = name, index, context, function
        self.sync = sync  # PHASE24_SYNC=1: wait for each launch, so an error names its kernel
        self.grid, self.block, self.shared = grid, block, shared
        self.values, self.pointers, self.remade = [], [], []
        for which, a in spec:
            if which is None:  # a scalar, or a structure passed by value as it is
                self.values.append(a if isinstance(a, ctypes.Structure) else CTYPES[type(a)](a))
            elif callable(a):  # a value remade from the tensor's address (a TMA tensor map)
                self.values.append((ctypes.c_uint64 * 16)())
                self.remade.append((self.values[-1], which, a))
            else:
                self.values.append(ctypes.c_uint64(0))
                self.pointers.append((self.values[-1], which, a))
        self.params = (ctypes.c_void_p * len(self.values))(
            *[ctypes.addressof(v) for v in self.values])
        self.lock = threading.Lock()
        self.spec = spec

    def fast(self) -> tuple | None:
        """This launch for bridge/fastcall.py (pointers as (which tensor, byte offset), scalars
        as (-1, their bytes as an integer)), or None when each launch must be waited for or a
        parameter is remade at each call (a TMA tensor map)."""
        if self.sync or self.remade:
            return None
        params = [(-1, int.from_bytes(bytes(CTYPES[type(a)](a)), "little")) if which is None
                  else (which, a) for which, a in self.spec]
        return (self.name, self.function, self.context, self.grid, self.block, self.shared,
                False, params, self)

    def __call__(self, addresses: list[int], stream: int) -> None:
        lib = _driver()
        current = ctypes.c_void_p()
        lib.cuCtxGetCurrent(ctypes.byref(current))
        switch = current.value != self.context
        if switch:
            lib.cuCtxSetCurrent(self.context)
        try:
            with self.lock:
                for value, which, offset in self.pointers:
                    value.value = addresses[which] + offset
                for value, which, remake in self.remade:
                    made = remake(addresses[which])
                    ctypes.memmove(value, ctypes.addressof(made), ctypes.sizeof(made))
                rc = lib.cuLaunchKernel(self.function, self.grid, 1, 1, self.block, 1, 1,
                                        self.shared, stream, self.params, None)
            if self.sync and not rc:
                rc = lib.cuStreamSynchronize(stream)
        finally:
            if switch:
                lib.cuCtxSetCurrent(current.value)
        if rc:
            raise LaunchError(f"launch of {self.name} on cuda:{self.index} failed (grid="
                              f"{self.grid}, block={self.block}, shared={self.shared} B): "
                              f"{error_name(rc)}")
