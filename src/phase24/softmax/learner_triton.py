"""Grade a learner's own Triton softmax file (``python -m phase24 check softmax --file f.py``).

The file's ABI (see labs/starters/my_softmax.py): it defines ``@triton.jit`` kernel(s) and a
Python function ``softmax_rows(x2d, out)`` that fills the contiguous (M, N) tensor ``out`` with
the softmax of each row of ``x2d``, an (M, N) view whose last dim has stride 1 and whose row
stride ``x2d.stride(0)`` may be anything >= N. The checker wraps it like the built-in kernels:
argument checks, any leading shape, empty tensors and non-contiguous inputs are handled for it.

The result must come from the file's kernels. A call must launch a Triton kernel defined in the
file: each of the file's kernels counts its launches, and a call of ``softmax_rows`` that launched
none raises LearnerFileError. And ``softmax_rows`` runs under core.guard's ComputeGuard: torch may
only allocate, take views and fill scratch there (its launcher may copy), so a file that launches
a kernel but computes with torch (torch.softmax on long rows, a copy into ``out``) fails naming
the operator; so does one that starts a thread, leaves one running, returns a tensor other than
``out``, or changes the class of its arguments. Importing the file must leave no thread running.

Without a GPU the file's kernels run in Triton's interpreter: ``@triton.jit`` decides when the
file is imported whether its kernels are compiled or interpreted, and the lab's Triton package
(imported first) has chosen the interpreter where no GPU is found.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

import torch

from phase24.core.guard import ComputedOutsideKernels, ComputeGuard, launching
from phase24.softmax.args import entry
from phase24.softmax.triton import INTERPRETED
from phase24.softmax.triton.common import interpreted


class LearnerFileError(ValueError):
    """The learner's file cannot be used: missing, not Python, fails to import, or lacks the ABI."""


def _import(path: Path):
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
                               "thread escapes the checks (softmax_rows must use your kernels)")
    return module


def count_launches(module, path: Path) -> Callable[[], int]:
    """Make every Triton kernel defined in ``path`` (found among the module's names, through
    autotune/heuristics wrappers) count its launches; return a function that reads the count.
    Each layer (autotuner, heuristics, the kernel) runs under the guard's launcher rules."""
    from triton.runtime.jit import KernelInterface

    launches = [0]
    seen = set()
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
        raise LearnerFileError(f"{path}: it defines no @triton.jit kernel (softmax_rows must "
                               "launch one of its own)")
    return lambda: launches[0]


def load_learner_softmax(path: str | Path) -> Callable[[torch.Tensor], torch.Tensor]:
    """Import the learner's .py file and return a registry-style ``softmax(x, out=None)`` that
    runs the file's ``softmax_rows`` with the launch check."""
    path = Path(path)
    if not path.is_file():
        raise LearnerFileError(f"{path}: no such file")
    if path.suffix != ".py":
        raise LearnerFileError(f"{path}: a Triton softmax file must be a .py file")
    module = _import(path)
    rows = getattr(module, "softmax_rows", None)
    if not callable(rows):
        raise LearnerFileError(
            f"{path}: it must define a function softmax_rows(x2d, out) that launches your "
            "kernel(s) (see labs/starters/my_softmax.py)")
    try:
        inspect.signature(rows).bind(None, None)
    except TypeError:
        raise LearnerFileError(f"{path}: softmax_rows{inspect.signature(rows)} cannot be called "
                               "as softmax_rows(x2d, out)") from None
    except ValueError:  # no signature to read (a builtin): its calls will say
        pass
    launched = count_launches(module, path)
    name = f"triton:{path.name}"

    def row_kernel(x2d, out):
        before = launched()
        try:
            with ComputeGuard("softmax_rows"), interpreted() if INTERPRETED else nullcontext():
                result = rows(x2d, out)
        except ComputedOutsideKernels as err:
            if launched() == before:
                raise LearnerFileError(f"no Triton kernel of {path.name} ran, and {err}") from None
            raise
        if type(x2d) is not torch.Tensor or type(out) is not torch.Tensor:
            raise LearnerFileError("softmax_rows changed the class of its arguments: they must "
                                   "stay plain torch.Tensors")
        if result is not None and not (type(result) is torch.Tensor and result.untyped_storage()
                                       .data_ptr() == out.untyped_storage().data_ptr()):
            raise LearnerFileError(f"softmax_rows returned a {type(result).__name__} that is not "
                                   "out: it must write the result into out (what it returns is "
                                   "not used)")
        if launched() == before:
            raise LearnerFileError(f"no Triton kernel of {path.name} ran: softmax_rows must "
                                   "compute the result with a @triton.jit kernel of the file")

    learner_softmax = entry(name, row_kernel, allow_cpu=INTERPRETED)
    return learner_softmax
