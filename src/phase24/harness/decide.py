"""`check OP --file F`: the grader decides, the learner's process only computes.

The parent (this process, which never imports the file) holds the seed, the case list, the
inputs, the float64 references, the bounds and the verdicts. A worker (harness/isolate.py, a
"serve" spec with no seed in it) loads the file and answers requests: each one names a case and
a call, and points to the call's inputs, which the parent wrote as bytes (storage, dtype, shape,
strides, offset) into a private folder. The worker rebuilds them on its device, calls the file into
an output poisoned with the value asked, inside guard regions, and writes back the whole guarded
buffer and its inputs' bytes; it replies with the case and call it answered, nothing else. The
parent reads those bytes and judges them with the same check as the lab's own implementations
(harness/check.py's check_case): unwritten elements, writes past either end, changed inputs,
accuracy against float64, a result kept from an earlier call, a race. A reply for another case,
a worker that dies or takes longer than ``--timeout`` is that case's verdict; a fresh worker goes
on at the next case.

What the worker says counts for nothing: a file that writes "passed" on its channel, patches
json, or edits a case list in its own process changes only bytes the parent then compares.
"""

from __future__ import annotations

import json
import math
import os
import queue
import shutil
import signal
import tempfile
import time
from pathlib import Path

from phase24.core.dtypes import DTYPES, NAME
from phase24.core.outputs import GUARD
from phase24.harness.serve import read_tensor, write_tensor


TIMEOUTS = 2  # after two time-outs, the file's other cases are not run


class WorkerGone(BaseException):
    """The worker timed out, died or answered another request: the case's verdict is ``why``.
    A BaseException, so that check_case's handler of the file's errors does not take it."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class Refused(WorkerGone):
    """The worker found that the file changed the grader's code: the whole check fails."""


class Raised(ValueError):
    """The file raised while called: its one-line message is the case's verdict."""


# ---- the parent's side -------------------------------------------------------------------------

class Decided:
    """One check of a learner's file, decided here, across as many workers as it takes."""

    def __init__(self, op, spec: dict, timeout: float, load_timeout: float):
        self.op, self.spec = op, spec
        self.timeout, self.load_timeout = timeout, load_timeout
        self.proc = None
        self.asked, self.lost, self.timeouts = 0, False, 0
        self.folder = Path(tempfile.mkdtemp(prefix=f"phase24-case-{os.getpid()}-",
                                            dir="/dev/shm" if os.path.isdir("/dev/shm") else None))

    def run(self, on_ready, on_verdict, on_note) -> None:
        from phase24.harness.check import Verdict, check_case, jobs
        from phase24.harness.isolate import LoadError

        try:
            dtypes = self._start(on_note)
            todo = jobs(self.op, [Path(self.spec["file"]).name], dtypes, self.spec["device"],
                        self.spec["seed"], self.spec.get("big", False), self.spec.get("case"))
            on_ready([(j.impl, j.dtype, j.case.name) for j in todo])
            inf = float("inf")
            for k, job in enumerate(todo):
                if self.timeouts >= TIMEOUTS:
                    why = f"not run: it timed out {TIMEOUTS} times"
                    on_verdict(k, Verdict(job.impl, job.dtype, job.case.name, inf, inf, inf,
                                          False, why).__dict__)
                    continue
                if self.proc is None:
                    self._start(None)
                try:
                    v = check_case(self.op, job.impl, None, job.case, DTYPES[job.dtype], "cpu",
                                   job.seed, learner=True, call=self._call)
                    on_verdict(k, v.__dict__)
                except Refused as refused:
                    raise LoadError(refused.why) from None
                except WorkerGone as gone:
                    self.timeouts += gone.why.startswith("timed out")
                    on_verdict(k, Verdict(job.impl, job.dtype, job.case.name, inf, inf, inf,
                                          False, gone.why).__dict__)
                    self.lost = True
                if self.lost:  # a fresh worker for the next case
                    self._stop()
                    self.lost = False
        finally:
            self._stop()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _start(self, on_note) -> list[str]:
        from phase24.harness.isolate import LoadError, end_worker_on_signals, ended, start_worker

        spec = {k: v for k, v in self.spec.items() if k != "seed"} | {"serve": True}
        self.proc, self.lines, self.tail, self.readers = start_worker(spec)
        self.previous = end_worker_on_signals(  # a Ctrl-C leaves no folder of inputs behind
            self.proc, lambda: shutil.rmtree(self.folder, ignore_errors=True))
        msg = self._next(self.load_timeout, "loading took longer than "
                         f"{self.load_timeout:g} s (--load-timeout)", LoadError,
                         lambda m: "loaded" in m or "fatal" in m)
        if msg is None:
            raise LoadError(ended(self.proc, self.tail, "while loading the file"))
        if "fatal" in msg:
            raise LoadError(msg["fatal"])
        if not msg.get("loaded"):
            raise LoadError("the worker's first word was not that the file loaded")
        if on_note:
            for text, failed in msg.get("notes", []):
                on_note(str(text), bool(failed))
        asked = self.spec["dtypes"]
        return [d for d in asked if d in set(msg.get("dtypes", []))]

    def _next(self, limit: float, late: str, error, expected):
        """The worker's next message that ``expected`` accepts (None when it ended); any other
        message (what the file itself wrote on the channel) is passed over."""
        deadline = time.monotonic() + limit
        while True:
            try:
                msg = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise error(late) from None
            if msg is None or (isinstance(msg, dict) and expected(msg)):
                return msg

    def _call(self, inputs, poison, shape, dtype):
        """One call of the file in the worker; (its guarded buffer, its inputs after the call)."""
        from phase24.harness.isolate import ended

        self.asked += 1
        folder = self.folder / str(self.asked)
        folder.mkdir()
        ask = {"id": self.asked, "folder": str(folder), "poison": poison, "shape": list(shape),
               "dtype": NAME[dtype],
               "inputs": [write_tensor(x, folder / f"in{i}.bin") for i, x in enumerate(inputs)]}
        try:
            self.proc.stdin.write(json.dumps(ask) + "\n")
            self.proc.stdin.flush()
        except OSError:
            raise WorkerGone(ended(self.proc, self.tail)) from None
        msg = self._next(self.timeout, f"timed out after {self.timeout:g} s", WorkerGone,
                         lambda m: self.asked in (m.get("done"), m.get("error"),
                                                  m.get("fatal_for")))
        try:
            if msg is None:
                raise WorkerGone(ended(self.proc, self.tail))
            if "fatal" in msg:
                raise Refused(str(msg["fatal"]))
            if "error" in msg and msg["error"] == self.asked:
                self.lost = bool(msg.get("lost"))
                raise Raised(str(msg.get("why", "the call failed")))
            buf = msg.get("buf") if msg.get("done") == self.asked else None
            if buf is None or buf["dtype"] != NAME[dtype] or \
                    buf["shape"] != [2 * GUARD + math.prod(shape)] or \
                    len(msg["after"]) != len(inputs):
                raise WorkerGone("its worker answered something other than the call it was "
                                 "asked for: no verdict can come from it")
            return read_tensor(buf), [read_tensor(m) for m in msg["after"]]
        except Raised:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise WorkerGone(f"its worker's reply could not be read ({err})") from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _stop(self) -> None:
        from phase24.harness.isolate import stop_worker

        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        stop_worker(self.proc, self.readers)
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.proc = None
