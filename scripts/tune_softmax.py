"""Time v3 and every v4 .. v10 configuration that fits each benchmark shape; write the best per shape.

Usage: python3 scripts/tune_softmax.py OUT.json   (on a GPU); also writes OUT_best.json, which
becomes src/phase24/softmax/cuda/tuned_configs.json (read by launchers.tuned).
       python3 scripts/tune_softmax.py OUT.json --min-n N --rest-from OLD.json   times only the
shapes with rows of N or more; the others are copied from OLD.json, each marked with its run.
       ... --few-only --rest-from OLD.json   times only the benchmark's few-row shapes.
       ... --kinds v6 v9 v10   times only those rungs (the JSON records which); v3 is timed
when it is among them.
       python3 scripts/tune_softmax.py --from RUN.json BEST.json   rebuilds BEST.json from a
recorded run (no GPU).
"""

import argparse
import json
import sys
from pathlib import Path

import torch


from phase24.core.provenance import stamp
from phase24.core.timing import copy_gbps
from phase24.core.timing import flushed_us as time_us
from phase24.softmax.spec import FEW_ROW_SHAPES, shapes as standard_shapes


def bytes_moved(m, n, dtype):
    from phase24.softmax.spec import bytes_moved as moved

    return moved((m, n), dtype)
from phase24.core.dtypes import TAG, vec16
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.cuda.configs import SLOTS

DT = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def main(out_path: str, min_n: int = 0, rest_from: str | None = None,
         only: list[str] | None = None, few_only: bool = False) -> None:
    copy = copy_gbps()
    table = []
    rest = {}
    if rest_from:
        old = json.load(open(rest_from))
        rest = {(e["dtype"], e["M"], e["N"]):  # an entry copied before keeps its own origin
                {"from": f"{rest_from} (commit {old.get('commit', '?')})", **e} for e in old["shapes"]}
    for dtname, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        vw = vec16(dtype)
        for m, n in standard_shapes():
            if n < min_n or (few_only and (m, n) not in FEW_ROW_SHAPES):
                table.append(rest[(dtname, m, n)])
                continue
            x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
            out = torch.empty_like(x)
            room = 4 * n if ci._few(m) else 2 * n  # few rows: bigger clusters may pay
            kinds = [k for k in SLOTS  # the tunable rungs; those needing clusters on Hopper only
                     if (ci.has_clusters() or k not in ci.CLUSTER_KINDS) and (only is None or k in only)]
            cands = [(kind, c) for kind in kinds for c in ci.configs(kind, dtype)
                     if n <= ci.capacity(kind, c, dtype) <= (2 * n if kind in ("v4", "v5", "v6") else room)
                     or (n < vw and c == (1, 1))]  # rows shorter than a slot: v4/v6's smallest
            v3_reach = 256 * ci.configs("v3", dtype)[-1][0] * vw  # its largest K, 256 threads
            if n <= v3_reach and (only is None or "v3" in only):  # v3 can still win
                cands.append(("v3", None))
            rows = {**ci.KINDS, "v3": lambda a, b, config: ci.rows_v3(a, b)}  # v3 has no choice
            timings = []
            for kind, cfg in cands:
                try:
                    us = time_us(lambda: rows[kind](x, out, config=cfg), warmup_ms=5, rep_ms=25)
                except Exception as err:  # e.g. a cluster size this GPU refuses: report, go on
                    print(f"  {kind}{cfg}: {type(err).__name__}: {err}", flush=True)
                    continue
                timings.append({"kind": kind, "config": cfg, "us": round(us, 2),
                                "pct_copy": round(100 * bytes_moved(m, n, dtype) / us / 1e3 / copy, 1)})
            tus = time_us(lambda: torch.softmax(x, -1), warmup_ms=5, rep_ms=25)
            timings.sort(key=lambda t: t["us"])
            best = timings[0] if timings else None
            table.append({"dtype": dtname, "M": m, "N": n, "torch_us": round(tus, 2),
                          "best": best, "all": timings})
            print(f"{dtname:8s} {m:>8d}x{n:<7d} torch {tus:8.1f} us  best {best}", flush=True)
            del x, out
            torch.cuda.empty_cache()
    json.dump({"copy_gbps": copy, **stamp(),
               "timing": "core/timing.py flushed_us, warm-up 5 ms, ~25 ms of repetitions",
               "kinds_timed": only or "all",
               "shapes": table}, open(out_path, "w"), indent=1)
    write_best(table, torch.cuda.get_device_name(), out_path.replace(".json", "_best.json"),
               "scripts/tune_softmax.py")


def write_best(table: list, gpu: str, path: str, source: str) -> None:
    """The fastest configuration per (dtype, N, row-count class), as launchers.tuned reads it."""
    best = [{"dtype": TAG[DT[e["dtype"]]], "N": e["N"], "rows": ci.rows_class(e["M"]),
             "kind": e["best"]["kind"], "config": e["best"]["config"], "us": e["best"]["us"]}
            for e in table if e["best"]]
    for b in list(best):  # the 16-bit float types share their configurations
        if b["dtype"] == "bf16":
            best.append({**b, "dtype": "f16"})
    Path(path).write_text(best_json(gpu, source, best))


def best_json(gpu: str, source: str, best: list) -> str:
    """The tuned table as JSON, one entry a line (src/phase24/softmax/cuda/tuned_configs.json)."""
    entries = ",\n".join("  " + json.dumps(b) for b in best)
    return (f'{{\n "gpu": {json.dumps(gpu)},\n "source": {json.dumps(source)},\n'
            f' "best": [\n{entries}\n ]\n}}\n')


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", help="OUT.json (OUT_best.json is written beside it)")
    p.add_argument("--from", dest="rebuild", nargs=2, metavar=("RUN.json", "BEST.json"),
                   help="rebuild BEST.json from a recorded run (no GPU)")
    p.add_argument("--min-n", type=int, default=0, help="time only rows of N values or more")
    p.add_argument("--few-only", action="store_true", help="time only the few-row shapes")
    p.add_argument("--rest-from", metavar="OLD.json", help="where the shapes not timed come from")
    p.add_argument("--kinds", nargs="+", help="time only these rungs")
    a = p.parse_args(argv)
    if (a.out is None) == (a.rebuild is None):
        p.error("give OUT.json, or --from RUN.json BEST.json")
    if (a.min_n or a.few_only) and not a.rest_from:
        p.error("--min-n and --few-only copy the shapes they skip from --rest-from OLD.json")
    return a


if __name__ == "__main__":
    a = parse(sys.argv[1:])
    if a.rebuild:
        run = json.load(open(a.rebuild[0]))
        write_best(run["shapes"], run["gpu"], a.rebuild[1],
                   f"scripts/tune_softmax.py --from {a.rebuild[0]}")
    else:
        main(a.out, a.min_n, a.rest_from, a.kinds, a.few_only)
