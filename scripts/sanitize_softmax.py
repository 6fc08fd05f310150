"""Run every CUDA C softmax on small shapes, for compute-sanitizer (memcheck, racecheck, synccheck).

Usage: compute-sanitizer --tool memcheck python3 scripts/sanitize_softmax.py [--small] [--only NAME...]
(--small: short rows only, for racecheck, which is slow on long ones; --only: the runs of the
named implementations and launchers, e.g. --only cuda-v10 rows_v10; --triton: instead, every
Triton rung and each configuration its tuner may pick, on small shapes.) Covers each CUDA rung, each
dtype, aligned and unaligned rows, short/long rows and every v4 .. v10 configuration once (in
each dtype it is compiled for); exits non-zero on a wrong result.
"""

import sys

import torch

from phase24.softmax.spec import compare
from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.cuda.configs import SLOTS
from phase24.softmax.args import check_input, run_rows


DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def forced(kind, config, shape):
    """A run of rung `kind` with `config` forced, for the dtypes it is compiled for."""
    def fn(x):
        check_input(x, "forced")
        return run_rows(lambda a, b: ci.KINDS[kind](a, b, config=config), x)
    return (f"rows_{kind}{config}", fn, shape, False,
            [d for d in DTYPES if config in ci.configs(kind, d)])


def few_blocks(kind, config, shape):
    """Rung `kind` on 2 blocks of 256 threads for more rows than that, so that each block walks
    several rows (its launcher gives every row a block of its own, up to 2^31 - 1 rows)."""
    def fn(x):
        check_input(x, "few blocks")
        return run_rows(lambda a, out: ci._run_rung(kind, config, a, out, 2, 256), x)
    return (f"cuda-{kind}(2 blocks)", fn, shape, False, DTYPES)


# v1, v2 and v3 each walk rows block by block (v2 and v3 alternate block_max and block_sum).
FEW_BLOCKS = (("v1", ()), ("v2", ()), ("v3", (1,)))


def triton_runs():
    """Every Triton rung, with its default and each configuration the tuner may pick, on a few
    rows that reach its kernel (each Gluon rung on whole 16-byte rows, so that it runs itself)."""
    from phase24.softmax.triton import RUNGS, v1_rows, v3_lagged, v4_ring, v5_whole_row

    def run_config(name, config):
        def fn(x):
            return run_rows(lambda a, o: RUNGS[name].softmax_rows(a, o, config), x)
        return fn

    runs = []
    for name, shape in (("triton-naive", (5, 1000)), ("triton-v1", (40, 100)),
                        ("triton-v1", (3, 20000)), ("triton-v2", (3, 20000)),
                        ("triton", (40, 100)), ("triton", (8, 131072)),
                        ("triton", (160, 65536))):
        runs.append((f"{name} {shape}", IMPLEMENTATIONS[name], shape, False, DTYPES))
    for name, n, configs in (("triton-v1", 128, v1_rows.candidates(128)),
                             ("triton-v3", 65536, v3_lagged.candidates(65536, 4)),
                             ("triton-v4", 65536 + 8, v4_ring.CONFIGS[4] + v4_ring.CONFIGS[2]),
                             ("triton-v5", 32768, v5_whole_row.candidates(32768, 2)),
                             ("triton-v5", 65536 + 8, [v5_whole_row.Config(2048, 4, 4)])):
        for config in configs:
            runs.append((f"{name} {config}", run_config(name, config), (48, n), False, DTYPES[:2]))
    runs.append(("triton-v3 unaligned", IMPLEMENTATIONS["triton-v3"], (8, 20001), True, DTYPES))
    return runs


def main() -> int:
    torch.manual_seed(0)
    if "--triton" in sys.argv:
        return check(triton_runs())
    if "--small" in sys.argv:  # racecheck is slow: every rung and configuration on short rows
        runs = [(name, fn, shape, sliced, DTYPES) for name, fn in IMPLEMENTATIONS.items()
                if name.startswith("cuda") for shape, sliced in (((3, 1), False), ((5, 130), False),
                                                                 ((3, 257), True))]
        runs += [forced(kind, c, (3, min(100, ci.capacity(kind, c, torch.float32))))
                 for kind in SLOTS for c in ci.configs(kind, torch.float32)]
        runs += [few_blocks(kind, config, (7, 300)) for kind, config in FEW_BLOCKS]
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
    for cfg in ci.configs("v8", torch.float32):  # more rows than clusters: the prefetch loop runs
        runs.append(forced("v8", cfg, (2500, 40)))
    runs += [few_blocks(kind, config, (7, 1000)) for kind, config in FEW_BLOCKS]
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
            # compared on the CPU: torch's own GPU reductions would trip racecheck
            why = compare(fn(x).cpu(), softmax_reference(x.cpu()), dtype)[3]
            if why:
                bad += 1
                print(f"WRONG {name} {dtype} {m}x{n}: {why}")
    torch.cuda.synchronize()
    print(f"sanitize_softmax: {len(runs)} launches x dtypes, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
