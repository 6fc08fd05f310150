"""A call decided once per shape, made again from C++ (fastcall.cpp): the short call's host cost.

An implementation ``f(x, out=None)`` whose output has ``x``'s shape and dtype decides in Python,
on a key's first call, what to launch (``replay.Replays`` for CUDA C, ``Decided`` for Triton).
``FastCalls`` keeps those launches as the driver's parameters in C++, where ``call(x, out)``
checks the arguments, makes the output and launches, with no Python in between: a call costs
the host about what a torch operation costs. ``call`` returns None for anything it does not
handle itself (an unknown key, a tensor that is not plain, contiguous, on the current device),
and the caller takes that call in full, in Python.

The extension is compiled by ``python -m phase24 build`` (``build()``: torch's C++ extension
builder, about 20 s, kept in the lab's cache folder per torch and Python version) and only
loaded at run time: a call never compiles. Where it is not built (no CUDA build of torch, no
compiler), or PHASE24_FASTCALL=0, every call goes through Python as before; ``status()`` says
which.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path

SOURCE = Path(__file__).with_name("fastcall.cpp")
NAME = "phase24_fastcall"
MAX_KEYS = 4096  # plans kept per implementation; all are dropped beyond
# A plan's scratch: none; int64 words made for each call; exchange words kept per stream.
SCRATCH = {"": 0, "fresh": 1, "exchange": 2}

_native = None
_why_not = ""
_lock = threading.Lock()
_every: list = []  # every FastCalls made, so that forget_all() reaches them


def _folder() -> Path:
    import torch

    from phase24.bridge.cache import cache_dir

    tag = hashlib.sha256(SOURCE.read_bytes() + f"{torch.__version__} {torch.version.cuda} "
                         f"{sys.version}".encode()).hexdigest()[:16]
    return cache_dir().parent / "fastcall" / tag


def _library(folder: Path) -> Path:
    return folder / f"{NAME}.so"


def build(verbose: bool = False) -> str:
    """Compile the extension if it is not built yet; return "" or why it cannot be built."""
    import torch

    if torch.version.cuda is None:
        return "this torch has no CUDA"
    folder = _folder()
    if _library(folder).exists():
        return ""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        from torch.utils.cpp_extension import load

        load(NAME, [str(SOURCE)], build_directory=str(folder), with_cuda=True,
             extra_cflags=["-O2"], verbose=verbose)
    except Exception as err:  # reported as one line by the build command; calls stay in Python
        return f"{type(err).__name__}: {str(err).strip().splitlines()[-1] if str(err) else ''}"
    if not _library(folder).exists():
        return f"no {_library(folder).name} after the build"
    _retry_after_build()
    return ""


def _retry_after_build() -> None:
    """A process that asked before the build (the main job's doctor step, then its build step)
    remembered "not built": forget that, so its next call loads the extension."""
    global _why_not
    with _lock:
        if _native is None and _why_not.startswith("not built"):
            _why_not = ""


def native():
    """The loaded extension, or None (``status()`` says why); loads, never compiles."""
    global _native, _why_not
    if _native is None and not _why_not:
        with _lock:
            if _native is None and not _why_not:
                _native, _why_not = _load()
    return _native


def _load():
    import torch

    if os.environ.get("PHASE24_FASTCALL", "1") == "0":
        return None, "switched off (PHASE24_FASTCALL=0)"
    if torch.version.cuda is None or not torch.cuda.is_available():
        return None, "no CUDA GPU"
    path = _library(_folder())
    if not path.exists():
        return None, "not built (python -m phase24 build)"
    try:
        spec = importlib.util.spec_from_file_location(NAME, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as err:
        return None, f"cannot be loaded ({type(err).__name__}: {err})"
    return module, ""


def status() -> str:
    """How a decided call is made here, in words."""
    return "from C++ (bridge/fastcall.cpp)" if native() else f"in Python: the C++ path is {_why_not}"


def _none(x, out=None):
    return None


class FastCalls:
    """One implementation's decided calls. ``call(x, out)``: the output, or None (take the call
    in Python). ``learn(x2d, out2d, launches)`` after a call in Python: ``launches(x2d, out2d)``
    gives that key's plan, or None where it cannot be made from C++: (made, scratch, words),
    ``made`` a list of launches (name, function, context, grid, block, shared bytes,
    cooperative, [(which, bits)], owner), ``scratch`` one of SCRATCH, ``words`` its int64 words.
    ``owner`` keeps the loaded kernel alive while its plan is kept."""

    def __init__(self, max_row: int):
        self.max_row = max_row
        self._plans = None
        self._owners: dict = {}
        self.call = _none
        _every.append(self)

    def learn(self, x2d, out2d, launches) -> None:
        if (not (x2d.is_cuda and x2d.is_contiguous() and out2d.is_contiguous())
                or x2d.dim() != 2 or x2d.numel() == 0 or native() is None):
            return
        key = native().key_of(x2d, out2d)
        if key is None or key in self._owners:
            return
        plan = launches(x2d, out2d)
        if not plan or not plan[0]:
            return
        made, scratch, words = plan
        with _lock:
            if self._plans is None:
                self._plans = native().Plans(self.max_row, MAX_KEYS)
                self.call = self._plans.call
            if len(self._owners) >= MAX_KEYS:
                self._owners.clear()
            self._owners[key] = [m[-1] for m in made]
            self._plans.add(x2d, out2d, [m[:-1] for m in made], SCRATCH[scratch], words)

    def forget(self) -> None:
        with _lock:
            if self._plans is not None:
                self._plans.clear()
            self._owners.clear()


def forget_all() -> None:
    """Drop every plan of every implementation (after what a launcher reads changed)."""
    for calls in _every:
        calls.forget()

