"""Time every candidate configuration of one ladder of one operation on the benchmark's shapes;
keep the fastest per shape (on a GPU). The ladder's `tuning` module says what to try.

    python3 scripts/tune.py softmax cuda OUT.json     # or: softmax triton, gemm cuda|triton
writes OUT.json (every timing, with commit, GPU, driver, versions and date) and OUT_best.json,
this GPU's table as the ladder's entry reads it; `--from OUT.json TABLE` puts it into the
ladder's table file (softmax/cuda/tuned_configs.json, softmax/triton/triton_configs.json,
gemm/cuda/tuned_configs.json, gemm/triton/triton_configs.json), beside the other GPUs' tables
(core/tuned.py; `python -m phase24 tune OP` and scripts/gpu-session.sh's tune steps do).
    ... --min-n N --rest-from OLD.json   times only rows of N values or more, the other shapes
copied from OLD.json where it has them (each marked with its run); --few-only --rest-from
OLD.json times only the operation's few-row shapes; --only KIND ... times only those rungs;
--dtype D ... times only those dtypes (with --rest-from, the others' shapes are copied);
--only with --rest-from keeps the other rungs' timings of each shape timed (the best of both).
    python3 scripts/tune.py softmax cuda --from RUN.json BEST.json   rebuilds a table from a
recorded run (no GPU), as the run's GPU's table in BEST.json (the other GPUs' stay).
Each candidate runs once and is checked on a few rows against float64 before it is timed
(core/timing.py flushed_us, warm-up 5 ms, ~25 ms of repetitions); a wrong one is recorded as such.
"""

import argparse
import importlib
import json
import sys

import torch

LADDERS = {("softmax", "cuda"): "phase24.softmax.cuda.tuning",
           ("softmax", "triton"): "phase24.softmax.triton.tuning",
           ("gemm", "cuda"): "phase24.gemm.cuda.tuning",
           ("gemm", "triton"): "phase24.gemm.triton.tuning"}


def tune(op, ladder, out_path: str, min_n: int, rest_from: str | None, only, few_only: bool,
         dtypes=None):
    from phase24.core.dtypes import DTYPES
    from phase24.core.provenance import stamp
    from phase24.core.timing import copy_gbps, flushed_us
    from phase24.harness.bench import verify

    copy = copy_gbps()
    baseline_name, baseline = next(iter(op.implementations().items()))
    fields = op.shape_fields  # ("M", "N") for softmax, ("M", "N", "K") for gemm
    rest = {}
    if rest_from:
        old = read_run(rest_from, "--rest-from")
        rest = {(e["dtype"], *(e[f] for f in fields)):  # an entry copied before keeps its origin
                {"from": f"{rest_from} (commit {old.get('commit', '?')})", **e}
                for e in old["shapes"]}
    shapes = []
    run = {"copy_gbps": round(copy, 1), **stamp(), "timing": "core/timing.py flushed_us, "
           "warm-up 5 ms, ~25 ms of repetitions", "only": only or "all", "shapes": shapes}
    jobs = [(dtname, shape) for dtname in op.bench_dtypes for shape in op.shapes()]
    for done, (dtname, shape) in enumerate(jobs, 1):
        if (dtypes and dtname not in dtypes) or shape[1] < min_n or \
                (few_only and shape not in op.few_shapes):  # not timed: copied from OLD.json
            if (dtname, *shape) in rest:                   # where it has the shape
                shapes.append(rest[(dtname, *shape)])
            continue
        inputs = op.make_inputs(shape, DTYPES[dtname])
        out = torch.empty_like(baseline(*inputs))
        timings = []
        for fields_, fn in ladder.candidates(*inputs, only=only):
            if fn is None:
                timings.append({**fields_, "skipped": "falls back"})
                continue
            try:
                fn(*inputs, out)
                why = verify(op, out, inputs)
                us = None if why else flushed_us(lambda: fn(*inputs, out), warmup_ms=5,
                                                 rep_ms=25)
            except Exception as err:  # e.g. a cluster size this GPU refuses: report, go on
                why = f"{type(err).__name__}: {err}"
            if why:
                timings.append({**fields_, "skipped": f"wrong or refused: {why}"})
                continue
            timings.append({**fields_, "us": round(us, 2), "pct_copy": round(
                100 * op.bytes_moved(shape, inputs[0].dtype) / us / 1e3 / copy, 1)})
        if only and (dtname, *shape) in rest:  # the other rungs' timings, from OLD.json
            kept = rest[(dtname, *shape)]
            timings += [{**t, "from": kept["from"]} for t in kept.get("all", [])
                        if _rung(t) and _rung(t) not in only]
        base = flushed_us(lambda: baseline(*inputs), warmup_ms=5, rep_ms=25)
        timed = sorted((t for t in timings if "us" in t), key=lambda t: t["us"])
        shapes.append({"dtype": dtname, **dict(zip(fields, shape)),
                       f"{baseline_name}_us": round(base, 2),
                       "best": timed[0] if timed else None, "all": timings})
        print(f"{dtname:8s} {'x'.join(map(str, shape)):>18s} {baseline_name} {base:8.1f} us"
              f"  best {timed[0] if timed else None}", flush=True)
        inputs = out = None  # freed before the next shape
        torch.cuda.empty_cache()
        # a run cut short keeps the shapes it timed, and OLD.json's for those it did not
        # reach: --from makes a whole table of it
        save({**run, "shapes": shapes + [rest[(d, *sh)] for d, sh in jobs[done:]
                                         if (d, *sh) in rest]}, out_path)
    return save(run, out_path)


def _rung(timing: dict) -> str | None:
    """The rung a timing is of: "kind" in the CUDA ladders' records, "rung" in Triton GEMM's."""
    return timing.get("kind") or timing.get("rung")


def save(run: dict, out_path: str) -> dict:
    with open(out_path, "w") as f:
        json.dump(run, f, indent=1)
    return run


def read_run(path: str, option: str) -> dict:
    """A recorded tuning run; SystemExit with one line if it cannot be one."""
    try:
        with open(path) as f:
            run = json.load(f)
    except OSError as err:
        sys.exit(f"{option} {path}: {err.strerror}")
    except ValueError as err:
        sys.exit(f"{option} {path}: not JSON ({err})")
    if not isinstance(run, dict) or not isinstance(run.get("shapes"), list):
        sys.exit(f"{option} {path}: not a run of this script (it has no list of shapes)")
    return run


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("op", help="the operation (softmax, gemm)")
    p.add_argument("ladder", help="its ladder (cuda, triton)")
    p.add_argument("out", nargs="?", help="OUT.json (OUT_best.json is written beside it)")
    p.add_argument("--from", dest="rebuild", nargs=2, metavar=("RUN.json", "BEST.json"),
                   help="rebuild BEST.json from a recorded run (no GPU)")
    p.add_argument("--min-n", type=int, default=0, help="time only shapes whose N is this or more")
    p.add_argument("--few-only", action="store_true", help="time only the few-row shapes")
    p.add_argument("--rest-from", metavar="OLD.json", help="where the shapes not timed come from")
    p.add_argument("--only", nargs="+", help="time only these rungs")
    p.add_argument("--dtype", nargs="+", choices=("float32", "float16", "bfloat16"),
                   help="time only these dtypes (default: the operation's benchmark dtypes)")
    a = p.parse_args(argv)
    if (a.op, a.ladder) not in LADDERS:
        p.error(f"no ladder {a.op} {a.ladder}: the tunable ladders are "
                + ", ".join(" ".join(k) for k in LADDERS))
    if (a.out is None) == (a.rebuild is None):
        p.error("give OUT.json, or --from RUN.json BEST.json")
    if (a.min_n or a.few_only) and not a.rest_from:
        p.error("--min-n and --few-only copy the shapes they skip from --rest-from OLD.json")
    if a.out and not torch.cuda.is_available():
        p.error("timing needs an NVIDIA GPU, and there is none here (--from RUN.json BEST.json "
                "rebuilds a table without one)")
    return a


if __name__ == "__main__":
    a = parse(sys.argv[1:])
    ladder = importlib.import_module(LADDERS[(a.op, a.ladder)])
    source = f"scripts/tune.py {a.op} {a.ladder}"
    if a.rebuild:
        ladder.write_table(read_run(a.rebuild[0], "--from"), a.rebuild[1],
                           f"{source} --from {a.rebuild[0]}")
    else:
        from phase24.harness.ops import get

        run = tune(get(a.op), ladder, a.out, a.min_n, a.rest_from, a.only, a.few_only, a.dtype)
        how = [f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
               for k, v in (("only", a.only), ("dtype", a.dtype), ("min_n", a.min_n),
                            ("few_only", a.few_only), ("rest_from", a.rest_from)) if v]
        ladder.write_table(run, a.out.replace(".json", "_best.json"),
                           " ".join([source, *how]).replace("--few-only True", "--few-only"))
