"""A learner's Triton file, for any operation: imported, its function found, and each call made
so that the result can only come from the file's own kernels.

An operation's ABI (``PyAbi``) names one Python function of the file, e.g.
``softmax_rows(x2d, out)`` or ``matmul_tiles(a, b, c)``, whose last parameter is the output it
must fill. ``load`` returns that function wrapped in the checks below; the operation's entry
(its args.py) wraps it like the lab's own kernels (argument checks, layouts, empty tensors).

The result must come from the file's kernels. A call must launch a Triton kernel defined in the
file: each of the file's kernels counts its launches, and a call that launched none raises
LearnerFileError. And the function runs under core.guard's ComputeGuard: torch may only
allocate, take views and fill scratch there (its launcher may copy), so a file that launches a
kernel but computes with torch (torch.matmul past some size, a copy into the output) fails
naming the operator; so does one that starts a thread, leaves one running, returns a tensor
other than its output, or changes the class of its arguments. Importing the file must leave no
thread running. Each call also runs under torch's profiler (core/witness.py: its own while
checked, the timing run's while timed), which records operators below any dispatch mode: one
that computed outside the file's launches (a file that stepped out of the guard's mode) fails
naming it. On a GPU every kernel the GPU ran during the call must be one of the file's (or a
fill of scratch), launched by the file's launchers: work that never passes torch's dispatcher,
such as a CUDA graph of torch.softmax captured at import and replayed, shows there as a kernel
that is not the file's.

Without a GPU the file's kernels run in Triton's interpreter: ``@triton.jit`` decides when the
file is imported whether its kernels are compiled or interpreted, and core/triton_mode.py
(imported here, before the file) has chosen the interpreter where no GPU is found. Interpreted
calls run one at a time (it is not thread-safe).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import inspect
import re
import sys
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

import torch

from phase24.core.guard import ComputedOutsideKernels, ComputeGuard, launching
from phase24.core.triton_mode import INTERPRETED, interpreted
from phase24.core.witness import WitnessError, active, foreign_kernels, judged, witnessed


class LearnerFileError(ValueError):
    """The learner's file cannot be used: missing, not Python, fails to import, or lacks the ABI."""


@dataclasses.dataclass(frozen=True)
class PyAbi:
    """The function a learner's Triton file defines for an operation: its name, its parameters
    (the last is the output it fills), the operation's name and the starter that shows it."""

    function: str
    params: tuple[str, ...]
    what: str
    starter: str

    def call(self) -> str:
        return f"{self.function}({', '.join(self.params)})"


def _import(path: Path, abi: PyAbi):
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    mod_name = f"phase24_learner_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise LearnerFileError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # some tools (inspect, triton) look modules up by name
    threads = threading.active_count()
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        raise LearnerFileError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    if threading.active_count() > threads:  # it would compute where no guard sees it
        raise LearnerFileError(f"{path}: importing it left a thread running: work on another "
                               f"thread escapes the checks ({abi.function} must use your kernels)")
    return module


def count_launches(module, path: Path, abi: PyAbi) -> tuple[Callable[[], int], set[str]]:
    """Make every Triton kernel defined in ``path`` (found among the module's names, through
    autotune/heuristics wrappers) count its launches; return a function that reads the count and
    the kernels' names. Each layer (autotuner, heuristics, the kernel) runs under the guard's
    launcher rules."""
    from triton.runtime.jit import KernelInterface

    launches = [0]
    seen, names = set(), set()
    for obj in vars(module).values():
        chain = [obj]
        while isinstance(obj, KernelInterface) and isinstance(getattr(obj, "fn", None),
                                                              KernelInterface):
            obj = obj.fn
            chain.append(obj)
        if not isinstance(obj, KernelInterface):
            continue
        try:
            source = Path(inspect.getsourcefile(obj.fn)).resolve()
        except (TypeError, AttributeError):
            continue
        if source != path.resolve():
            continue  # a kernel imported from elsewhere is not the learner's
        names.add(obj.fn.__name__)
        for layer in chain:
            if id(layer) in seen:
                continue
            seen.add(id(layer))

            def counted(*args, _run=layer.run, _kernel=layer is obj, **kwargs):
                if _kernel and not kwargs.get("warmup"):
                    launches[0] += 1
                with launching():  # Triton copies arguments (interpreter), autotunes, ...
                    return _run(*args, **kwargs)

            layer.run = counted
    if not seen:
        raise LearnerFileError(f"{path}: it defines no @triton.jit kernel ({abi.function} must "
                               "launch one of its own)")
    return (lambda: launches[0]), names


def _function(module, path: Path, abi: PyAbi) -> Callable:
    fn = getattr(module, abi.function, None)
    if not callable(fn):
        raise LearnerFileError(f"{path}: it must define a function {abi.call()} that launches "
                               f"your kernel(s) (see {abi.starter})")
    try:
        inspect.signature(fn).bind(*abi.params)
    except TypeError:
        raise LearnerFileError(f"{path}: {abi.function}{inspect.signature(fn)} cannot be called "
                               f"as {abi.call()}") from None
    except ValueError:  # no signature to read (a builtin): its calls will say
        pass
    return fn


def load(path: str | Path, abi: PyAbi, witness: bool = False) -> Callable[..., None]:
    """Import the learner's .py file; return its ABI function wrapped in the launch check, the
    compute guard and the checks of its arguments and result (the module's docstring);
    ``witness`` (while checking): and under torch's profiler, which must see no operator
    computing outside the file's launches and, on a GPU, no kernel that is not the file's
    (core/witness.py); while a timing run's Watch is active, under that one instead."""
    path = Path(path)
    if not path.is_file():
        raise LearnerFileError(f"{path}: no such file")
    if path.suffix != ".py":
        raise LearnerFileError(f"{path}: a Triton {abi.what} file must be a .py file")
    module = _import(path, abi)
    fn = _function(module, path, abi)
    launched, own = count_launches(module, path, abi)
    out_name = abi.params[-1]
    gpu = torch.cuda.is_available() and not INTERPRETED

    def guarded(*args):
        with ComputeGuard(abi.function), interpreted() if INTERPRETED else nullcontext():
            return fn(*args)

    def call(*args) -> None:
        before = launched()
        try:
            timing = active()
            if timing is not None:  # the run's profiler judges the call when the run ends
                result = timing.call(abi.function, path.name, own, lambda: guarded(*args))
            elif witness:
                result, ops, ran, strays = witnessed(lambda: guarded(*args), gpu)
                line = judged(abi.function, path.name, ops, foreign_kernels(ran, own), strays)
                if line:
                    raise LearnerFileError(line)
            else:
                result = guarded(*args)
        except WitnessError as err:
            raise LearnerFileError(str(err)) from None
        except ComputedOutsideKernels as err:
            if launched() == before:
                raise LearnerFileError(f"no Triton kernel of {path.name} ran, and {err}") from None
            raise
        if any(type(t) is not torch.Tensor for t in args):
            raise LearnerFileError(f"{abi.function} changed the class of its arguments: they "
                                   "must stay plain torch.Tensors")
        if result is not None and not (type(result) is torch.Tensor and result.untyped_storage()
                                       .data_ptr() == args[-1].untyped_storage().data_ptr()):
            raise LearnerFileError(f"{abi.function} returned a {type(result).__name__} that is not "
                                   f"{out_name}: it must write the result into {out_name} (what "
                                   "it returns is not used)")
        if launched() == before:
            raise LearnerFileError(f"no Triton kernel of {path.name} ran: {abi.function} must "
                                   "compute the result with a @triton.jit kernel of the file")

    return call
