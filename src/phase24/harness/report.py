"""Recorded benchmark results as compact text tables (100 columns), for `results` and `bench`.

A cell is the share of the copy bandwidth measured in the same run and the speed-up over
torch.softmax on the same shape; a table too wide for the terminal is split into several, each
repeating the dtype and shape columns.
"""

from __future__ import annotations

import json
from pathlib import Path

from phase24.harness.layout import chunked, out

REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "results"


def cell(r: dict | None) -> str:
    if r is None:
        return "refused"
    x = r.get("speedup_vs_torch")
    return f"{r['pct_copy']:.0f}%" + (f" {x:.2f}x" if x is not None and r["impl"] != "torch" else "")


def print_results(result: dict, impls: list[str] | None = None, dtypes: list[str] | None = None,
                  shapes: list[tuple[int, int]] | None = None) -> None:
    """The records of one benchmark run, for the implementations, dtypes and shapes asked."""
    recs = result["records"]
    impls = [i for i in (impls or dict.fromkeys(r["impl"] for r in recs))
             if any(r["impl"] == i for r in recs)]
    keys = {(r["impl"], r["dtype"], r["M"], r["N"]): r for r in recs}
    fixed_rows, rows = [], []
    for dt in dict.fromkeys(r["dtype"] for r in recs):
        if dtypes and dt not in dtypes:
            continue
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in recs if r["dtype"] == dt):
            if shapes and (m, n) not in shapes:
                continue
            fixed_rows.append([dt, f"{m}x{n}"])
            rows.append([cell(keys.get((i, dt, m, n))) for i in impls])
    out(f"softmax on {result['gpu']}, commit {result['commit'][:10]}, {result['date'][:10]}: "
        f"% of the copy bandwidth")
    out(f"({result['copy_gbps']:.0f} GB/s in the same run) and speed-up over torch; refused: a "
        "shape the implementation refuses")
    if not rows:
        out("(nothing recorded for what was asked)")
        return
    for line in chunked(["dtype", "M x N"], fixed_rows, impls, rows):
        out(line)
    print_host_times(result, impls, dtypes, shapes)


def print_host_times(result: dict, impls: list[str], dtypes=None, shapes=None) -> None:
    """The few-row shapes with the host's launch included (a run that recorded it), in us per
    call beside a copy of the same bytes timed the same way: what a caller of one call waits."""
    from phase24.harness.bench import host_rows

    heads, rows = host_rows(result, [i for i in impls if i not in result.get("peers", [])])
    rows = [r for r in rows if (not dtypes or r[0] in dtypes) and (not shapes or tuple(r[1:3])
                                                                    in shapes)]
    if not rows or all(u is None for r in rows for u in r[4:]):
        return
    out("\nfew rows, the host's launch included (us per call, lower is better; copy: the same "
        "bytes copied):")
    fixed = [[dt, f"{m}x{n}"] for dt, m, n, *_ in rows]
    cells = [["-" if u is None else f"{u:.1f}" for u in r[3:]] for r in rows]
    for line in chunked(["dtype", "M x N"], fixed, heads, cells):
        out(line)


def recorded() -> list[tuple[Path, dict]]:
    """Each GPU's latest recorded benchmark run (results/<gpu>/softmax.json)."""
    return [(f, json.loads(f.read_text())) for f in sorted(RESULTS.glob("*/softmax.json"))]


def runs_for(impls: list[str]) -> list[tuple[Path, dict, list[str]]]:
    """Per GPU, its recorded run and the implementations of ``impls`` it has: (file, run,
    those implementations). Earlier runs (results/<gpu>/history/) are not shown: the figures are
    one run's."""
    chosen = []
    for f, run in recorded():
        have = {r["impl"] for r in run["records"]}
        shown = [i for i in impls if i in have]
        if shown:
            chosen.append((f, run, shown))
    return chosen


def show_recorded(impls: list[str], dtypes=None, shapes=None) -> int:
    """The recorded figures of ``impls`` (for these dtypes and shapes, if given); says what was
    asked and is recorded nowhere."""
    runs = runs_for(impls)
    if not runs:
        out("no recorded results under results/ for " + ", ".join(impls))
        return 0
    for i, (f, result, shown) in enumerate(runs):
        if i:
            out()
        print_results(result, shown, dtypes, shapes)
        out(f"(recorded {result['date']} on {result['gpu']}; {f.relative_to(REPO)})")
    have = {i for _, _, shown in runs for i in shown}
    sizes = {(r["M"], r["N"]) for _, result, _ in runs for r in result["records"]}
    missing = [i for i in impls if i not in have]
    missing += [f"{m}x{n}" for m, n in shapes or [] if (m, n) not in sizes]
    if missing:
        out(f"not recorded: {', '.join(missing)}")
    return 0
