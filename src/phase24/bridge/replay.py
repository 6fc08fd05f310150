"""A shape's launches, decided once and replayed: the host's cost of a short call.

A launcher such as ``rows_best(x2d, out)`` decides everything from its tensors' shapes, strides,
dtype and device: which kernel, which configuration, the grid, the block, the shared memory.
That decision is Python and costs tens of microseconds, as much as the kernel on a few rows.
``Replays`` runs a launcher normally the first time it sees a key (the tensors' shapes, strides,
dtype, device and 16-byte alignment), records the launches it makes, and from then on only
makes those launches again with the new tensors' addresses, through the driver directly
(driver_launch.py), on the device's current torch stream.

This holds while a launcher's only effects are its launches, its arguments are the tensors it
was given (or views of them), numbers, or TMA tensor maps of those tensors (remade from the new
addresses at each replay), and its choice depends on nothing but the key: after
anything else it reads changes (PHASE24_PORTABLE, a new tuned table), call ``cache_clear()``. A
launch with any other tensor is not recorded: that key is then run in full at every call. At most
MAX_KEYS keys are kept (a model whose shapes keep changing starts again from none).
"""

from __future__ import annotations

import ctypes
import threading

from phase24.bridge.fastcall import forget_all
from phase24.bridge.launch import recording

MAX_KEYS = 4096


def _key(fn, tensors) -> tuple:
    return (fn, *[(t.shape, t.stride(), t.dtype, t.get_device(), t.data_ptr() % 16)
                  for t in tensors])


def _steps(seen: list, tensors) -> list | None:
    """Each recorded launch with its tensor arguments as (which tensor, byte offset), its tensor
    maps as (which tensor, how to remake the map at an address) and its other arguments as they
    were; None if a launch took a tensor, or a map of one, that is not one of ``tensors``."""
    bases = [(t.untyped_storage().data_ptr(), t.data_ptr()) for t in tensors]
    steps = []
    for loaded, grid, block, args, shared in seen:
        spec = []
        for a in args:
            if isinstance(a, ctypes.Structure):  # a TMA tensor map: remade from its tensor's
                which = [i for i, (_, address) in enumerate(bases)  # address at each replay
                         if getattr(a, "address", None) == address]
                if len(which) != 1:
                    return None
                spec.append((which[0], a.remake))
                continue
            if not hasattr(a, "untyped_storage"):
                spec.append((None, a))
                continue
            which = [i for i, (storage, _) in enumerate(bases)
                     if a.untyped_storage().data_ptr() == storage]
            if len(which) != 1:
                return None
            spec.append((which[0], a.data_ptr() - bases[which[0]][1]))
        steps.append(loaded.driver_launch(grid, block, tuple(spec), shared))
    return steps


def _stream(index: int) -> int:
    import torch

    return torch._C._cuda_getCurrentRawStream(index)


class Replays:
    """``replays(fn, *tensors)`` runs ``fn(*tensors)``: in full the first time for their key,
    then only its launches (see the module's docstring). ``cache_clear()`` forgets every key."""

    def __init__(self):
        self._steps: dict = {}
        self._lock = threading.Lock()

    def __call__(self, fn, *tensors) -> None:
        key = _key(fn, tensors)
        steps = self._steps.get(key)
        if steps is None:
            with recording() as seen:
                fn(*tensors)
            steps = _steps(seen, tensors)
            with self._lock:
                if len(self._steps) >= MAX_KEYS:
                    self._steps.clear()
                self._steps[key] = steps if steps is not None else False
            return
        if steps is False:  # launches this cache cannot replay: run in full
            fn(*tensors)
            return
        addresses = [t.data_ptr() for t in tensors]
        stream = _stream(tensors[0].get_device()) if steps else 0
        for step in steps:
            step(addresses, stream)

    def launches(self, fn, *tensors) -> list | None:
        """The recorded launches of ``fn`` for the tensors' key, as bridge/fastcall.py takes
        them ((launches, "", 0): no scratch), or None (not recorded, not replayable, or to be waited for one by one)."""
        steps = self._steps.get(_key(fn, tensors))
        if not steps:
            return None
        made = [step.fast() for step in steps]
        return None if None in made else (made, "", 0)

    def cache_clear(self) -> None:
        with self._lock:
            self._steps.clear()
        forget_all()
