"""Run every CUDA C softmax on small shapes, for compute-sanitizer (memcheck, racecheck, synccheck).

Usage: compute-sanitizer --tool memcheck python3 scripts/sanitize_softmax.py [--small] [--only NAME...]
(--small: short rows only, for racecheck, which is slow on long ones; --only: the runs of the
named implementations and launchers, e.g. --only cuda-v10 rows_v10; --gluon: instead, the Gluon
kernels of `triton` (whole-row, one program and split, and ring plans) on 40 long rows.) Covers each rung, each
dtype, aligned and unaligned rows, short/long rows and every v4 .. v10 configuration once (in
each dtype it is compiled for); exits non-zero on a wrong result.
"""

import sys

import torch

from phase24.harness.check import compare
from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax import cuda_impls as ci
from phase24.softmax.args import check_input, run_rows


DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def forced(kind, config, shape):
    """A run of rung `kind` with `config` forced, for the dtypes it is compiled for."""
    def fn(x):
        check_input(x, "forced")
        return run_rows(lambda a, b: ci.KINDS[kind](a, b, config=config), x)
    return (f"rows_{kind}{config}", fn, shape, False,
            [d for d in DTYPES if config in ci.configs(kind, d)])


def gluon_runs():
    """triton's Gluon kernels, each plan forced, on 40 rows (one wave of programs or less)."""
    from phase24.softmax import triton_impls as T

    def run_plan(plan):
        def fn(x):
            out = torch.empty_like(x)
            T.softmax_rows(x, out, plan)
            return out
        return fn

    plans = [((40, 32768), T.Plan("wholerow", seg=8192, num_warps=8)),
             ((40, 65536 + 8), T.Plan("wholerow", seg=2048, num_warps=4, split=4)),
             ((40, 65536 + 8), T.Plan("ring", seg=4096, num_warps=4, lag=3, ahead=1))]
    return [(plan.describe(shape[1]), run_plan(plan), shape, False, DTYPES[:2])
            for shape, plan in plans]


def main() -> int:
    torch.manual_seed(0)
    if "--gluon" in sys.argv:
        return check(gluon_runs())
    if "--small" in sys.argv:  # racecheck is slow: every rung and configuration on short rows
        runs = [(name, fn, shape, sliced, DTYPES) for name, fn in IMPLEMENTATIONS.items()
                if name.startswith("cuda") for shape, sliced in (((3, 1), False), ((5, 130), False),
                                                                 ((3, 257), True))]
        runs += [forced(kind, c, (3, min(100, ci.capacity(kind, c, torch.float32))))
                 for kind in ci.SLOTS for c in ci.configs(kind, torch.float32)]
        return check(runs)
    runs = []
    for name, fn in IMPLEMENTATIONS.items():
        if name.startswith("cuda"):
            for shape in ((3, 1), (5, 130), (4, 1000), (2, 5000), (2, 40000)):
                runs.append((name, fn, shape, False, DTYPES))
            runs.append((name, fn, (3, 257), True, DTYPES))
    # every configuration on a row it holds (nearly) full: (rows, values short of full)
    for kind, (m, short) in {"v4": (3, 1), "v5": (2, 0), "v6": (3, 1), "v7": (2, 0), "v8": (3, 4),
                             "v9": (2, 3), "v10": (2, 3)}.items():
        for cfg in ci.configs(kind, torch.float32):  # float32's list holds every configuration
            n = ci.capacity(kind, cfg, torch.float32) - short
            runs.append(forced(kind, cfg, (m, n)))
    for cfg in ci.V8_CONFIGS:  # more rows than clusters: the prefetch loop runs
        runs.append(forced("v8", cfg, (2500, 40)))
    return check(runs)


def check(runs) -> int:
    if "--only" in sys.argv:  # an implementation's runs, or a launcher's forced configurations
        names = sys.argv[sys.argv.index("--only") + 1:]
        runs = [r for r in runs if any(r[0] == k or r[0].startswith(k + "(") for k in names)]
    bad = 0
    for name, fn, (m, n), sliced, dtypes in runs:
        for dtype in dtypes:
            x = torch.randn(m, n + sliced, device="cuda").mul(3).to(dtype)
            x = x[:, 1:] if sliced else x
            why = compare(fn(x), softmax_reference(x), dtype)[3]
            if why:
                bad += 1
                print(f"WRONG {name} {dtype} {m}x{n}: {why}")
    torch.cuda.synchronize()
    print(f"sanitize_softmax: {len(runs)} launches x dtypes, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
