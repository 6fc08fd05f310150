"""``python -m phase24.bridge [--arch TARGET ...] [--jobs N]``: build every kernel file of the lab
in parallel, for this machine's GPUs (every target without a GPU), so later runs load from the
cache."""

from __future__ import annotations

import argparse
import sys

from phase24.bridge.nvcc import TARGETS
from phase24.bridge.prebuild import kernel_jobs, machine_targets, prebuild


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m phase24.bridge", description=__doc__)
    p.add_argument("--arch", nargs="+", choices=TARGETS,
                   help="targets to build (default: those of this machine's GPUs)")
    p.add_argument("--jobs", type=int, help="nvcc processes at a time (default: CPU cores)")
    args = p.parse_args(argv)
    from phase24.softmax.cuda_impls import HOPPER_ONLY

    results = prebuild(kernel_jobs(args.arch or machine_targets(), HOPPER_ONLY), args.jobs)
    failed = {job: r for job, r in results.items() if isinstance(r, Exception)}
    for (source, target), err in failed.items():
        print(f"{source.name} ({target}): {err}", file=sys.stderr)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
