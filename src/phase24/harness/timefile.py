"""`bench OP --file F`: a learner's kernel timed as the benchmark times the lab's own.

The file is checked first, by the same run as `check OP --file F`; one that does not pass is not
timed. Then a worker process (harness/isolate.py, as for the checks: the file's code never runs
in this process) loads it again and runs the benchmark's own loop (harness/bench.run_bench) on
the operation's shapes or those asked: the baseline (torch) and the file on each shape, each
output checked on a few rows against float64 before and after it is timed, and a copy of the same
bytes; each gets the benchmark's times (core/timing.py: ``us`` with L2 flushed, ``gpu_us`` from a
CUDA graph, ``loop_us`` of back-to-back calls). This process prints them, appends the run to the
learner's history (harness/history.py) and prints the best so far.

A Triton file's calls run under the checker's guard (core/guard.py) while they are timed too, so
that the times are those of its own kernels, and the whole run under one torch profiler
(core/witness.Watch) that judges each of the file's calls as a checked call's is judged: a file
that computed outside its kernels while timed gets no time. The guard's host work and the
profiler's count in ``loop_us`` (the baseline's and the copy's too, which the profiler watches).
"""

from __future__ import annotations

import argparse
import hashlib
import queue
from pathlib import Path

from phase24.core.layout import Columns, out, say
from phase24.core.op import Op


def bench_file(op: Op, args, shapes: list[tuple]) -> int:
    """Check the file, then time it; the command's exit status."""
    import torch

    from phase24.harness import history
    from phase24.harness.grade import check
    from phase24.harness.isolate import LoadError

    path = Path(args.file)
    if not torch.cuda.is_available():
        out(f"No GPU here: timing {path.name} needs an NVIDIA GPU (`check {op.name} --file` "
            "checks it here)")
        if path.suffix == ".cu":  # what the emulator can say instead: the launch's memory traffic
            from phase24.harness import counted

            counted.show(op.name, path, args.timeout)
        return 1
    out(f"=== check {op.name} --file {args.file}: the file is timed only if it passes")
    checked = argparse.Namespace(file=args.file, impl=None, dtype=args.dtype, seed=None,
                                 big=False, case=None, timeout=args.timeout,
                                 load_timeout=args.load_timeout)
    if check(op, checked) != 0:
        say(f"{path.name} does not pass check: it is not timed (the failures are above)")
        return 1
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    spec = {"op": op.name, "file": str(path.resolve()), "dtypes": args.dtype, "device": "cuda",
            "shapes": [list(s) for s in shapes], "seed": 0}
    out(f"\n=== timing {path.name} beside torch and a copy of the same bytes, in a worker process")
    try:
        result = _time_in_worker(spec, args.timeout, args.load_timeout)
    except LoadError as err:
        say(f"FAIL: {err}")
        return 1
    line = history.entry(op, result, path.name, path.resolve(), digest)
    show(op, result, path.name)
    bar_line(op, line)
    if not line["records"]:
        say(f"FAIL: no shape was timed: {path.name} refused every one")
        return 1
    unreal = impossible(op, result, path.name)
    for why in unreal:
        say(f"FAIL: {why}")
    if unreal:
        say("not recorded in your history: a time no kernel can have is not a time")
        return 1
    where = history.path_for(op)
    history.append(where, line)
    history.show_best(op, where, line)
    for f in result["failures"]:
        say(f"FAIL: wrong output while timed: {f}")
    return 1 if result["failures"] else 0


def _time_in_worker(spec: dict, timeout: float, load_timeout: float) -> dict:
    """The benchmark's result from a worker; LoadError with one line if it cannot give one."""
    from phase24.harness.isolate import (LoadError, end_worker_on_signals, ended, start_worker,
                                         stop_worker)

    proc, lines, tail, readers = start_worker(spec)
    previous = end_worker_on_signals(proc)
    limit, loading = load_timeout, True
    try:
        while True:
            try:
                msg = lines.get(timeout=limit)
            except queue.Empty:
                raise LoadError(f"{'loading' if loading else 'a shape'} took longer than "
                                f"{limit:g} s ({'--load-timeout' if loading else '--timeout'}): "
                                "stopped") from None
            if msg is None:
                raise LoadError(ended(proc, tail, "while loading the file" if loading
                                      else "while timing"))
            if "fatal" in msg:
                raise LoadError(msg["fatal"])
            if "loaded" in msg:
                limit, loading = timeout, False
            elif "line" in msg:
                out(msg["line"])
            elif "result" in msg:
                return msg["result"]
    finally:
        stop_worker(proc, readers)
        import signal

        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _us(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def show(op: Op, result: dict, name: str) -> None:
    """The file's times beside the baseline's and the copy's, a row per dtype and shape."""
    base = result["baseline"]
    say(f"{name} on {result['gpu']}: us is the GPU's time with L2 flushed (the benchmark's "
        "headline), gpu_us from a CUDA graph (L2 warm), loop_us a caller's time per call of "
        f"back-to-back calls (core/timing.py); beside {base} and a copy of the same bytes:")

    recs = {(r["impl"], *_key(op, r)): r for r in result["records"]}
    copies = _copies(op, result)
    cols = Columns(["dtype", "shape", "us", "gpu_us", "loop_us", f"{base} us", "copy us",
                    f"vs {base}", "% copy"], [8, 11, 8, 8, 8, 8, 8, 8, 6],
                   right={"us", "gpu_us", "loop_us", f"{base} us", "copy us", f"vs {base}",
                          "% copy"})
    cols.header()
    for k, copy in copies.items():
        mine, theirs = recs.get((name, *k)), recs.get((base, *k))
        if mine is None:
            cols.row([*k, "refused", "", "", _us(theirs and theirs["us"]), _us(copy["us"])])
            continue
        cols.row([*k, _us(mine["us"]), _us(mine["gpu_us"]), _us(mine["loop_us"]),
                  _us(theirs and theirs["us"]), _us(copy["us"]),
                  f"{theirs['us'] / mine['us']:.2f}x" if theirs else "-",
                  f"{pct_of_copy(result, mine, copy):.0f}%"])
    for line in result["refused"]:
        say(f"refused: {line}")


FASTEST_VS_COPY = 110  # % of the copy: past it, the time is not a kernel's (a 10% margin)


def _key(op: Op, r: dict) -> tuple[str, str]:
    """A record's dtype and shape as the table writes them ("4096x4096x4096")."""
    return r["dtype"], "x".join(str(r[f]) for f in op.shape_fields)


def _copies(op: Op, result: dict) -> dict:
    """The run's copy of each shape's bytes, by dtype and shape."""
    return {_key(op, c): c for c in result["copy_same_size"]}


def pct_of_copy(result: dict, record: dict, copy: dict) -> float:
    """The record's bandwidth (its least bytes over its time) as a % of the fastest copy of the
    run: the large copy timed first or the copy of this shape's bytes. A GPU shared with other
    work slows a copy as it slows a kernel; the faster of the two copies is the nearer ceiling."""
    return 100 * record["gbps"] / max(result["copy_gbps"], copy.get("gbps") or 0)


def impossible(op: Op, result: dict, name: str) -> list[str]:
    """The file's times that no kernel can have: faster than a copy of the bytes it must read
    and write (each operation's least traffic: a softmax's input and output, a GEMM's A, B and
    C), timed in the same run; a cache of earlier results, or work done before the timer
    started, looks like this."""
    copies = _copies(op, result)
    unreal = []
    for r in result["records"]:
        dtype, shape = _key(op, r)
        pct = pct_of_copy(result, r, copies.get((dtype, shape), {}))
        if r["impl"] == name and pct > FASTEST_VS_COPY:
            unreal.append(f"{dtype} {shape}: {pct:.0f}% of a copy of its least bytes, faster "
                          "than a copy can be")
    return unreal


def bar_line(op: Op, run: dict) -> None:
    """The Definition of Done's question for this run (a history line): at the plan's
    representative shape, in float32, how fast is the file beside the library timed in the same
    run, and does it cross the bar?"""
    from phase24.harness import dod

    where = f"{dod.shape_text(op.name)} {dod.DTYPE}"
    r = dod.ratio(op, run)
    if r is None:
        say(f"the Definition of Done's shape, {where}, was not timed in this run: "
            f"--shapes {dod.shape_text(op.name)} --dtype {dod.DTYPE} times it")
        return
    say(f"at the Definition of Done's shape, {where}: {run['name']} runs at {r:.0%} of "
        f"{dod.LIBRARY[op.name]}'s speed in this run: "
        + (f"it crosses the bar of {dod.BAR:.0%}" if r >= dod.BAR else
           f"below the bar of {dod.BAR:.0%}"))
