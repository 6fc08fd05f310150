"""Exploration: `ring_kernel` (src/phase24/softmax/gluon_kernels.py, Gluon: the lagged kernel with
its chunks in a shared-memory ring) over chunk sizes, ring depths and warps, through `triton`'s
own ring plans, against torch and `triton` as it stands, on the long-row shapes. Each candidate
is checked, then timed (scripts/explore_common.py); the kernel that ran, its grid and whether any
program gave up waiting are printed too. Correctness with special values and forced give-ups is
tests/test_triton_softmax.py's test_gpu_ring_kernel.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_gluon_ring.py OUT.json [--only SUBSTRING]
"""
import json
import sys
import time

import torch

from explore_common import LONG, Shape, record_plans, start
from phase24.softmax import triton_impls as T

# (chunk, lag, ahead, warps) per element size: the ring plans of triton_impls.RING_CONFIGS and
# their neighbours.
CONFIGS = {
    2: [(4096, 3, 1, 4), (4096, 4, 1, 4), (4096, 2, 2, 4), (4096, 2, 1, 4), (4096, 3, 1, 2)],
    4: [(4096, 3, 1, 4), (4096, 2, 2, 4), (2048, 2, 2, 4), (8192, 2, 2, 8)],
}


def main():
    out_path, only, copy, sms, res = start(sys.argv)
    t_start = time.time()
    for spec in [s for s in LONG if only in s]:
        if time.time() - t_start > 300:
            print("time budget spent: stopping", flush=True)
            break
        shape = Shape(spec, copy)
        x = shape.x
        shape.record("torch", lambda: torch.softmax(x, -1))
        shape.record("triton (as is)", lambda: T.triton_softmax(x))
        record_plans(shape, [T.Plan("ring", seg=seg, num_warps=warps, lag=lag, ahead=ahead)
                             for seg, lag, ahead, warps in CONFIGS[x.element_size()]
                             if shape.n // seg >= 2], sms)
        res["shapes"].append(shape.row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
