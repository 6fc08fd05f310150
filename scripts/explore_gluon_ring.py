"""Exploration: `ring_kernel` (src/phase24/softmax/gluon_kernels.py, Gluon: the lagged kernel with
its chunks in a shared-memory ring) over chunk sizes, ring depths and warps, against torch and
`triton` as it stands, on the long-row shapes. For each candidate: the lab's check against the
float64 reference on the whole output, then the bench's timing; the grid and whether any program
gave up waiting are printed too.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_gluon_ring.py OUT.json [--only SUBSTRING]
"""
import json
import sys
import time

import torch

from phase24.harness.bench import copy_gbps, time_us
from phase24.harness.check import compare
from phase24.softmax import softmax_reference
from phase24.softmax import triton_impls as T
from phase24.softmax.gluon_kernels import ring_kernel

LONG = ["bfloat16:8192x32768", "bfloat16:4096x65536", "bfloat16:2048x131072",
        "bfloat16:1024x262144", "float32:4096x65536", "float32:2048x131072",
        "float32:1024x262144", "bfloat16:64x262144", "float32:64x262144",
        "bfloat16:8x131072", "float32:8x131072"]
# (chunk, lag, ahead, warps) per element size: the ring plans of triton_impls.RING_CONFIGS and
# their neighbours. 16-bit rows use FOLD (as the dispatch does).
CONFIGS = {
    2: [(4096, 3, 1, 4), (4096, 4, 1, 4), (4096, 2, 2, 4), (4096, 2, 1, 4), (4096, 3, 1, 2)],
    4: [(4096, 3, 1, 4), (4096, 2, 2, 4), (2048, 2, 2, 4), (8192, 2, 2, 8)],
}


def make_launch(x, out, seg, lag, ahead, warps, sms):
    m, n = x.shape
    s = -(-n // seg)
    ws = torch.zeros(1 + 2 * m * s, dtype=torch.int64, device=x.device)
    args = (ws, m, n, x.stride(0), s, T.LAGGED_WAIT_NS)
    kw = dict(SEG=seg, VEC=16 // x.element_size(), LAG=lag, AHEAD=ahead,
              PBLOCK=max(32, T._next_pow2(s)), EVEN=n % seg == 0, FOLD=x.element_size() == 2,
              num_warps=warps)
    per_sm = T._resident_per_sm(ring_kernel, x, args, kw)
    grid = min(m * s, per_sm * sms)

    def run():
        ws.zero_()
        ring_kernel[(grid,)](x, out, *args, **kw)
        return out
    return run, grid, ws


def check_specials(sms):
    """The first config of each element size on rows with special values, N not a multiple of the
    chunk, then with a wait limit of 0 (programs give up and redo items): NaN pattern and values
    against the float64 reference."""
    for dtype in (torch.bfloat16, torch.float32):
        seg, lag, ahead, warps = CONFIGS[torch.empty(0, dtype=dtype).element_size()][0]
        for m, n in ((9, 262144), (300, 20008), (200, 4096 * 3 + 8)):
            x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
            x[0] = float("-inf"); x[1, n // 3] = float("nan")  # noqa: E702
            x[2, : n - 5] = float("-inf"); x[3, 5] = float("inf")  # noqa: E702
            x[4, : n // 2] = float("-inf"); x[4, -1] = float("nan")  # noqa: E702
            ref = softmax_reference(x)
            for wait in (T.LAGGED_WAIT_NS, 0):
                saved, T.LAGGED_WAIT_NS = T.LAGGED_WAIT_NS, wait
                out = torch.full_like(x, float("nan"))
                fn, grid, ws = make_launch(x, out, seg, lag, ahead, warps, sms)
                T.LAGGED_WAIT_NS = saved
                fn()
                torch.cuda.synchronize()
                nan_ok = torch.equal(out.isnan(), ref.isnan())
                fin = ~ref.isnan()
                bad = compare(out[5:], ref[5:], dtype)[3]
                print(f"specials {dtype} {m}x{n} wait {wait}: NaN pattern "
                      f"{'ok' if nan_ok else 'DIFFERS'}, finite rows {'ok' if not bad else bad}, "
                      f"gave up {int(ws[0].item())}, max err "
                      f"{(out.double()[fin] - ref[fin]).abs().max().item():.2g}", flush=True)


def main():
    out_path = sys.argv[1]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    copy = copy_gbps()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"copy {copy:.0f} GB/s, {sms} SMs", flush=True)
    res = {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(), "shapes": []}
    check_specials(sms)
    t_start = time.time()
    for spec in [s for s in LONG if only in s]:
        if time.time() - t_start > 300:
            print("time budget spent: stopping", flush=True)
            break
        dt, mn = spec.split(":")
        m, n = map(int, mn.split("x"))
        dtype = getattr(torch, dt)
        x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
        ref = softmax_reference(x)
        nbytes = 2 * x.numel() * x.element_size()
        row = {"dtype": dt, "M": m, "N": n, "runs": []}
        print(spec, flush=True)

        def record(label, fn, note=lambda: ""):
            try:
                y = fn()
                torch.cuda.synchronize()
                bad = compare(y, ref, dtype)[3]
            except Exception as exc:  # report, go on
                bad = f"{type(exc).__name__}: {str(exc)[:300]}"
            if bad:
                print(f"  {label:60s} WRONG/FAILED: {bad}", flush=True)
                row["runs"].append({"label": label, "wrong": bad})
                return
            us = time_us(fn, warmup_ms=10, rep_ms=40)
            pct = 100 * nbytes / us / 1e3 / copy
            print(f"  {label:60s} {us:9.2f} us {pct:5.1f}% {note()}", flush=True)
            row["runs"].append({"label": label, "us": us, "pct_copy": pct, "note": note()})

        record("torch", lambda: torch.softmax(x, -1))
        record("triton (as is)", lambda: T.triton_softmax(x))
        for seg, lag, ahead, warps in CONFIGS[x.element_size()]:
            if n // seg < 2:
                continue
            label = f"ring seg {seg} lag {lag} ahead {ahead} warps {warps}"
            try:
                fn, grid, ws = make_launch(x, torch.full_like(x, float("nan")), seg, lag, ahead,
                                           warps, sms)
            except Exception as exc:
                print(f"  {label:60s} BUILD FAILED: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            record(label, fn, lambda grid=grid, ws=ws: f"grid {grid} ({grid / sms:.0f}/SM)"
                   + (" GAVE UP" if int(ws[0].item()) else ""))
        res["shapes"].append(row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
