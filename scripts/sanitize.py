"""Run an operation's kernels on small inputs under compute-sanitizer (memcheck, racecheck,
synccheck), each output compared with the float64 reference; exit non-zero on a wrong result.

Usage: compute-sanitizer --tool memcheck python3 scripts/sanitize.py OP [--small | --triton]
                         [--only NAME...]
  --small   the runs racecheck can afford (it is slow on long rows or large tiles)
  --triton  the Triton ladder's runs instead of the CUDA C ladder's
  --only    the runs of the named implementations or forced launchers (e.g. cuda-v10 rows_v10)
What runs is the operation's own list (phase24.<op>.sanitize.runs). The reference and the
comparison run on the CPU: torch's own GPU reductions would trip racecheck.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import torch

from phase24.harness.ops import OPERATIONS, get


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("op", choices=sorted(OPERATIONS))
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--small", action="store_const", dest="mode", const="small")
    mode.add_argument("--triton", action="store_const", dest="mode", const="triton")
    p.add_argument("--only", nargs="+", default=None)
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("sanitize: needs a CUDA GPU (compute-sanitizer watches the GPU's kernels)")
        return 1
    op = get(args.op)
    runs = importlib.import_module(f"phase24.{args.op}.sanitize").runs(args.mode or "full")
    if args.only:
        runs = [r for r in runs if any(r[0] == k or r[0].startswith(k + "(") for k in args.only)]
        if not runs:
            print(f"sanitize: no run is named {' or '.join(args.only)}")
            return 1
    torch.manual_seed(0)
    bad = 0
    for name, fn, inputs, dtypes in runs:
        for dtype in dtypes:
            xs = inputs(dtype)
            why = op.compare(fn(*xs).cpu(), op.reference(*[x.cpu() for x in xs]), dtype).why
            if why:
                bad += 1
                print(f"WRONG {name} {dtype} {inputs.shape}: {why}")
    torch.cuda.synchronize()
    print(f"sanitize {args.op}: {len(runs)} launches x dtypes, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
