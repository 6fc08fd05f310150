"""What a checked file starts ends with the check (Linux; elsewhere these do nothing).

The grader makes itself the reaper of its descendants' orphans (PR_SET_CHILD_SUBREAPER), so that a
process the file detaches into a session of its own is still the grader's to end; each worker asks
to die with the grader (PR_SET_PDEATHSIG), so that killing the grader, even with SIGKILL, ends it.
"""

from __future__ import annotations

import os
import signal


def _prctl(option: int, value: int) -> None:
    """prctl(2) where Linux has it (PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER); elsewhere nothing."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def die_with_parent() -> None:
    """End this process when its parent ends (a worker, with its grader)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the grader ended before the request took hold
        os._exit(0)


def adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux): a process the checked
    file starts and detaches (a new session) is then still this grader's to end."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def end_orphans() -> None:
    """SIGKILL every child of this process that is not one it started on purpose: the orphans
    a checked file left, which adopt_orphans() made ours (the worker itself is ended first)."""
    me = str(os.getpid())
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and _is_orphan(int(entry)):
            try:
                os.kill(int(entry), signal.SIGKILL)
                os.waitpid(int(entry), 0)
            except OSError:
                pass


def _is_orphan(pid: int) -> bool:
    """A child of ours that a worker started (it inherited the worker's PHASE24_IN_WORKER) and
    that is not a worker itself: a process the checked file left behind."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"phase24.harness.isolate" in f.read():
                return False
        with open(f"/proc/{pid}/environ", "rb") as f:
            return b"PHASE24_IN_WORKER=1" in f.read().split(b"\0")
    except OSError:
        return False
