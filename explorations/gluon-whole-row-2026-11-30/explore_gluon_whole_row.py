"""Exploration: `whole_row_kernel` (src/phase24/softmax/gluon_kernels.py, Gluon: a whole row held
in shared memory, by one program or split across a group) against `triton`'s ring plans and
`triton` as it stands, on the long-row shapes. Each candidate is checked, then timed
(scripts/explore_common.py); the kernel that ran and its grid are printed too. Rows of up to
WHOLE_ROW_MAX_BYTES try the one-program plans; longer rows try splits into slices of 64 KB and
32 KB (a program holds two slices) with four chunk/warp shapes. Correctness with special values
and forced give-ups is tests/test_triton_softmax.py's test_gpu_whole_row_kernel.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_gluon_whole_row.py OUT.json [--only SUBSTRING]
"""
import json
import sys

import torch

from explore_common import LONG, Shape, record_plans, start
from phase24.softmax import triton_impls as T

SPLIT_SHAPES = [(8192, 8), (4096, 8), (4096, 4), (2048, 4)]  # (chunk, warps)
SLICE_BYTES = (64 * 1024, 32 * 1024)


def main():
    out_path, only, copy, sms, res = start(sys.argv)
    for spec in [s for s in LONG[:7] if only in s]:  # the bulk long-row shapes
        shape = Shape(spec, copy)
        x, n, elem = shape.x, shape.n, shape.x.element_size()
        shape.record("torch", lambda: torch.softmax(x, -1))
        shape.record("triton (as is)", lambda: T.triton_softmax(x), lambda: T.chosen_config(x))
        plans = [T.Plan("ring", seg=seg, num_warps=w, lag=lag, ahead=ahead)
                 for seg, w, lag, ahead in T.RING_CONFIGS[elem]]
        if n * elem <= T.WHOLE_ROW_MAX_BYTES:
            plans += [T.Plan("wholerow", seg=seg, num_warps=w) for seg, w in T.WHOLE_ROW_CONFIGS]
        else:
            plans += [T.Plan("wholerow", seg=seg, num_warps=w, split=n * elem // size)
                      for size in SLICE_BYTES for seg, w in SPLIT_SHAPES]
        record_plans(shape, plans, sms)
        res["shapes"].append(shape.row)
        json.dump(res, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
