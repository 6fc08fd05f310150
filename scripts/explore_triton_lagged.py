"""Exploration: `lagged_kernel` (src/phase24/softmax/triton_kernels.py) in a range of chunk sizes,
warps and register caps (maxnreg), against torch (and with --with-triton `triton` as it stands),
on the long-row shapes (the bulk ones where `triton` is below 85% of copy, and two few-row
ones). For each candidate: the lab's own check first (harness.check.compare against the float64
reference, on the whole output), then the bench's timing (harness time_us); the grid (programs
resident per SM) and whether any program gave up waiting (the abort flag) are printed too.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_triton_lagged.py OUT.json [--quick]
                                                     [--with-triton] [--only SUBSTRING]
"""
import json
import sys
import time

import torch

from phase24.harness.bench import copy_gbps, time_us
from phase24.harness.check import compare
from phase24.softmax import softmax_reference
from phase24.softmax import triton_impls as T

LONG = ["float32:4096x65536", "float32:2048x131072", "float32:1024x262144",
        "bfloat16:8192x32768", "bfloat16:4096x65536", "bfloat16:2048x131072",
        "bfloat16:1024x262144", "float32:64x262144", "bfloat16:64x262144",
        "float32:8x131072", "bfloat16:8x131072"]
# (chunk, warps, maxnreg) per dtype
CONFIGS = {
    "float32": [(2048, 4, 72), (2048, 4, 80), (1024, 2, 72), (1024, 2, 80), (4096, 8, 80),
                (2048, 4, 0)],
    "bfloat16": [(2048, 4, 72), (2048, 4, 80), (2048, 2, 0), (2048, 2, 128), (4096, 4, 0),
                 (4096, 4, 128), (1024, 2, 72), (1024, 1, 0), (4096, 8, 80), (8192, 8, 0)],
}


def launcher_workspace(x, plan):
    for key, launcher in T._LAUNCHERS.items():
        if key[3] == x.shape and key[-1] == plan:
            for steps, ws in launcher.bound.values():
                return steps[0].grid[0], ws
    return None, None


def main():
    out_path = sys.argv[1]
    quick = "--quick" in sys.argv
    copy = copy_gbps()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"copy {copy:.0f} GB/s, {sms} SMs", flush=True)
    res = {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(), "shapes": []}
    t_start = time.time()
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for spec in [s for s in (LONG[:2] if quick else LONG) if only in s]:
        if time.time() - t_start > 400:
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

        def record(label, fn, extra=""):
            try:
                y = fn()
                torch.cuda.synchronize()
                bad = compare(y, ref, dtype)[3]
            except Exception as exc:  # report, go on
                bad = f"{type(exc).__name__}: {str(exc)[:200]}"
            if bad:
                print(f"  {label:78s} WRONG/FAILED: {bad}", flush=True)
                row["runs"].append({"label": label, "wrong": bad})
                return
            us = time_us(fn, warmup_ms=10, rep_ms=40)
            pct = 100 * nbytes / us / 1e3 / copy
            note = extra() if callable(extra) else extra
            print(f"  {label:78s} {us:9.2f} us {pct:5.1f}% {note}", flush=True)
            row["runs"].append({"label": label, "us": us, "pct_copy": pct, "note": note})

        record("torch", lambda: torch.softmax(x, -1))
        if "--with-triton" in sys.argv:
            record("triton (as is)", lambda: T.triton_softmax(x))
            row["triton_plan"] = T.chosen_config(x)
            print("   ", row["triton_plan"], flush=True)
        for seg, warps, maxnreg in CONFIGS[dt]:
            if n // seg < 2:
                continue
            plan = T.Plan("lagged", seg=seg, num_warps=warps, maxnreg=maxnreg)

            def note(plan=plan):
                grid, ws = launcher_workspace(x, plan)
                if ws is None:
                    return ""
                gave_up = int(ws[0].item())
                return f"grid {grid} ({grid / sms:.1f}/SM){' GAVE UP' if gave_up else ''}"
            record(plan.describe(n), lambda plan=plan: T.triton_softmax(x, plan=plan), note)
        res["shapes"].append(row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
