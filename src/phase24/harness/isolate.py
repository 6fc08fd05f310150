"""The checks in a worker process, so that a fault, a corrupted heap or a hang ends one case.

The parent (``run``) starts ``python -m phase24.harness.isolate SPEC START``; the worker loads
what it is to check (registry implementations, or a learner's file, whose code runs with the
user's rights), says which cases it will run, then checks them one by one from START, writing
one JSON line per verdict on its own copy of stdout (the file's prints go to stderr). The parent
reads each line as it comes. When a case takes longer than ``timeout`` seconds, the parent kills
the worker; when the worker dies (a signal, a CUDA fault that leaves its context unusable), the
case it was on gets that as its verdict. Either way a fresh worker resumes at the next case.
After two time-outs of one implementation its other cases are not run.

A worker whose CUDA context is lost says so on the protocol ({"lost": k}) before it exits: an
exit status alone cannot say it, since the checked code can exit with any status. Loading
(importing the learner's file, compiling it) has its own limit, ``load_timeout``. A SIGTERM,
SIGHUP or SIGINT to the grader ends its worker (a process group of its own) before the grader
exits, so a hung worker is never left behind; a SIGKILL ends it too, and what the checked file
detached is ended with its worker (harness/reaper.py). The spec comes on stdin, not argv. For a
learner's file the worker only computes and the grader decides (harness/decide.py, a "serve" spec).

``bench OP --file F`` times the file in the same kind of worker (a spec with "shapes"):
harness/timefile.py is both its sides.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from contextlib import nullcontext

from phase24.harness.reaper import adopt_orphans, end_orphans
from phase24.harness.serve import cuda_lost

TIMEOUTS_PER_IMPL = 2


class LoadError(RuntimeError):
    """The worker could not load what it was to check (the message says why)."""


# ---- the worker ---------------------------------------------------------------------------------

def _subjects(op, spec: dict) -> tuple[dict, list[str], list]:
    """{name: callable}, the dtypes to check, notes: (text, whether it is a failure)."""
    dtypes = spec["dtypes"]
    if "file" not in spec:
        every = op.implementations()
        return {n: every[n] for n in spec["impls"]}, dtypes, []
    from pathlib import Path

    from phase24.core.dtypes import NAME

    path = Path(spec["file"])
    fn, notes, covered = op.learner(path, timing="shapes" in spec)
    if covered is not None:
        dtypes = [d for d in dtypes if d in {NAME[c] for c in covered}]
    return {path.name: fn}, dtypes, notes


def _watch(op, spec: dict):
    """A function that says how a learner's file changed the grader's code ('' when it did not,
    or when no file is checked); the record is made now, before the file is loaded."""
    if "file" not in spec:
        return lambda: ""
    import importlib

    from phase24.harness import intact
    from phase24.harness.ops import OPERATIONS

    # recorded too (the file may patch them); torch._dynamo rebinds torch.manual_seed when imported
    for name in ("phase24.harness.bench", "phase24.harness.check", "torch._dynamo"):
        importlib.import_module(name)
    intact.load_package(OPERATIONS[op.name])
    before = intact.snapshot(op)

    def tampered() -> str:
        name = intact.changed(before, op)
        return intact.refusal(name) if name else ""

    return tampered


def worker(spec: dict, start: int) -> int:
    import resource
    import warnings

    from phase24.harness.reaper import die_with_parent

    die_with_parent()  # the grader killed (even by SIGKILL): so is this worker
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash is a verdict, not a core file

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what the checked code prints goes to stderr, not into the protocol

    def send(**msg):
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    # NumPy warns where the interpreter computes -inf - -inf and the like (NaN rows, on purpose)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from phase24.harness.check import jobs, run_job
    from phase24.harness.ops import get

    op = get(spec["op"])
    tampered = _watch(op, spec)
    try:
        subjects, dtypes, notes = _subjects(op, spec)
    except (Exception, KeyboardInterrupt) as err:  # the file's error, a compiler's: one line
        ours = isinstance(err, ValueError) or type(err).__module__.startswith("phase24")
        send(fatal=str(err) if ours else f"{type(err).__name__}: {err}")
        return 0
    if tampered():
        send(fatal=tampered())
        return 0
    if "shapes" in spec:  # `bench OP --file F`: time it, as the benchmark times the lab's own
        return time_file(op, subjects, dtypes, spec, send, tampered)
    if spec.get("serve"):  # `check OP --file F`: compute what the grader asks, nothing more
        from phase24.harness.serve import serve

        return serve(next(iter(subjects.values())), dtypes, notes, spec["device"], send, tampered)
    todo = jobs(op, list(subjects), dtypes, spec["device"], spec["seed"], spec.get("big", False),
                spec.get("case"))
    send(ready=[[j.impl, j.dtype, j.case.name] for j in todo], notes=notes)
    for k in range(start, len(todo)):
        v = run_job(op, todo[k], subjects[todo[k].impl], spec["device"], "file" in spec)
        if tampered():  # this case's verdict came from changed code: none is sent
            send(fatal=tampered())
            return 0
        send(i=k, verdict=dataclasses.asdict(v))
        if spec["device"] == "cuda" and not v.ok and cuda_lost():
            send(lost=k)
            os._exit(0)  # no teardown: it would wait on, or fault in, the lost context
    return 0


# ---- the parent ---------------------------------------------------------------------------------

def died(rc: int, tail: deque, during: str = "during this case") -> str:
    said = next((line.strip()[:100] for line in reversed(tail) if line.strip()), "")
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else -rc
        return f"crashed ({name}{': ' + said if said else ''}): most likely a read or write " \
            "outside the tensors"
    return f"the process exited with status {rc} {during}" + (f" ({said})" if said else "")


def ended(proc, tail: deque, during: str = "during this case") -> str:
    """Why the worker's channel closed: how it died, or, when it is still running a few seconds
    later (it closed its descriptors itself), that; then it is ended."""
    try:
        return died(proc.wait(timeout=3), tail, during)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return ("closed its channel to the grader (its file descriptors) and kept running: "
                "stopped")


def end_worker_on_signals(proc, then=None) -> dict:
    """Make SIGTERM, SIGHUP and SIGINT end ``proc``'s process group, run ``then()`` (a cleanup),
    then end the grader, with one line; return the handlers they replace (the main thread only:
    elsewhere, none)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def end(sig, frame):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        end_orphans()
        if then:
            then()
        print(f"\nstopped by {signal.Signals(sig).name}: the worker was ended; no verdict for "
              "the cases left", file=sys.stderr, flush=True)
        os._exit(128 + sig)

    return {sig: signal.signal(sig, end) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}


def start_worker(spec: dict, start: int = 0):
    """``python -m phase24.harness.isolate`` in a process group of its own, told SPEC and START
    on its stdin (a "serve" spec keeps stdin open for its requests: harness/decide.py), not in
    its argv: (process, a queue of its protocol's messages, None at its end; the last lines of
    its stderr, which is echoed; the reader threads)."""
    adopt_orphans()
    env = dict(os.environ, PYTHONUNBUFFERED="1", LIBC_FATAL_STDERR_="1", PHASE24_IN_WORKER="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phase24.harness.isolate"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)
    proc.stdin.write(json.dumps({"spec": spec, "start": start}) + "\n")
    proc.stdin.flush()
    if not spec.get("serve"):
        proc.stdin.close()
    lines: queue.Queue = queue.Queue()
    tail: deque = deque(maxlen=20)

    def read_protocol():
        for line in proc.stdout:
            try:
                lines.put(json.loads(line))
            except ValueError:  # a line cut short by the worker's death
                pass
        lines.put(None)

    def echo_stderr():
        for line in proc.stderr:
            tail.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()

    readers = [threading.Thread(target=f, daemon=True) for f in (read_protocol, echo_stderr)]
    for t in readers:
        t.start()
    return proc, lines, tail, readers


def stop_worker(proc, readers) -> None:
    """End the worker, its process group and whatever it left behind (orphans made ours by
    adopt_orphans()), then its reader threads."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its group: the file's children too, alive or not
    except OSError:
        pass
    proc.wait()
    end_orphans()
    for t in readers:
        t.join(timeout=5)


class Run:
    """One check run across as many workers as faults and hangs make necessary."""

    def __init__(self, spec: dict, timeout: float, load_timeout: float = 600):
        self.spec, self.timeout, self.load_timeout = spec, timeout, load_timeout
        self.jobs: list | None = None
        self.lost = False  # the worker said its CUDA context is lost

    def _start(self, start: int):
        return start_worker(self.spec, start)

    def run(self, on_ready, on_verdict, on_note) -> None:
        """Call on_note(text, failed) for each note of the loader and on_ready(jobs) once, then
        on_verdict(k, verdict dict) for every case in order."""
        k, timeouts = 0, {}
        while self.jobs is None or k < len(self.jobs):
            proc, lines, tail, readers = self._start(k)
            previous = end_worker_on_signals(proc)
            try:
                k = self._follow(proc, lines, tail, k, timeouts, on_ready, on_verdict, on_note)
            finally:
                stop_worker(proc, readers)
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    def _follow(self, proc, lines, tail, k, timeouts, on_ready, on_verdict, on_note) -> int:
        limit = self.load_timeout
        while True:
            try:
                msg = lines.get(timeout=limit)
            except queue.Empty:
                if self.jobs is None:
                    raise LoadError(f"loading took longer than {self.load_timeout:g} s "
                                    "(--load-timeout)")
                return self._timed_out(k, timeouts, on_verdict)
            if msg is None:  # the worker ended
                if self.jobs is None:
                    raise LoadError(ended(proc, tail, "while loading the file"))
                why = ended(proc, tail)
                if not self.lost and k < len(self.jobs):  # it died on case k
                    on_verdict(k, self._verdict(k, why))
                    k += 1
                self.lost = False
                return k
            if "lost" in msg:  # its verdict came first; a fresh worker goes on after it
                self.lost = True
                continue
            if "fatal" in msg:
                raise LoadError(msg["fatal"])
            if "ready" in msg:
                if self.jobs is None:
                    self.jobs = [tuple(j) for j in msg["ready"]]
                    for text, failed in msg["notes"]:
                        on_note(text, failed)
                    on_ready(self.jobs)
                limit = self.timeout
                if k >= len(self.jobs):
                    return k
                continue
            on_verdict(msg["i"], msg["verdict"])
            k = msg["i"] + 1

    def _verdict(self, k: int, why: str) -> dict:
        impl, dtype, case = self.jobs[k]
        inf = float("inf")
        return dict(impl=impl, dtype=dtype, case=case, rel_l2=inf, worst=inf, extra=inf,
                    ok=False, why=why, na=False)

    def _timed_out(self, k: int, timeouts: dict, on_verdict) -> int:
        impl = self.jobs[k][0]
        on_verdict(k, self._verdict(k, f"timed out after {self.timeout:g} s"))
        timeouts[impl] = timeouts.get(impl, 0) + 1
        k += 1
        if timeouts[impl] >= TIMEOUTS_PER_IMPL:
            while k < len(self.jobs) and self.jobs[k][0] == impl:
                on_verdict(k, self._verdict(k, f"not run: {impl} timed out {TIMEOUTS_PER_IMPL} "
                                               "times"))
                k += 1
        return k



def time_file(op, subjects: dict, dtypes: list[str], spec: dict, send, tampered) -> int:
    """`bench OP --file F`, the worker's side (harness/timefile.py is the grader's): time the
    loaded file, saying a line per shape, then the result (none if ``tampered()`` says the file
    changed the grader's or the timer's code)."""
    from phase24.harness.bench import run_bench
    from phase24.harness.check import short_error

    import torch

    from phase24.core.witness import Watch

    send(loaded=True)
    try:  # a Triton file's timed calls are watched by one profiler over the run (core/witness)
        with Watch(torch.cuda.is_available()) if spec["file"].endswith(".py") else \
                nullcontext() as watch:
            result = run_bench(op, subjects, dtypes, [tuple(s) for s in spec["shapes"]],
                               peers={}, on_shape=lambda line: send(line=line))
    except (Exception, KeyboardInterrupt) as err:  # the file's crash while timed: one line
        send(fatal=f"timing failed: {short_error(err)}")
        return 0
    if tampered() or (watch and watch.verdict):
        send(fatal=tampered() or f"while timed, {watch.verdict}")
        return 0
    send(result=result)
    return 0


REQUESTS_FD = 0  # the grader's requests (a "serve" spec): stdin's pipe, moved off fd 0


if __name__ == "__main__":
    told = json.loads(sys.stdin.readline())
    REQUESTS_FD = os.dup(0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the file, nvcc, g++ read nothing from it
    sys.exit(worker(told["spec"], told["start"]))
