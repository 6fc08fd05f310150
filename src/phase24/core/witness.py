"""torch's profiler as a witness of a checked call: the operators it ran and the GPU's kernels.

core/guard.py's ComputeGuard is a Python dispatch mode, and Python code can step out of it
(``torch.utils._python_dispatch._disable_current_modes()`` pops it for a block). The profiler
records operators where torch's dispatcher enters them, below any mode, so what the guard did
not see it still sees. ``witnessed(run, cuda)`` runs ``run()`` under the profiler and returns
its result, the operators that computed outside a kernel launch (``foreign_ops``) and, with
``cuda``, the kernels the GPU ran (``foreign_kernels`` says which of those are not the file's).

A kernel launcher (the wrapper of each of the file's kernels, under ``guard.launching()``)
runs inside a ``phase24::launch`` range: Triton's interpreter copies arguments there, its
autotuner clones and zeroes them. Inside it only the launcher's operators may run besides the
rules' (copies, clones, fills: the guard's LAUNCHER_PACKETS), so a range of that name that the
file opens itself hides no computing. On a GPU a kernel must also be launched from a launcher's
range or an allowed operator (a fill): a kernel that bears the name of one of the file's but is
launched from anywhere else is a stray (``stray_launches``).

While a file is timed (``bench --file``) the profiler does not start and stop at each call: one
``Watch`` runs over the whole timing run, around the baseline's calls and the copy too, and each
of the file's calls runs in a ``phase24::call`` range (``Watch.call``), judged by the same rules
once the run ends. So a timed call is watched as a checked one is: a file cannot tell them apart
by asking whether the profiler runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

import torch

from phase24.core.guard import ALLOWED_PACKETS, LAUNCH, LAUNCHER_PACKETS


class WitnessError(RuntimeError):
    """The profiler could not watch the call (another one runs, or it was stopped)."""


def _allowed(name: str, launching: bool = False) -> bool:
    """Whether the operator ``ns::op`` that the profiler names may run in a checked call: an
    allocation, a view, a metadata read, a fill of scratch (the guard's rules), or one that only
    decomposes into other operators, which the profiler records too; with ``launching`` (inside
    a launcher's range), a copy or a clone too. A name that is no operator is not an
    operator's work."""
    ns, sep, op = name.partition("::")
    if not sep or ns == "profiler":
        return True
    try:
        packet = getattr(getattr(torch.ops, ns), op.partition(".")[0])
    except (AttributeError, RuntimeError):
        return True
    if packet in ALLOWED_PACKETS or (launching and packet in LAUNCHER_PACKETS):
        return True
    return any(_view_or_composite(packet, o) for o in packet.overloads())


def _view_or_composite(packet, name: str) -> bool:
    try:  # an overload torch lists may not be registered (aten::copy_.Tensor)
        o = getattr(packet, name)
        return o.is_view or o.has_kernel_for_dispatch_key(
            torch._C.DispatchKey.CompositeImplicitAutograd)
    except (AttributeError, RuntimeError):
        return False


def _ranges(event) -> list:
    """The events that ``event`` (the profiler's) ran inside, nearest first."""
    found, parent = [], event.cpu_parent
    while parent is not None:
        found.append(parent)
        parent = parent.cpu_parent
    return found


def _is_op(event) -> bool:
    """Whether the profiler's ``event`` is an operator torch's dispatcher entered (not a
    range that Python code labelled, whatever its name)."""
    return "::" in event.name and not getattr(event, "is_user_annotation", False)


def foreign_ops(events) -> list[str]:
    """The operators of ``events`` (the profiler's CPU events) that the rules above do not
    allow where they ran (inside a launcher's range or not), each name once."""
    found = []
    for e in events:
        if e.name == LAUNCH or not _is_op(e):
            continue
        if not _allowed(e.name, any(r.name == LAUNCH for r in _ranges(e))):
            found.append(e.name)
    return list(dict.fromkeys(found))


# The host calls that launch kernels (runtime and driver APIs), as the profiler names them:
# cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch, ...
LAUNCH_CALLS = re.compile(r"^cu(da)?\w*Launch")


def stray_launches(events) -> list[str]:
    """The kernels of ``events`` (the profiler's CPU events, a launch call's kernels attached
    to it) launched neither from a launcher's range nor from inside an operator (torch's fill
    of scratch; an operator that is not allowed is named by foreign_ops), each name once."""
    found = []
    for e in events:
        if LAUNCH_CALLS.match(e.name) and not any(r.name == LAUNCH or _is_op(r)
                                                  for r in _ranges(e)):
            found.extend([k.name for k in e.kernels] or [e.name])
    return list(dict.fromkeys(found))


# Kernels torch may run inside a learner's call: fills of scratch it allocates (torch.zeros).
ALLOWED_KERNELS = re.compile(r"FillFunctor|^Memset")


def foreign_kernels(ran: list[str], own: set[str]) -> list[str]:
    """The kernels of ``ran`` (names the profiler gives) that are neither the file's (``own``:
    its @triton.jit functions' names, which Triton gives its kernels) nor an allowed fill."""
    return [k for k in dict.fromkeys(ran)
            if not ALLOWED_KERNELS.search(k) and k not in own
            and not any(k.startswith(o + "_") for o in own)]


@contextlib.contextmanager
def _quiet_stderr():
    """The profiler's own start and stop lines (Kineto's) kept off the learner's output."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _start(cuda: bool):
    """A started profiler (CPU activity, and the GPU's with ``cuda``); WitnessError if it
    cannot start."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    prof = profile(activities=activities, acc_events=True)
    try:
        with _quiet_stderr():
            prof.__enter__()
    except RuntimeError as err:
        raise WitnessError(f"the profiler that watches each checked call could not start ({err}); "
                           "a file must not run torch's profiler itself") from None
    return prof


def _stop(prof, strict: bool) -> None:
    """Stop the profiler; with ``strict``, a failure to is a WitnessError (without, the call's
    own error goes on)."""
    try:
        with _quiet_stderr():
            prof.__exit__(None, None, None)
    except RuntimeError as err:
        if strict:
            raise WitnessError(f"the profiler that watches each checked call was stopped during it "
                        f"({err}): a file must not stop torch's profiler") from None


def _on(events, device: str) -> list:
    """The profiler's events on the host ("CPU") or the GPU ("CUDA")."""
    from torch.autograd import DeviceType

    return [e for e in events if e.device_type == getattr(DeviceType, device)]


def judged(who: str, file: str, ops: list[str], foreign: list[str], strays: list[str]) -> str:
    """The line that says what the call of ``who`` (the file's function) did first that only
    its kernels may do ('' if nothing): an operator, a kernel not the file's, a stray launch."""
    if ops:
        return (f"{who} ran {ops[0]} outside your kernels, where the guard could not see it "
                "(torch's profiler did): the result must come from your own kernels")
    if foreign:
        return (f"{who} ran the kernel {foreign[0]}, which is not one of {file}'s: the result "
                "must come from your own kernels")
    if strays:
        return (f"{who} launched the kernel {strays[0]} from outside the launches of {file}'s "
                "own kernels (a kernel of the same name defined elsewhere is not yours): the "
                "result must come from them")
    return ""


def witnessed(run, cuda: bool):
    """``(run(), foreign operators, names of the GPU's kernels, stray launches)`` (with no
    ``cuda``, the last two empty); WitnessError if the profiler cannot watch the whole call."""
    prof = _start(cuda)
    try:
        result = run()
        if cuda:
            torch.cuda.synchronize()
    except BaseException:
        _stop(prof, False)
        raise
    _stop(prof, True)
    events = prof.events()
    host, kernels = _on(events, "CPU"), [e.name for e in _on(events, "CUDA")] if cuda else []
    return result, foreign_ops(host), kernels, stray_launches(host) if cuda else []


CALL = "phase24::call"  # the range around each timed call of a file (Watch.call)
_watches: list = []  # the Watch running in this process, if any


class Watch:
    """One profiler over a timing run: ``with Watch(cuda) as w: ...``; inside, each timed call
    of a file goes through ``Watch.call`` (``active()`` finds the watch); after the block,
    ``w.verdict`` is judged()'s line for the first call that did what only its kernels may do."""

    def __init__(self, cuda: bool):
        self.cuda, self.verdict, self._files = cuda, "", {}

    def __enter__(self):
        self._prof = _start(self.cuda)
        _watches.append(self)
        return self

    def __exit__(self, *exc):
        _watches.remove(self)
        if self.cuda and exc[0] is None:
            torch.cuda.synchronize()
        _stop(self._prof, exc[0] is None)
        if exc[0] is None:
            self.verdict = self._judge(_on(self._prof.events(), "CPU"))
        return False

    def call(self, who: str, file: str, own: set[str], run):
        """``run()``, a call of ``who`` (the function of ``file``, whose kernels are ``own``)."""
        self._files[who, file] = own
        with torch.profiler.record_function(f"{CALL}:{who}:{file}"):
            return run()

    def _judge(self, host) -> str:
        calls: dict = {}
        for e in host:
            top = next((r for r in _ranges(e) if r.name.startswith(CALL + ":")), None)
            if top is not None:
                calls.setdefault(top.name, []).append(e)
        for name, events in calls.items():
            who, file = name[len(CALL) + 1:].split(":", 1)
            ran = [k.name for e in events if LAUNCH_CALLS.match(e.name) for k in e.kernels]
            line = judged(who, file, foreign_ops(events), foreign_kernels(
                ran, self._files.get((who, file), set())), stray_launches(events))
            if line:
                return line
        return ""


def active() -> "Watch | None":
    """The Watch running in this process (a timing run), if any."""
    return _watches[-1] if _watches else None
