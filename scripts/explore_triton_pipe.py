"""Exploration: `pipe_kernel` (scripts/explore_pipe_kernel.py), a branch-free form of
`lagged_kernel` that never waits: when a row's partials are not all published at the check, the
item is counted as missed (and its output left unwritten: this exploration only counts them).
Without control flow in its loop Triton's pipeliner takes the loop (num_stages > 1: the next
chunks are copied to shared memory asynchronously, cp.async). Checked with the lab's
harness.check.compare when nothing was missed, timed with the bench's time_us, beside torch.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_triton_pipe.py OUT.json
"""
import importlib.util
import json
import sys
import time
from pathlib import Path

import torch
import triton

from phase24.harness.bench import copy_gbps, time_us
from phase24.harness.check import compare
from phase24.softmax import softmax_reference
from phase24.softmax.triton_impls import _cdiv, _next_pow2

spec = importlib.util.spec_from_file_location(
    "explore_pipe_kernel", Path(__file__).with_name("explore_pipe_kernel.py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
pipe_kernel = triton.jit(mod.pipe_kernel)

SHAPES = ["float32:4096x65536", "bfloat16:4096x65536", "float32:1024x262144",
          "bfloat16:1024x262144", "bfloat16:8192x32768"]
CONFIGS = {"float32": [(2048, 4), (1024, 2), (4096, 8)],
           "bfloat16": [(2048, 4), (4096, 4), (4096, 8), (8192, 8)]}
STAGES = [1, 2, 3]


class Launch:
    def __init__(self, x, out, seg, warps, stages, maxnreg=None):
        from cuda.bindings import driver
        m, n = x.shape
        s = _cdiv(n, seg)
        self.total = m * s
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        self.ws = torch.zeros(2 * m * s + 64 * sms, dtype=torch.int64, device=x.device)
        self.x, self.out = x, out
        self.args = (self.ws, m, n, x.stride(0), s)
        self.kw = dict(SEG=seg, PBLOCK=max(16, _next_pow2(s)), STAGES=stages, num_warps=warps,
                       num_stages=stages)
        if maxnreg:
            self.kw["maxnreg"] = maxnreg
        c = pipe_kernel.warmup(x, out, *self.args, grid=(1,), **self.kw)
        c._init_handles()
        err, per_sm = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            driver.CUfunction(c.function), 32 * warps, c.metadata.shared)
        self.grid = min(m * s, per_sm * sms)
        self.info = f"{c.n_regs} regs, {c.n_spills} spills, {c.metadata.shared} B smem, {per_sm}/SM"

    def __call__(self):
        self.ws.zero_()
        pipe_kernel[(self.grid,)](self.x, self.out, *self.args, **self.kw)
        return self.out

    def missed(self):
        return int(self.ws[2 * self.total:2 * self.total + self.grid].sum().item())


def main():
    out_path = sys.argv[1]
    copy = copy_gbps()
    print(f"copy {copy:.0f} GB/s", flush=True)
    res = {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(), "shapes": []}
    t0 = time.time()
    for spec_ in SHAPES:
        dt, mn = spec_.split(":")
        m, n = map(int, mn.split("x"))
        dtype = getattr(torch, dt)
        x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
        ref = softmax_reference(x)
        out = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row = {"dtype": dt, "M": m, "N": n, "runs": []}
        print(spec_, flush=True)
        us = time_us(lambda: torch.softmax(x, -1), warmup_ms=10, rep_ms=40)
        print(f"  {'torch':44s} {us:9.2f} us {100 * nbytes / us / 1e3 / copy:5.1f}%", flush=True)
        for seg, warps in CONFIGS[dt]:
            for stages in STAGES:
                if time.time() - t0 > 420:
                    print("time budget spent", flush=True)
                    json.dump(res, open(out_path, "w"), indent=1)
                    return
                label = f"pipe seg {seg} warps {warps} stages {stages}"
                try:
                    run = Launch(x, out, seg, warps, stages)
                    out.fill_(float("nan"))
                    run()
                    torch.cuda.synchronize()
                    missed = run.missed()
                    bad = compare(out, ref, dtype)[3] if missed == 0 else ""
                except Exception as exc:
                    bad, run, missed = f"{type(exc).__name__}: {str(exc)[:160]}", None, -1
                if bad:
                    print(f"  {label:44s} WRONG/FAILED: {bad[:120]}", flush=True)
                    row["runs"].append({"label": label, "wrong": bad})
                    continue
                t = time_us(run, warmup_ms=10, rep_ms=40)
                missed = run.missed()  # of the last timed call
                pct = 100 * nbytes / t / 1e3 / copy
                print(f"  {label:44s} {t:9.2f} us {pct:5.1f}%  {run.info}, missed {missed} of "
                      f"{run.total}", flush=True)
                row["runs"].append({"label": label, "us": t, "pct_copy": pct, "info": run.info,
                                    "missed": missed, "items": run.total})
        res["shapes"].append(row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
