"""The softmax runs that compute-sanitizer watches (scripts/sanitize.py softmax): every CUDA rung
on short and long, aligned and unaligned rows, every configuration of v4 .. v10 on a row it holds
(nearly) full, rungs v1-v3 with few blocks walking several rows, and every Triton rung with each
configuration its tuner may pick.

``runs(mode)``: "full" (memcheck, synccheck), "small" (racecheck, slow on long rows: short rows
only) or "triton"; each run is (name, fn, inputs(dtype) -> tuple of GPU tensors, dtypes).
"""

from __future__ import annotations

import torch

from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.args import check_input, run_rows
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.cuda.configs import SLOTS

DTYPES = (torch.float32, torch.bfloat16, torch.float16)
# v1, v2 and v3 each walk rows block by block (v2 and v3 alternate block_max and block_sum).
FEW_BLOCKS = (("v1", ()), ("v2", ()), ("v3", (1,)))


def rows(m: int, n: int, sliced: bool = False):
    """inputs(dtype): an (m, n) input of fresh values; ``sliced``: a view one value in (unaligned)."""
    def inputs(dtype):
        x = torch.randn(m, n + sliced, device="cuda").mul(3).to(dtype)
        return (x[:, 1:] if sliced else x,)
    inputs.shape = f"{m}x{n}{' view[:,1:]' if sliced else ''}"
    return inputs


def forced(kind, config, m, n):
    """Rung ``kind`` with ``config`` forced, for the dtypes it is compiled for."""
    def fn(x):
        check_input(x, "forced")
        return run_rows(lambda a, b: ci.KINDS[kind](a, b, config=config), x)
    return (f"rows_{kind}{config}", fn, rows(m, n),
            [d for d in DTYPES if config in ci.configs(kind, d)])


def few_blocks(kind, config, m, n):
    """Rung ``kind`` on 2 blocks of 256 threads for more rows than that, so that each block walks
    several rows (its launcher gives every row a block of its own, up to 2^31 - 1 rows)."""
    def fn(x):
        check_input(x, "few blocks")
        return run_rows(lambda a, out: ci._run_rung(kind, config, a, out, 2, 256), x)
    return (f"cuda-{kind}(2 blocks)", fn, rows(m, n), DTYPES)


def cuda_runs(small: bool) -> list:
    cuda = {name: fn for name, fn in IMPLEMENTATIONS.items() if name.startswith("cuda")}
    if small:
        shapes = ((3, 1, False), (5, 130, False), (3, 257, True))
        runs = [(name, fn, rows(*s), DTYPES) for name, fn in cuda.items() for s in shapes]
        runs += [forced(kind, c, 3, min(100, ci.capacity(kind, c, torch.float32)))
                 for kind in SLOTS for c in ci.configs(kind, torch.float32)]
        return runs + [few_blocks(kind, config, 7, 300) for kind, config in FEW_BLOCKS]
    shapes = ((3, 1, False), (5, 130, False), (4, 1000, False), (2, 5000, False),
              (2, 40000, False), (3, 257, True))
    runs = [(name, fn, rows(*s), DTYPES) for name, fn in cuda.items() for s in shapes]
    # every configuration on a row it holds (nearly) full: (rows, values short of full)
    for kind, (m, short) in {"v4": (3, 1), "v5": (2, 0), "v6": (3, 1), "v7": (2, 0), "v8": (3, 4),
                             "v9": (2, 3), "v10": (2, 3)}.items():
        for cfg in ci.configs(kind, torch.float32):  # float32's list holds every configuration
            runs.append(forced(kind, cfg, m, ci.capacity(kind, cfg, torch.float32) - short))
    runs += [forced("v8", cfg, 2500, 40)  # more rows than clusters: the prefetch loop runs
             for cfg in ci.configs("v8", torch.float32)]
    return runs + [few_blocks(kind, config, 7, 1000) for kind, config in FEW_BLOCKS]


def triton_runs() -> list:
    """Every Triton rung, with its default and each configuration the tuner may pick, on a few
    rows that reach its kernel (each Gluon rung on whole 16-byte rows, so that it runs itself)."""
    from phase24.softmax.triton import RUNGS, v1_rows, v3_lagged, v4_ring, v5_whole_row

    def run_config(name, config):
        return lambda x: run_rows(lambda a, o: RUNGS[name].softmax_rows(a, o, config), x)

    runs = [(name, IMPLEMENTATIONS[name], rows(m, n), DTYPES)
            for name, (m, n) in (("triton-naive", (5, 1000)), ("triton-v1", (40, 100)),
                                 ("triton-v1", (3, 20000)), ("triton-v2", (3, 20000)),
                                 ("triton", (40, 100)), ("triton", (8, 131072)),
                                 ("triton", (160, 65536)))]
    for name, n, configs in (("triton-v1", 128, v1_rows.candidates(128)),
                             ("triton-v3", 65536, v3_lagged.candidates(65536, 4)),
                             ("triton-v4", 65536 + 8, v4_ring.CONFIGS[4] + v4_ring.CONFIGS[2]),
                             ("triton-v5", 32768, v5_whole_row.candidates(32768, 2)),
                             ("triton-v5", 65536 + 8, [v5_whole_row.Config(2048, 4, 4)])):
        runs += [(f"{name} {config}", run_config(name, config), rows(48, n), DTYPES[:2])
                 for config in configs]
    return runs + [("triton-v3", IMPLEMENTATIONS["triton-v3"], rows(8, 20001, True), DTYPES)]


def runs(mode: str) -> list:
    return triton_runs() if mode == "triton" else cuda_runs(small=mode == "small")
