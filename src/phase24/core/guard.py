"""A guard around checked code that must compute its result in its own kernels, not with torch.

``with ComputeGuard("softmax_rows"): rows(x2d, out)`` lets torch, in the calling thread, only:

* allocate: empty, empty_like, empty_strided, new_empty[_strided] (their memory is poisoned,
  every byte 0xFF: NaN in floating dtypes, so nothing the caller freed can be read back through
  them), and the constant factories zeros/ones/full(_like), new_zeros/ones/full, arange,
  scalar_tensor, lift_fresh (``torch.tensor`` of Python numbers); never their ``out=`` forms;
* take views (every operator whose schema says it returns an alias: view, reshape as a view,
  as_strided, slice, select, t, transpose, unsqueeze, expand, detach, alias, ...) and read
  metadata (sizes, strides, device; ``data_ptr`` is no operator at all);
* fill its own scratch: fill_ (with a number), zero_ and set_ on a tensor whose storage was
  allocated during the call; never on a tensor it was given (an output, an input).

Everything else (arithmetic, reductions, casts, copies, ``.item()``, torch.softmax, ...) raises
ComputedOutsideKernels naming the operator. So do, outside the launcher, ``Tensor.numpy()``,
``.tolist()``, ``__array__`` and ``__dlpack__`` (the values leaving torch to be computed
elsewhere) and starting a thread (a dispatch mode guards its own thread only). The first
violation is also raised again when the guard exits, in case the checked code caught it; and
a call that returns with more threads alive than when it began fails too (work left running).

``launching()``: the state a kernel launcher runs in (count_launches' wrapper of a kernel).
Triton's interpreter copies every argument to a host tensor and back (new_empty, set_, copy_),
its autotuner clones, restores and zeroes arguments and benchmarks: there copies (copy_,
clone, _to_copy), set_ and fills of any tensor are allowed too, and numpy/threads are not
refused; arithmetic still is (a learner's autotune hook runs there; in the interpreter so does
a kernel's body, which is Python).

Outside the launcher, the Python audit events of memory reached by its address
(``ctypes.cdata``: ``from_address``; ``ctypes.string_at``), of a library or symbol loaded
(``ctypes.dlopen``, ``ctypes.dlsym``) and of a process started (``subprocess.Popen``,
``os.system``, ``os.exec``, ``os.fork``, ``os.posix_spawn``) raise ComputedOutsideKernels too
(an audit hook, which Python cannot remove once added).

The guard is per thread (as dispatch modes are) and covers what goes through torch's
dispatcher and those events: memory reached through a data_ptr without them (``ctypes.cast``
and its pointers, ``memmove``, NumPy's ``__array_interface__``: Python audits none of them), a
foreign function loaded before the call, or code that pops the mode (core/witness.py's
profiler sees its operators) or patches this module are beyond it.
On a GPU the tensors' memory is the device's, where host code of that kind cannot compute.
"""

from __future__ import annotations

import _thread
import contextlib
import sys
import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from phase24.core.outputs import storage_bytes

aten = torch.ops.aten

_EMPTY = {aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty,
          aten.new_empty_strided}
_ALLOCATE = _EMPTY | {aten.zeros, aten.zeros_like, aten.new_zeros, aten.ones, aten.ones_like,
                      aten.new_ones, aten.full, aten.full_like, aten.new_full, aten.arange,
                      aten.scalar_tensor, aten.lift_fresh}
_METADATA = {aten.sym_size, aten.sym_stride, aten.sym_numel, aten.sym_storage_offset, aten.size,
             aten.stride, aten.numel, aten.dim, aten.storage_offset, aten.is_contiguous,
             aten.is_strides_like_format, aten.is_non_overlapping_and_dense, aten.is_same_size,
             torch.ops.prim.device, torch.ops.prim.layout}
_SCRATCH = {aten.fill_.Scalar, aten.zero_.default} | {getattr(aten.set_, o)
                                                       for o in aten.set_.overloads()}
LAUNCHER_PACKETS = {aten.copy_, aten.clone, aten._to_copy, aten.set_, aten.fill_, aten.zero_}

# what may run in a checked call by its operator's name alone (core/witness.py's rules)
ALLOWED_PACKETS = _ALLOCATE | _METADATA | {aten.fill_, aten.zero_, aten.set_}

_LEAVE_TORCH = ("numpy", "tolist", "__array__", "__dlpack__")
LAUNCH = "phase24::launch"  # the profiler's range around a kernel launcher (core/witness.py)
_local = threading.local()  # .guard: the guard active in this thread, if any


class ComputedOutsideKernels(ValueError):
    """The checked code computed with torch (or off its thread) where only its kernels may."""


def _active() -> "ComputeGuard | None":
    return getattr(_local, "guard", None)


@contextlib.contextmanager
def launching():
    """Run a kernel launcher under the active guard's launcher rules (nothing if none)."""
    guard = _active()
    if guard is None:
        yield
        return
    guard._launching += 1
    try:
        with torch.profiler.record_function(LAUNCH):  # the witness's range (core/witness.py)
            yield
    finally:
        guard._launching -= 1


def _refusing(name: str, original):
    def refuse(*args, **kwargs):
        guard = _active()
        if guard is not None and not guard._launching:
            guard._violate(f"{name} took values out of torch to compute them elsewhere")
        return original(*args, **kwargs)

    refuse.__name__ = getattr(original, "__name__", name)
    return refuse


class ComputeGuard(TorchDispatchMode):
    """See the module's docstring. ``who`` names the checked code in the messages."""

    def __init__(self, who: str):
        super().__init__()
        self.who = who
        self.violation: ComputedOutsideKernels | None = None
        self._launching = 0
        self._scratch: set[int] = set()  # the StorageImpls allocated during the call
        self._saved: list = []

    # -- entering and leaving ------------------------------------------------------------------
    def __enter__(self):
        if _active() is not None:
            raise RuntimeError("a ComputeGuard is already active in this thread")
        self._threads = threading.active_count()
        _audited()
        _local.guard = self
        self._patch()
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        try:
            super().__exit__(exc_type, exc, tb)
        finally:
            self._unpatch()
            _local.guard = None
        left = threading.active_count() - self._threads
        if left > 0 and self.violation is None:
            self.violation = ComputedOutsideKernels(
                f"{self.who} returned with {left} more thread(s) running than when it was "
                "called: work left on another thread escapes the checks (finish it before "
                "returning)")
        if self.violation is not None and exc is not self.violation:
            raise self.violation
        return False

    def _patch(self):
        cls = torch.Tensor
        for name in _LEAVE_TORCH:
            own = name in cls.__dict__
            original = getattr(cls, name)
            self._saved.append((cls, name, own, cls.__dict__.get(name)))
            setattr(cls, name, _refusing(f"Tensor.{name}()", original))
        start = threading.Thread.start
        self._saved.append((threading.Thread, "start", True, start))
        threading.Thread.start = _refusing_thread(start)
        self._saved.append((_thread, "start_new_thread", True, _thread.start_new_thread))
        _thread.start_new_thread = _refusing_thread(_thread.start_new_thread)

    def _unpatch(self):
        for owner, name, own, value in reversed(self._saved):
            if own:
                setattr(owner, name, value)
            else:
                delattr(owner, name)
        self._saved.clear()

    # -- the rules -----------------------------------------------------------------------------
    def _violate(self, why: str):
        err = ComputedOutsideKernels(why)
        if self.violation is None:
            self.violation = err
        raise err

    def _is_scratch(self, t) -> bool:
        return isinstance(t, torch.Tensor) and t.untyped_storage()._cdata in self._scratch

    def refusal(self, func, args) -> str:
        """Why ``func`` may not run now ('' when it may)."""
        packet = func.overloadpacket
        if func.namespace == "profiler":  # the witness's ranges (record_function)
            return ""
        if packet in _ALLOCATE and not func._schema.is_mutable:
            return ""
        if func.is_view or packet in _METADATA:
            return ""
        if self._launching and packet in LAUNCHER_PACKETS:
            return ""
        if func in _SCRATCH:
            if args and self._is_scratch(args[0]):
                return ""
            return (f"{func} wrote a tensor that {self.who} did not allocate: only its own "
                    "scratch may be filled; the result must come from your kernels")
        where = " (in a kernel launcher)" if self._launching else ""
        return (f"{func} computed outside your kernels{where}: in {self.who}, torch may only "
                "allocate tensors, take views and fill its own scratch; the result must come "
                "from your kernels")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        why = self.refusal(func, args)
        if why:
            self._violate(why)
        result = func(*args, **(kwargs or {}))
        if func.overloadpacket in _ALLOCATE and isinstance(result, torch.Tensor):
            self._scratch.add(result.untyped_storage()._cdata)
            if func.overloadpacket in _EMPTY and result.numel():
                storage_bytes(result).fill_(255)  # the mode is off in here: no recursion
        return result


def _refusing_thread(start):
    def refuse(*args, **kwargs):
        guard = _active()
        if guard is not None and not guard._launching:
            guard._violate(f"{guard.who} started a thread: work on another thread escapes the "
                           "checks; compute in your kernels, in the calling thread")
        return start(*args, **kwargs)

    return refuse


# audit events that leave torch outside a launcher: memory by address, libraries, processes
_AUDITED = {"ctypes.cdata": "reached memory by its address (ctypes)",
            "ctypes.cdata/buffer": "reached memory through a buffer (ctypes)",
            "ctypes.string_at": "reached memory by its address (ctypes)",
            "ctypes.dlopen": "loaded a library", "ctypes.dlsym": "looked up a foreign function",
            "ctypes.dlsym/handle": "looked up a foreign function",
            "subprocess.Popen": "started a process", "os.system": "started a process",
            "os.exec": "started a process", "os.fork": "forked", "os.forkpty": "forked",
            "os.posix_spawn": "started a process"}
_hook: list = []  # the audit hook, once added (Python cannot remove it)


def _audited() -> None:
    """Add the audit hook once per process; it acts only while a guard is active."""
    if _hook:
        return

    def hook(event, args):
        what = _AUDITED.get(event)
        guard = _active() if what else None
        if guard is not None and not guard._launching:
            guard._violate(f"{guard.who} {what} ({event}): the values must not leave torch to "
                           "be computed elsewhere; compute in your kernels")

    _hook.append(hook)
    sys.addaudithook(hook)
