"""Run every CUDA C softmax on small shapes, for compute-sanitizer (memcheck, racecheck, synccheck).

Usage: compute-sanitizer --tool memcheck python3 scripts/sanitize_softmax.py [--small] [--only NAME...]
(--small: short rows only, for racecheck, which is slow on long ones; --only: the runs of the
named implementations and launchers, e.g. --only cuda-v9 rows_v9.) Covers each rung, each dtype, aligned and unaligned rows, short/long rows and every v4/v5
configuration once (v4 .. v9); exits non-zero on a wrong result.
"""

import sys

import torch

from phase24.harness.check import compare
from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax import cuda_impls as ci
from phase24.softmax.args import check_input, run_rows


def forced(rows, config):
    def fn(x):
        check_input(x, "forced")
        return run_rows(lambda a, b: rows(a, b, config=config), x)
    return fn


def main() -> int:
    torch.manual_seed(0)
    if "--small" in sys.argv:  # racecheck is slow: every rung and configuration on short rows
        runs = [(name, fn, shape, sliced) for name, fn in IMPLEMENTATIONS.items()
                if name.startswith("cuda") for shape, sliced in (((3, 1), False), ((5, 130), False),
                                                                 ((3, 257), True))]
        runs += [(f"{r.__name__}{c}", forced(r, c), (3, min(100, c[0] * c[1] * 4)), False)
                 for r, cs in ((ci.rows_v4, ci.V4_CONFIGS), (ci.rows_v5, ci.V5_CONFIGS),
                               (ci.rows_v6, ci.V6_CONFIGS), (ci.rows_v7, ci.V7_CONFIGS),
                               (ci.rows_v8, ci.V8_CONFIGS), (ci.rows_v9, ci.V9_CONFIGS))
                 for c in cs]
        return check(runs)
    runs = []
    for name, fn in IMPLEMENTATIONS.items():
        if name.startswith("cuda"):
            for shape in ((3, 1), (5, 130), (4, 1000), (2, 5000), (2, 40000)):
                runs.append((name, fn, shape, False))
            runs.append((name, fn, (3, 257), True))
    for cfg in ci.V4_CONFIGS:
        n = cfg[0] * cfg[1] * 4
        runs.append((f"v4{cfg}", forced(ci.rows_v4, cfg), (3, n - 1), False))
    for cfg in ci.V5_CONFIGS + ci.V5_CONFIGS_F32:
        n = cfg[0] * cfg[1] * cfg[2] * 4
        runs.append((f"v5{cfg}", forced(ci.rows_v5, cfg), (2, n), False))
    for cfg in ci.V6_CONFIGS + ci.V6_CONFIGS_F32:
        n = cfg[0] * cfg[1] * 4
        runs.append((f"v6{cfg}", forced(ci.rows_v6, cfg), (3, n - 1), False))
    for cfg in ci.V7_CONFIGS:
        n = cfg[0] * cfg[1] * cfg[2] * 4
        runs.append((f"v7{cfg}", forced(ci.rows_v7, cfg), (2, n), False))
    for cfg in ci.V8_CONFIGS:  # more rows than one cluster: the prefetch loop runs
        n = cfg[0] * cfg[1] * 4 * 4
        runs.append((f"v8{cfg}", forced(ci.rows_v8, cfg), (3, n - 4), False))
        runs.append((f"v8{cfg}", forced(ci.rows_v8, cfg), (2500, 40), False))  # > 1 row a cluster
    for cfg in ci.V9_CONFIGS:  # full rows, so the shared-memory slots hold values
        n = cfg[0] * (cfg[1] + cfg[2]) * cfg[3] * 4
        runs.append((f"v9{cfg}", forced(ci.rows_v9, cfg), (2, n - 3), False))
    return check(runs)


FP32_ONLY = {f"v5{c}" for c in ci.V5_CONFIGS_F32} | {f"v6{c}" for c in ci.V6_CONFIGS_F32}


def check(runs) -> int:
    if "--only" in sys.argv:  # an implementation's runs, or a launcher's forced configurations
        names = sys.argv[sys.argv.index("--only") + 1:]
        runs = [r for r in runs if any(r[0] == k or r[0].startswith(k + "(") for k in names)]
    bad = 0
    for name, fn, (m, n), sliced in runs:
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            if name in FP32_ONLY and dtype != torch.float32:
                continue
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
