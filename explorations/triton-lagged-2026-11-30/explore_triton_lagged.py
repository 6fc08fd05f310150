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

from explore_common import LONG, Shape, record_plans, start
from phase24.softmax import triton_impls as T

# (chunk, warps, maxnreg) per dtype
CONFIGS = {
    "float32": [(2048, 4, 72), (2048, 4, 80), (1024, 2, 72), (1024, 2, 80), (4096, 8, 80),
                (2048, 4, 0)],
    "bfloat16": [(2048, 4, 72), (2048, 4, 80), (2048, 2, 0), (2048, 2, 128), (4096, 4, 0),
                 (4096, 4, 128), (1024, 2, 72), (1024, 1, 0), (4096, 8, 80), (8192, 8, 0)],
}


def main():
    out_path, only, copy, sms, res = start(sys.argv)
    quick = "--quick" in sys.argv
    t_start = time.time()
    for spec in [s for s in (LONG[:2] if quick else LONG) if only in s]:
        if time.time() - t_start > 400:
            print("time budget spent: stopping", flush=True)
            break
        shape = Shape(spec, copy, width=78)
        x, n = shape.x, shape.n
        shape.record("torch", lambda: torch.softmax(x, -1))
        if "--with-triton" in sys.argv:
            shape.record("triton (as is)", lambda: T.triton_softmax(x))
            shape.row["triton_plan"] = T.chosen_config(x)
            print("   ", shape.row["triton_plan"], flush=True)
        record_plans(shape, [T.Plan("lagged", seg=seg, num_warps=warps, maxnreg=maxnreg)
                             for seg, warps, maxnreg in CONFIGS[shape.dt] if n // seg >= 2], sms)
        res["shapes"].append(shape.row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
