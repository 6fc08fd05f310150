"""Time every Triton rung's candidate configurations on the benchmark's shapes; keep the fastest.

Usage (on a GPU): python3 scripts/tune_triton.py OUT.json
Writes OUT.json (every timing, with commit, GPU, driver, versions and date) and OUT_best.json, the
table `triton` reads: copy it to src/phase24/softmax/triton/triton_configs.json
(scripts/gpu-session.sh's `tune-triton` step does). A candidate is timed only if it runs its own
rung's kernel on the shape (not a fallback) and its output matches the float64 reference.
       python3 scripts/tune_triton.py --from RUN.json BEST.json   rebuilds the table from a run.
"""

import dataclasses
import json
import sys

import torch

from phase24.core.provenance import stamp
from phase24.harness.bench import verify
from phase24.core.timing import copy_gbps
from phase24.core.timing import flushed_us as time_us
from phase24.softmax.spec import OP, bytes_moved as moved, shapes as standard_shapes


def bytes_moved(m, n, dtype):
    return moved((m, n), dtype)
from phase24.core.dtypes import TAG
from phase24.softmax.args import rows_class
from phase24.softmax.triton import (best, common, v1_rows, v2_split, v3_lagged, v4_ring,
                                    v5_whole_row)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def candidates(m: int, n: int, elem: int, sms: int) -> list[tuple[str, object]]:
    """(rung, configuration) pairs worth timing on (m, n)."""
    few = m < sms
    out = []
    if common.next_pow2(n) <= v1_rows.MAX_BLOCK_N:
        out += [("triton-v1", c) for c in v1_rows.candidates(n)]
    if n > v1_rows.MAX_BLOCK_N:
        out.append(("triton-v2", v2_split.default_config(m, n, sms)))
    if n >= (32768 if few else 65536):
        out += [("triton-v3", c) for c in v3_lagged.candidates(n, elem)]
    if n >= 32768:
        out += [("triton-v4", c) for c in v4_ring.candidates(n, elem)]
    if n >= 16384:
        out += [("triton-v5", c) for c in v5_whole_row.candidates(n, elem)]
    return out


def main(out_path: str) -> None:
    copy = copy_gbps()
    sms = common.num_sms(torch.device("cuda"))
    shapes = []
    for dtname, dtype in DTYPES.items():
        for m, n in standard_shapes():
            x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
            out = torch.empty_like(x)
            timings = []
            for name, config in candidates(m, n, x.element_size(), sms):
                rung = best.TUNED[name]
                plan = rung.decide(x, out, config)
                entry = {"rung": name, "config": dataclasses.asdict(config),
                         "runs": plan.describe()}
                if plan.launches[0].rung != name:
                    timings.append({**entry, "skipped": "falls back"})
                    continue
                rung.softmax_rows(x, out, config)
                why = verify(OP, out, (x,))
                if why:
                    timings.append({**entry, "skipped": f"wrong: {why}"})
                    continue
                us = time_us(lambda r=rung, c=config: r.softmax_rows(x, out, c), warmup_ms=5,
                             rep_ms=25)
                timings.append({**entry, "us": round(us, 2), "pct_copy": round(
                    100 * bytes_moved(m, n, dtype) / us / 1e3 / copy, 1)})
            timed = sorted((t for t in timings if "us" in t), key=lambda t: t["us"])
            shapes.append({"dtype": dtname, "M": m, "N": n, "best": timed[0] if timed else None,
                           "all": timings})
            print(f"{dtname:8s} {m:>8d}x{n:<7d} best {timed[0] if timed else None}", flush=True)
            del x, out
            torch.cuda.empty_cache()
    info = stamp()
    run = {"copy_gbps": round(copy, 1), "gpu": info["gpu"], "sms": sms, "driver": info["driver"],
           "versions": info["versions"], "commit": info["commit"], "date": info["date"],
           "timing": "core/timing.py flushed_us, warm-up 5 ms, ~25 ms of repetitions",
           "shapes": shapes}
    with open(out_path, "w") as f:
        json.dump(run, f, indent=1)
    write_best(run, out_path.replace(".json", "_best.json"), "scripts/tune_triton.py")


def write_best(run: dict, path: str, source: str) -> None:
    """The fastest configuration per (dtype, BLOCK_N, rows class), as best.table reads it; the
    16-bit types share theirs."""
    rows = []
    for e in run["shapes"]:
        if e["best"]:
            key = dict(block_n=common.next_pow2(e["N"]), rows=rows_class(e["M"]))
            pick = {"rung": e["best"]["rung"], "config": e["best"]["config"], "us": e["best"]["us"],
                    "shape": f"{e['M']}x{e['N']}"}
            tag = TAG[DTYPES[e["dtype"]]]
            rows.append({"dtype": tag, **key, **pick})
            if tag == "bf16":
                rows.append({"dtype": "f16", **key, **pick})
    with open(path, "w") as f:
        json.dump({"gpu": run["gpu"], "source": source, "commit": run["commit"],
                   "date": run["date"], "best": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if sys.argv[1] == "--from":  # rebuild the table from a recorded run (no GPU needed)
        with open(sys.argv[2]) as f:
            write_best(json.load(f), sys.argv[3], f"scripts/tune_triton.py --from {sys.argv[2]}")
    else:
        main(sys.argv[1])
