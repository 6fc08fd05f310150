"""`tune OP`: tune the operation's ladders on this GPU and put this GPU's tables into the ladders'
table files, beside the other GPUs' (core/tuned.py), so that `cuda` and `triton` pick this GPU's
fastest rung and configuration per shape from then on.

The tuning is scripts/tune.py's (one small script outside the library, as the ladders' own
tables were made): each ladder is tuned as its own command in a child process, as one would type
it, its timings written under out/tune/, then its table put into the package with
``scripts/tune.py OP LADDER --from RUN BEST``. A ladder that fails to tune leaves its table as it
was. Without a GPU there is nothing to time: one line, status 1.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from phase24.core.layout import out
from phase24.core.provenance import REPO

SCRIPT = REPO / "scripts" / "tune.py"
LADDERS = ("cuda", "triton")
def table(op: str, ladder: str) -> Path:
    """The ladder's table file (its tuning module's TABLE)."""
    import importlib

    return Path(importlib.import_module(f"phase24.{op}.{ladder}.tuning").TABLE)


def run(args) -> int:
    import torch

    if not torch.cuda.is_available():
        out(f"No GPU here: tuning times {args.op}'s rungs on an NVIDIA GPU (this machine reads "
            "the committed tables of the GPUs they were measured on)")
        return 0  # as bench and profile do on a CPU: what is skipped, and why
    gpu = torch.cuda.get_device_name()
    folder = Path(args.out) / "tune"
    folder.mkdir(parents=True, exist_ok=True)
    failed = []
    for ladder in args.ladder or LADDERS:
        timings = folder / f"{args.op}-{ladder}.json"
        out(f"tuning {args.op} {ladder} on {gpu} (timings: {timings})")
        steps = [[str(SCRIPT), args.op, ladder, str(timings)],
                 [str(SCRIPT), args.op, ladder, "--from", str(timings),
                  str(table(args.op, ladder))]]
        if any(subprocess.run([sys.executable, *step], cwd=REPO).returncode for step in steps):
            failed.append(ladder)
            continue
        out(f"{table(args.op, ladder).relative_to(REPO)}: {gpu}'s table written beside the "
            "other GPUs'")
    if failed:
        out(f"not tuned: {', '.join(failed)} (its table is as it was)")
    return 1 if failed else 0


def add_parser(sub, op_help: str):
    """The `tune` command's arguments, on the CLI's subparsers."""
    s = sub.add_parser("tune", help="tune the operation's ladders on this GPU (its own tables)",
                       description=__doc__.splitlines()[0])
    from phase24.harness.ops import OPERATIONS

    s.add_argument("op", choices=sorted(OPERATIONS), help=op_help)
    s.add_argument("--ladder", nargs="+", choices=LADDERS,
                   help="only these ladders (default: both)")
    s.add_argument("--out", default="out", help="where the timings go (default: out/)")
    s.set_defaults(fn=run)
    return s
