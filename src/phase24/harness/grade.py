"""`phase24 check OP`: what runs on this machine, a progress line as each implementation ends,
then a table per implementation (cases passed, failed, not applicable) and every failing case in
full; every case's row goes to a log file the command names.

The cases run in a worker process (harness/isolate.py). Without a GPU, the Triton rungs and a
learner's .py run in Triton's interpreter, a learner's .cu in the CUDA C emulator (emulator/),
which then counts one launch's memory traffic in a process of its own (harness/counted.py);
the lab's CUDA C implementations are skipped.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

import torch

from phase24.core.dtypes import SHORT
from phase24.core.layout import WIDTH, Columns, num, out, say, sci
from phase24.core.op import Op
from phase24.core.provenance import REPO

INTERPRETER = ("Triton's interpreter runs the Triton kernels on this CPU (the lab chooses it where "
               "there is no GPU;\nnothing to set): it checks what they compute, not their speed.")
EMULATED = ("emulated on the CPU: correctness and counts, no timing (each CUDA thread a coroutine, "
            "every access checked;\nthe same cases as a GPU's, long rows trimmed)")
LOGS = REPO / "out" / "check"


def learner_file(args) -> None:
    """SystemExit with one line if ``--file`` is given beside ``--impl``, is not a file, or is
    neither a .cu nor a .py file."""
    if args.file is None:
        return
    if not args.file.strip():
        raise SystemExit("--file '': name your kernel's file (a .cu or a Triton .py)")
    if args.impl:
        raise SystemExit("--impl and --file do not go together: --file takes your file, "
                         "--impl the lab's implementations")
    path = Path(args.file)
    if not path.is_file():
        raise SystemExit(f"no such file: {args.file}")
    if path.suffix not in (".cu", ".py"):
        raise SystemExit(f"{args.file}: expected a .cu (CUDA C) or a .py (Triton) file")


def known(op: Op, names: list[str] | None) -> list[str]:
    """The implementations named (all by default); SystemExit naming any that is not one."""
    every = op.implementations()
    unknown = [n for n in names or [] if n not in every]
    if unknown:
        raise SystemExit(f"unknown implementation(s) {', '.join(unknown)} of {op.name}; choose "
                         f"from {', '.join(every)}")
    return names or list(every)


def _registry_subjects(op: Op, names: list[str] | None, gpu: bool) -> list[str] | None:
    names = known(op, names)
    if gpu:
        return names
    why = {n: op.not_here(n) for n in names}
    for reason in dict.fromkeys(r for r in why.values() if r):
        skipped = [n for n in names if why[n] == reason]
        say(f"{', '.join(skipped)}: {reason}: skipped")
    runnable = [n for n in names if not why[n]]
    if not runnable:
        here = [n for n in op.implementations() if not op.not_here(n)]
        out("Nothing to check on this machine: nothing was checked. What runs here:\n" + (
            f"  python -m phase24 check {op.name} --impl {' '.join(here)}\n" if here else "")
            + "  python -m phase24 build   (compile the CUDA kernels, with their resource report)")
        return None
    if any(n != next(iter(op.implementations())) for n in runnable):
        out(INTERPRETER)
    return runnable


class Table:
    """The check's verdicts: every row into the log, a line per implementation as it ends, and
    the tables at the end."""

    def __init__(self, op: Op, seed: int, log: Path):
        self.op, self.seed, self.log = op, seed, log
        self.counts: dict[str, list[int]] = {}
        self.failures: list[tuple[str, str]] = []
        self.noted_failure, self.last, self.current = False, time.monotonic(), None
        self.started = time.monotonic()
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(log, "w")
        except OSError as err:  # out/ a file, read-only, full: the verdicts still print
            raise SystemExit(f"cannot write the check's log {log}: {err.strerror or err} (out/ "
                             "must be a writable folder with room)") from None

    def _log(self, text: str) -> None:
        """A line into the log; once the disk refuses one, a line says so and the log stops
        (the verdicts go on being printed)."""
        if self.file is None:
            return
        try:
            self.file.write(text)
            self.file.flush()
        except OSError as err:
            say(f"the log {self.log} could not be written ({err.strerror or err}): the verdicts "
                "go on here, the log stops")
            self.file = None

    def note(self, text: str, failed: bool) -> None:
        say(("FAIL: " if failed else "") + text)
        self._log(text + "\n")
        self.noted_failure |= failed

    def ready(self, jobs) -> None:
        self.total = len(jobs)
        impl = max((len(j[0]) for j in jobs), default=4)
        case = max((len(j[2]) for j in jobs), default=4)
        self.cols = Columns(["impl", "dtype", "case", "rel L2", "err/tol", self.op.extra_name,
                             "verdict"], [impl, 5, case, 7, 7, 7, 7],
                            right={"rel L2", "err/tol", self.op.extra_name}, width=10**6)
        if not jobs:
            out("no case to run: --case matches no case's name, or the file covers none of "
                "the dtypes asked")
            return
        shown = self.log.relative_to(REPO) if self.log.is_relative_to(REPO) else self.log
        out(f"{len(jobs)} cases; every row goes to {shown}")
        self._log(self.cols.line(self.cols.heads) + "\n")

    def verdict(self, k: int, v: dict) -> None:
        impl = v["impl"]
        if impl != self.current and self.current is not None:
            self._progress(self.current, k)
        self.current = impl
        counts = self.counts.setdefault(impl, [0, 0, 0])
        if v["na"]:
            word, detail, slot = "n/a", v["why"], 2
        elif v["ok"]:
            word, detail, slot = "ok", "", 0
        else:
            word, detail, slot = "FAIL", v["why"], 1
            if detail.startswith("not run:"):
                word = "not run"
        counts[slot] += 1
        numbers = ["-"] * 3 if v["na"] or v["rel_l2"] == math.inf else \
            [sci(v["rel_l2"]), num(v["worst"]), sci(v["extra"])]
        row = self.cols.line([impl, SHORT.get(v["dtype"], v["dtype"]), v["case"], *numbers, word])
        self._log(row + (f"\n    {detail}" if detail else "") + "\n")
        if slot == 1:
            self.failures.append((row, detail))
            out(f"FAIL {impl} {SHORT.get(v['dtype'])} {v['case']}: {detail}")
        if time.monotonic() - self.last > 8:
            self._progress(impl, k + 1, partial=True)

    def _progress(self, impl: str, done: int, partial: bool = False) -> None:
        p, f, na = self.counts[impl]
        out(f"[{done}/{self.total}, {time.monotonic() - self.started:.0f} s] {impl}: {p} passed, "
            f"{f} failed" + (f", {na} n/a" if na else "") + (" so far" if partial else ""))
        self.last = time.monotonic()

    def summary(self) -> int:
        if self.current is not None:
            self._progress(self.current, self.total)
        try:
            if self.file is not None:
                self.file.close()
        except OSError:
            pass
        if self.counts:
            out("")
            cols = Columns(["implementation", "passed", "failed", "n/a"],
                           [max(len(i) for i in self.counts), 6, 6, 4],
                           right={"passed", "failed", "n/a"})
            cols.header()
            for impl, (p, f, na) in self.counts.items():
                cols.row([impl, str(p), str(f), str(na)])
        if self.failures:
            out(f"\nfailed ({len(self.failures)}), in full:")
            for row, why in self.failures:
                out(row[:WIDTH])
                out(f"    {why}")
        passed = sum(c[0] for c in self.counts.values())
        failed = sum(c[1] for c in self.counts.values())
        na = sum(c[2] for c in self.counts.values())
        extra = f", {na} not applicable" if na else ""
        out(f"{passed} passed, {failed} failed{extra} (seed {self.seed}; every case: {self.log})")
        return 1 if failed or not passed or self.noted_failure else 0


def check(op: Op, args) -> int:
    from phase24.harness.isolate import LoadError, Run

    gpu = torch.cuda.is_available()
    spec = {"op": op.name, "dtypes": args.dtype, "big": args.big,
            "device": "cuda" if gpu else "cpu", "case": args.case}
    if args.file:
        path = Path(args.file)
        spec["file"] = str(path.resolve())
        out(f"{path.name}: its code runs in a worker process, with your rights.")
        if not gpu:
            out(EMULATED if path.suffix == ".cu" else INTERPRETER)
    else:
        spec["impls"] = _registry_subjects(op, args.impl, gpu)
        if spec["impls"] is None:
            return 1  # nothing was checked: not a pass
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    spec["seed"] = seed
    out(f"seed {seed} (replay it with --seed {seed})")
    out(f"tolerances, rtol/atol: {op.tolerances}")
    # A learner's file has its own log: two checks of different files never share one.
    subject = f"-{Path(args.file).name}" if args.file else ""
    table = Table(op, seed, LOGS / f"{op.name}{subject}-{seed}.log")
    if args.file:  # the parent decides, the worker only computes (harness/decide.py)
        from phase24.harness.decide import Decided

        runner = Decided(op, spec, args.timeout, args.load_timeout)
    else:
        runner = Run(spec, args.timeout, load_timeout=args.load_timeout)
    try:
        runner.run(table.ready, table.verdict, table.note)
    except LoadError as err:  # a message of several lines (a compiler's) is printed as it is
        (out if "\n" in str(err) else say)(f"FAIL: {err}")
        return 1
    rc = table.summary()
    if args.file and not gpu and Path(args.file).suffix == ".cu":
        from phase24.harness.counted import show

        show(op.name, Path(args.file), args.timeout)
    return rc
