"""The GEMM runs that compute-sanitizer watches (scripts/sanitize.py gemm): every CUDA rung on
sizes that are multiples of no tile, one row, K shorter than a step, operands off 16-byte
boundaries; every compiled configuration of v2 .. v11 forced on partial and whole tiles (v9 to
v11: on Hopper), v11's also on a grid of two blocks that walk nine tiles; every Triton rung on a
few shapes, and triton-v3's vector kernel (one row of A) forced.

``runs(mode)``: "full" (memcheck, synccheck), "small" (racecheck, slow on large tiles: fewer,
smaller shapes) or "triton"; each run is (name, fn, inputs(dtype) -> (a, b), dtypes).
"""

from __future__ import annotations

import torch

from phase24.gemm import IMPLEMENTATIONS
from phase24.gemm.args import entry
from phase24.gemm.cuda import launchers as ci
from phase24.gemm.cuda.configs import RECORDS, TUNABLE, compiled_for, configs, named, tile

DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def operands(m: int, n: int, k: int, sliced: bool = False):
    """inputs(dtype): fresh (m, k) and (k, n) operands; ``sliced``: each one column into a wider
    tensor (rows off 16-byte boundaries)."""
    def inputs(dtype):
        a = torch.randn(m, k + sliced, device="cuda").to(dtype)
        b = torch.randn(k, n + sliced, device="cuda").to(dtype)
        return (a[:, 1:], b[:, 1:]) if sliced else (a, b)
    inputs.shape = f"{m}x{n}x{k}{' sliced' if sliced else ''}"
    return inputs


def forced(kind: str, config: tuple, m: int, n: int, k: int):
    """Rung ``kind`` with ``config`` forced, every dtype."""
    fn = entry(f"cuda-{kind}{config}", lambda a, b, c: ci.KINDS[kind](a, b, c, config=config))
    return (f"forced_{kind}{config}", fn, operands(m, n, k),
            [d for d in DTYPES if compiled_for(kind, d)])


def on_two_sms(run: tuple) -> tuple:
    """A persistent rung's run (v11) with its grid cut to two blocks, so that each block walks
    several tiles and reuses every slot of its pipeline across them."""
    name, fn, inputs, dtypes = run

    def two(a, b, out=None):
        every, ci.sm_count = ci.sm_count, (lambda device=None: 2)
        try:
            return fn(a, b, out=out)
        finally:
            ci.sm_count = every
    return (f"{name}_on_2_sms", two, inputs, dtypes)


def served(name: str) -> list:
    """The dtypes implementation ``name`` takes (cuda-v8 to cuda-v11: the 16-bit ones;
    cuda: all three)."""
    rung = next((r for r in RECORDS.values() if r.name == name), None)  # None: cuda
    return [d for d in DTYPES if rung is None or rung.compiled_for(d)]


def cuda_runs(small: bool) -> list:
    cuda = {name: fn for name, fn in IMPLEMENTATIONS.items() if name.startswith("cuda")}
    shapes = ((1, 5, 3), (33, 65, 47), (20, 24, 40, True)) if small else \
        ((1, 5, 3), (33, 65, 47), (130, 136, 40), (3, 300, 257), (70, 72, 40, True))
    runs = [(name, fn, operands(*s), served(name)) for name, fn in cuda.items() for s in shapes]
    for kind in TUNABLE:  # each configuration on a partial tile beside a whole one
        for config in configs(kind):
            bm, bn = tile(kind, config)
            bk = named(kind, config).get("BK", 8)
            runs.append(forced(kind, config, bm + 3, bn + 5, 2 * bk + 3) if small else
                        forced(kind, config, 2 * bm + 3, 2 * bn + 5, 3 * bk + 3))
            if RECORDS[kind].persistent:
                runs.append(on_two_sms(forced(kind, config, 2 * bm + 3, 2 * bn + 5, 3 * bk + 3)))
    return runs


def triton_runs() -> list:
    from phase24.gemm import triton
    from phase24.gemm.triton import v3_splitk

    vector = v3_splitk.Config(1, 64, 32, 3, 4, 1)  # one row of A: v3's vector kernel, 3 chunks
    by_vector = entry("triton-v3(vector)", lambda a, b, c: v3_splitk.matmul_tiles(a, b, c, vector))
    return [(name, fn, operands(*s), DTYPES[:2]) for name, fn in triton.IMPLEMENTATIONS.items()
            for s in ((1, 96, 80), (33, 65, 129), (16, 512, 1024), (70, 72, 40, True))] + \
        [("triton-v3(vector)", by_vector, operands(1, 200, 301), DTYPES[:2])]


def runs(mode: str) -> list:
    return triton_runs() if mode == "triton" else cuda_runs(small=mode == "small")
