"""A/B on the H200: what does the ladder's exchange cost on long rows?

The ring and whole-row kernels as they were at ea373a8 (old_gluon_kernels.py, a frozen copy: one
word a partial with the launch's parity, timeouts and a redo path, plain launch) against
triton-v4 and triton-v5 (two epoch-tagged words a partial, a cooperative launch, a trap after a
deadline), each new one also launched without the cooperative attribute. Same shapes, same
timing (harness/bench.py time_us, warm-up 5 ms, 50 ms of repetitions), one run.
Usage: PYTHONPATH=src python3 explorations/2026-12-01-exchange-cost/ab.py
"""

import dataclasses
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import old_gluon_kernels as old  # noqa: E402

from phase24.harness.bench import bytes_moved, copy_gbps, time_us, verify  # noqa: E402
from phase24.softmax.triton_ladder import common, v4_ring, v5_whole_row  # noqa: E402
from phase24.softmax.triton_ladder.common import cdiv, next_pow2  # noqa: E402


def old_ring(x, out, seg=4096, warps=4, lag=3, ahead=1):
    m, n = x.shape
    elem = x.element_size()
    s = cdiv(n, seg)
    ws = torch.zeros(3 + 2 * m * s, dtype=torch.int64, device="cuda")
    args = (ws, m, n, x.stride(0), s, 10**7)
    kw = dict(SEG=seg, VEC=16 // elem, LAG=lag, AHEAD=ahead, PBLOCK=max(32, next_pow2(s)),
              EVEN=n % seg == 0, FOLD=elem == 2, GROUP=1, num_warps=warps)
    grid = min(m * s, resident(old.ring_kernel, x, out, args, kw) * 132)
    return lambda: old.ring_kernel[(grid,)](x, out, *args, **kw)


def old_whole(x, out, seg, warps, split):
    m, n = x.shape
    elem = x.element_size()
    vec = 16 // elem
    nch = cdiv(cdiv(n, split), seg)
    ws = torch.zeros(3 + m * split, dtype=torch.int64, device="cuda")
    args = (ws, m, n, x.stride(0), 10**7)
    kw = dict(VEC=vec, R=seg // (32 * warps * vec), NCH=nch, SPLIT=split,
              EVEN=n == split * nch * seg, FOLD=elem == 2, num_warps=warps)
    groups = resident(old.whole_row_kernel, x, out, args, kw) * 132 // split
    return lambda: old.whole_row_kernel[(min(m, groups) * split,)](x, out, *args, **kw)


def resident(fn, x, out, args, kw):
    from cuda.bindings import driver
    c = fn.warmup(x, out, *args, grid=(1,), **kw)
    c._init_handles()
    err, k = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        driver.CUfunction(c.function), 32 * kw["num_warps"], c.metadata.shared)
    return k


def new(rung, x, out, config, coop=True):
    plan = rung.plan(x, out, config)
    if not coop:
        launch = plan.launches[0]
        meta = {k: v for k, v in launch.meta.items() if k != "launch_cooperative_grid"}
        plan = dataclasses.replace(plan, launches=(dataclasses.replace(launch, meta=meta),))
    return lambda: common.run(plan, x, out)


def main():
    copy = copy_gbps()
    print(f"copy {copy:.0f} GB/s")
    for dtype in (torch.bfloat16, torch.float32):
        elem = torch.empty(0, dtype=dtype).element_size()
        for m, n in ((4096, 65536), (2048, 131072), (1024, 262144)):
            x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
            out = torch.empty_like(x)
            split = n * elem // (32 * 1024)
            wr = v5_whole_row.Config(4096, 4, split)
            ring = v4_ring.CONFIGS[elem][0]
            variants = {
                "old ring": old_ring(x, out),
                "v4 ring": new(v4_ring, x, out, ring),
                "v4 ring, not cooperative": new(v4_ring, x, out, ring, coop=False),
                "old whole-row split": old_whole(x, out, 4096, 4, split),
                "v5 whole-row split": new(v5_whole_row, x, out, wr),
                "v5 whole-row split, not cooperative": new(v5_whole_row, x, out, wr, coop=False),
            }
            for name, fn in variants.items():
                fn()
                why = verify(out, x)
                us = time_us(fn, warmup_ms=5, rep_ms=50)
                us2 = time_us(fn, warmup_ms=5, rep_ms=50)
                pct = 100 * bytes_moved(m, n, dtype) / min(us, us2) / 1e3 / copy
                print(f"{str(dtype)[6:]:9s} {m}x{n:<7d} {name:38s} {us:8.1f} {us2:8.1f} us "
                      f"{pct:5.1f}% {why or 'ok'}", flush=True)
            del x, out
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
