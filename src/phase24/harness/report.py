"""Recorded benchmark results as compact text tables (100 columns), for `results` and `bench`.

A run of ``bench OP`` on a GPU is kept as results/<gpu>/<op>/<op>.json (and its plot beside it).
A cell is the share of the copy bandwidth measured in the same run and the speed-up over the
baseline on the same shape; a table too wide for the terminal is split into several, each
repeating the dtype and shape columns. A second table gives a caller's time per call of
back-to-back calls (loop_us) on the shapes the operation marks as few-row ones.
"""

from __future__ import annotations

import json
from pathlib import Path

from phase24.core.layout import chunked, out, say
from phase24.core.op import Op
from phase24.core.provenance import REPO

RESULTS = REPO / "results"


def save(op: Op, result: dict, folder: Path) -> tuple[Path, Path]:
    """Write ``result`` as folder/<op>.json and its plot as folder/<op>.png."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{op.name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path, op.plot(result, folder / f"{op.name}.png")


def _shape(r: dict, op: Op) -> str:
    return "x".join(str(r[f]) for f in op.shape_fields)


def cell(r: dict | None, baseline: str) -> str:
    """% of the copy bandwidth (TFLOP/s for an operation that records them), and the speed-up
    over the baseline."""
    if r is None:
        return "refused"
    x = r.get(f"speedup_vs_{baseline}")
    rate = f"{r['tflops']:.1f}" if r.get("tflops") is not None else f"{r['pct_copy']:.0f}%"
    return rate + (f" {x:.2f}x" if x is not None and r["impl"] != baseline else "")


def print_results(op: Op, result: dict, impls: list[str] | None = None,
                  dtypes: list[str] | None = None, shapes: list[tuple] | None = None) -> None:
    """The records of one benchmark run, for the implementations, dtypes and shapes asked."""
    recs = result["records"]
    baseline = result.get("baseline", "torch")
    impls = [i for i in (impls or dict.fromkeys(r["impl"] for r in recs))
             if any(r["impl"] == i for r in recs)]
    keys = {(r["impl"], r["dtype"], _shape(r, op)): r for r in recs}
    wanted = {"x".join(map(str, s)) for s in shapes or []}
    fixed_rows, rows = [], []
    for dt in dict.fromkeys(r["dtype"] for r in recs):
        if dtypes and dt not in dtypes:
            continue
        for shape in dict.fromkeys(_shape(r, op) for r in recs if r["dtype"] == dt):
            if wanted and shape not in wanted:
                continue
            fixed_rows.append([dt, shape])
            rows.append([cell(keys.get((i, dt, shape)), baseline) for i in impls])
    rate = "TFLOP/s" if op.flops else (f"% of the copy bandwidth ({result['copy_gbps']:.0f} "
                                       "GB/s in the same run)")
    out(f"{op.name} on {result['gpu']}, {result['date'][:10]}: {rate}")
    out(f"and speed-up over {baseline} (flushed GPU time, `us`); refused: a shape the "
        "implementation refuses")
    if not rows:
        out("(nothing recorded for what was asked)")
        return
    for line in chunked(["dtype", "shape"], fixed_rows, impls, rows):
        out(line)
    _print_loop_times(op, result, impls, fixed_rows)


def _print_loop_times(op: Op, result: dict, impls: list[str], shown: list[list[str]]) -> None:
    """A caller's time per call (loop_us) beside a copy of the same bytes, on the shown shapes
    that are not bulk ones (the operation's few-row shapes)."""
    recs = {(r["impl"], r["dtype"], _shape(r, op)): r for r in result["records"]}
    copies = {(c["dtype"], _shape(c, op)): c for c in result.get("copy_same_size", [])}
    marked = {"x".join(map(str, f)) for f in op.few_shapes}
    few = [(dt, s) for dt, s in shown if s in marked and "loop_us" in copies.get((dt, s), {})]
    if not few:
        return
    out("\na caller's time per call, back-to-back calls (loop_us, us; copy: the same bytes "
        "copied):")
    heads = ["copy"] + impls
    cells = [[_us(copies[(dt, s)].get("loop_us"))] +
             [_us((recs.get((i, dt, s)) or {}).get("loop_us")) for i in impls] for dt, s in few]
    for line in chunked(["dtype", "shape"], [list(k) for k in few], heads, cells):
        out(line)


def _us(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def recorded(op: Op) -> list[tuple[Path, dict]]:
    """Each GPU's recorded benchmark runs of ``op``, newest first: results/<gpu>/<op>/<op>.json,
    the runs in its subfolders (results/h200/gemm/rungs/: every rung on a few shapes), then
    results/<gpu>/<op>.json (where runs of every rung were kept before the per-operation
    folders)."""
    found = sorted(RESULTS.glob(f"*/{op.name}/{op.name}.json")) + \
        sorted(RESULTS.glob(f"*/{op.name}/*/{op.name}.json")) + \
        sorted(RESULTS.glob(f"*/{op.name}.json"))
    runs = []
    for f in found:
        try:
            run = json.loads(f.read_text())
            if not isinstance(run, dict) or not isinstance(run.get("records"), list):
                raise ValueError("no list of records")
        except (OSError, ValueError) as err:
            say(f"skipped {f.relative_to(REPO)}: not a readable benchmark run ({err})")
            continue
        runs.append((f, run))
    return sorted(runs, key=lambda fr: str(fr[1].get("date", "")), reverse=True)


def show_recorded(op: Op, impls: list[str], dtypes=None, shapes=None) -> int:
    """The recorded figures of ``impls`` (for these dtypes and shapes, if given), each from the
    newest run that has it; says what was asked and is recorded nowhere."""
    runs, have = [], set()
    for f, run in recorded(op):
        shown = [i for i in impls if i not in have and any(r["impl"] == i for r in run["records"])]
        if shown:
            runs.append((f, run, shown))
            have.update(shown)
    if not runs:
        say(f"no recorded results of {op.name} under results/ for " + ", ".join(impls))
        return 0
    for i, (f, result, shown) in enumerate(runs):
        if i:
            out()
        print_results(op, result, shown, dtypes, shapes)
        out(f"(recorded {result['date']} on {result['gpu']}; {f.relative_to(REPO)})")
    sizes = {_shape(r, op) for _, result, _ in runs for r in result["records"]}
    missing = [i for i in impls if i not in have]
    missing += [s for s in ("x".join(map(str, s)) for s in shapes or []) if s not in sizes]
    if missing:
        say(f"not recorded: {', '.join(missing)}")
    return 0
