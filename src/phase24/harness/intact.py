"""Whether a learner's file changed the grader's code in the worker it runs in.

The file's code runs in the process that computes its verdicts and times it, so it could replace
the checker's functions (check_case, the operation's compare), the timer's, or torch's. Before the
file is loaded, ``snapshot()`` records the identity of every function and class (and of its code)
that the lab's modules, the operation's package, torch and its Tensor hold; ``changed()`` names
the first one that is no longer the same. The worker asks after loading the file and after each
case and timing, and stops with a failing verdict if one changed.

What this sees: names rebound in those namespaces and functions whose code was swapped, and
hooks installed (signal handlers, sys's and threading's profile and trace hooks). What it does
not: a change made through ctypes, objects reached by other routes (gc), or a patch of this
module's own record; those need verdicts made in a process the file cannot reach.
"""

from __future__ import annotations

import builtins
import importlib
import pkgutil
import sys


def load_package(module_name: str) -> None:
    """Import every module of the package that ``module_name`` belongs to (the operation's), so
    that the ones its loader imports are recorded before the learner's file runs."""
    package = sys.modules[module_name.rpartition(".")[0]]
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception:  # a module this machine cannot import is not used here either
            pass


def _owners(extra: tuple) -> list:
    import torch

    lab = [m for name, m in list(sys.modules.items())
           if m is not None and (name == "phase24" or name.startswith("phase24."))]
    # an operation (an Op) is recorded through its class and the classes it derives from
    classes = [c for e in extra for c in type(e).__mro__ if c is not object]
    return [*lab, torch, torch.Tensor, torch.nn.functional, builtins, *extra, *classes]


def _space(owner) -> str:
    if isinstance(owner, type) and owner.__module__.startswith("phase24"):
        return f"{owner.__module__}.{owner.__qualname__}"
    return getattr(owner, "__name__", repr(owner))


def hooks() -> dict:
    """The routes by which code runs outside a call, after it returns or between its lines: the
    handler of every signal, sys's and threading's profile and trace hooks."""
    import signal
    import threading

    seen = {("signal", signal.Signals(s).name): id(signal.getsignal(s))
            for s in signal.valid_signals()
            if s in signal.Signals._value2member_map_ and s not in (signal.SIGKILL, signal.SIGSTOP)}
    seen[("sys", "setprofile")], seen[("sys", "settrace")] = (id(sys.getprofile()),
                                                                 id(sys.gettrace()))
    for name in ("getprofile", "gettrace"):
        if hasattr(threading, name):
            seen[("threading", "set" + name[3:])] = id(getattr(threading, name)())
    return seen


HOOKS = {"signal", "sys", "threading"}


def snapshot(*extra) -> dict:
    """(namespace, name) -> identity of each function or class there, and of its code, and of
    each hook (hooks()); ``extra`` adds objects whose attributes, and whose class's, are
    recorded too (the Op)."""
    seen = hooks()
    for owner in _owners(extra):
        space = _space(owner)
        for name, value in list(vars(owner).items()):
            if callable(value):
                seen[(space, name)] = (id(value), id(getattr(value, "__code__", None)))
    return seen


def changed(before: dict, *extra) -> str | None:
    """The first function or class of ``before`` that is not the same now (None when none)."""
    now = snapshot(*extra)
    for key, identity in before.items():
        if now.get(key, identity) != identity:
            return ".".join(key)
    return None


def refusal(name: str) -> str:
    if name.partition(".")[0] in HOOKS:
        return (f"the file installed {name} (a signal handler, a profile or trace hook): code "
                "that runs around the kernel's calls is refused; the result must come from "
                "your kernels")
    return (f"the file changed the grader's code ({name}): its verdicts and times cannot be "
            "trusted; a file must not patch the checker, the timer or torch")
