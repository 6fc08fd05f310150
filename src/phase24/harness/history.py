"""The learner's timings, kept across runs: ``bench OP --file F`` appends each run to
out/history/<op>.jsonl (out/ is git-ignored: the history stays on this machine; PHASE24_HISTORY
names another folder) and prints the best time so far of each dtype and shape.

A run is one JSON line: when, where (GPU, commit), which file (its path, name and SHA-256),
whether every timed output was right, and per dtype and shape the file's times and torch's. Only
runs on the same GPU whose outputs were all right count towards a best; a line that cannot be
read (a run killed while writing it) is skipped and counted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from phase24.core.layout import Columns, out, say
from phase24.core.op import Op
from phase24.core.provenance import REPO

TIMES = ("us", "gpu_us", "loop_us", "host_us")


def path_for(op: Op) -> Path:
    folder = os.environ.get("PHASE24_HISTORY") or REPO / "out" / "history"
    return Path(folder) / f"{op.name}.jsonl"


def entry(op: Op, result: dict, name: str, file: Path, sha256: str) -> dict:
    """One run of the file ``name`` (the benchmark's ``result``) as a history line."""
    def times(impl):
        return [{"dtype": r["dtype"], **{f: r[f] for f in op.shape_fields},
                 **{t: r[t] for t in TIMES}} for r in result["records"] if r["impl"] == impl]

    return {"date": result["date"], "gpu": result["gpu"], "commit": result["commit"],
            "file": str(file), "name": name, "sha256": sha256, "ok": not result["failures"],
            "records": times(name), "baseline": result["baseline"],
            "baseline_records": times(result["baseline"])}


def append(path: Path, line: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def load(path: Path) -> tuple[list[dict], int]:
    """(the runs, the number of lines that could not be read)."""
    if not path.exists():
        return [], 0
    runs, bad = [], 0
    for line in path.read_text(errors="replace").splitlines():
        try:
            run = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(run, dict) and isinstance(run.get("records"), list):
            runs.append(run)
        elif line.strip():
            bad += 1
    return runs, bad


def key(op: Op, r: dict) -> tuple:
    return (r["dtype"], *(r[f] for f in op.shape_fields))


def best(op: Op, runs: list[dict], gpu: str) -> dict[tuple, tuple[dict, dict]]:
    """(dtype, *shape) -> (the record with the lowest ``us``, its run), over the runs on ``gpu``
    whose outputs were all right."""
    found: dict[tuple, tuple[dict, dict]] = {}
    for run in runs:
        if run.get("gpu") != gpu or not run.get("ok"):
            continue
        for r in run["records"]:
            try:
                k, us = key(op, r), float(r["us"])
            except (KeyError, TypeError, ValueError):
                continue
            if k not in found or us < found[k][0]["us"]:
                found[k] = (r, run)
    return found


def show_best(op: Op, path: Path, current: dict) -> None:
    """The best so far of each dtype and shape that the ``current`` run timed, with this run's
    time beside it ("new best" where this run set it)."""
    runs, bad = load(path)
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    counted = [r for r in runs if r.get("gpu") == current["gpu"] and r.get("ok")]
    out()
    say(f"your best so far on {current['gpu']} ({len(counted)} run(s) with right outputs in "
        f"{shown}" + (f"; {bad} unreadable line(s) skipped" if bad else "") + "):")
    top = best(op, runs, current["gpu"])
    cols = Columns(["dtype", "shape", "best us", "this run", "", "when", "file"],
                   [8, 11, 8, 8, 8, 10, 20], right={"best us", "this run"})
    cols.header()
    for r in current["records"]:
        k = key(op, r)
        if k not in top:
            continue
        b, run = top[k]
        new = run == current  # the earliest run wins a tie: this one is new only if faster
        cols.row([r["dtype"], "x".join(str(v) for v in k[1:]), f"{b['us']:.1f}",
                  f"{r['us']:.1f}", "new best" if new else "", run["date"][:10],
                  f"{run['name']} ({run['sha256'][:8]})"])
