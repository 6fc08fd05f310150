"""Exploration: `pipe_kernel` below, a branch-free form of
`lagged_kernel` that never waits: when a row's partials are not all published at the check, the
item is counted as missed (and its output left unwritten: this exploration only counts them).
Without control flow in its loop Triton's pipeliner takes the loop (num_stages > 1: the next
chunks are copied to shared memory asynchronously, cp.async). Checked with the lab's
harness.check.compare when nothing was missed, timed with the bench's time_us, beside torch.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_triton_pipe.py OUT.json
"""
import json
import sys
import time

import torch
import triton
import triton.language as tl

from phase24.harness.bench import copy_gbps, time_us
from phase24.harness.check import compare
from phase24.softmax import softmax_reference
from phase24.softmax.triton_impls import _cdiv, _next_pow2

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def pipe_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S,
                SEG: tl.constexpr, PBLOCK: tl.constexpr, STAGES: tl.constexpr):
    # lagged_kernel's step without its wait: part 2 writes only when its row's words were all
    # published at the check, and otherwise marks the item and counts it (ws after the marks).
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    total = M * S
    cols = tl.arange(0, SEG)
    pidx = tl.arange(0, PBLOCK)
    words = ws_ptr
    marks = ws_ptr + total
    x_prev = tl.zeros([SEG], x_ptr.dtype.element_ty)
    missed = 0
    for k in tl.range(0, tl.cdiv(total - pid, nprog) + 1, num_stages=STAGES):
        item = pid + k * nprog
        row = item // S
        offs = (item - row * S) * SEG + cols
        xk = tl.load(x_ptr + row.to(tl.int64) * stride_x + offs, mask=(offs < N) & (item < total),
                     other=float("-inf"))
        done = item - nprog
        drow = tl.maximum(done, 0) // S
        pptr = words + drow * S + tl.minimum(pidx, S - 1)
        p = tl.load(pptr, volatile=True)
        x = xk.to(tl.float32)
        m = tl.max(x, axis=0)
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        s = tl.sum(tl.exp2((x - m_safe) * LOG2E), axis=0)
        word = ((m.to(tl.int32, bitcast=True).to(tl.int64) << 32)
                | (s.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF))
        tl.store(words + item, word, mask=item < total)
        ok = tl.min((p != 0).to(tl.int32), axis=0) != 0
        pm = tl.where(pidx < S, (p >> 32).to(tl.int32).to(tl.float32, bitcast=True), float("-inf"))
        ps = tl.where(pidx < S, p.to(tl.int32).to(tl.float32, bitcast=True), 0.0)
        m_row = tl.max(pm, axis=0)
        inv = 1.0 / tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
        doffs = (done - drow * S) * SEG + cols
        y = tl.exp2((x_prev.to(tl.float32) - m_row) * LOG2E) * inv
        tl.store(out_ptr + drow.to(tl.int64) * N + doffs, y.to(out_ptr.dtype.element_ty),
                 mask=(doffs < N) & ok & (done >= 0))
        tl.store(marks + done, 1, mask=(~ok) & (done >= 0))
        missed += ((~ok) & (done >= 0)).to(tl.int32)
        x_prev = xk
    tl.store(ws_ptr + 2 * total + pid, missed)


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
        self.info = (f"{c.n_regs} regs, {c.n_spills} spills, {c.metadata.shared} B smem, "
                     f"{per_sm}/SM")

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
    for spec in SHAPES:
        dt, mn = spec.split(":")
        m, n = map(int, mn.split("x"))
        dtype = getattr(torch, dt)
        x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
        ref = softmax_reference(x)
        out = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row = {"dtype": dt, "M": m, "N": n, "runs": []}
        print(spec, flush=True)
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
