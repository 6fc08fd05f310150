"""A learner's .cu without a GPU: one launch of its float32 kernel counted by the emulator, on
the operation's counting shape (its learner_cuda.counted), printed as emulator/counts.py's
table. It runs in a process of its own, like the checks, so that a kernel that crashes or
hangs costs the counts and never the command; `check` prints it under the verdicts and
`bench --file` in place of times.

    python -m phase24.harness.counted softmax labs/starters/my_softmax.cu
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from phase24.core.layout import out


def show(op: str, path: Path, timeout: float) -> bool:
    """Print the counts of ``path``'s kernel (or one line saying why there are none)."""
    try:
        done = subprocess.run([sys.executable, "-m", "phase24.harness.counted", op, str(path)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        out(f"\ncounts: none, the counted launch took longer than {timeout:g} s")
        return False
    if done.stdout.strip():
        out("\n" + done.stdout.strip())
    else:
        last = (done.stderr.strip().splitlines() or [f"it ended with status {done.returncode}"])
        out(f"\ncounts: none ({last[-1]})")
    return done.returncode == 0


def main(argv: list[str]) -> int:
    from phase24.emulator.counts import table

    op, path = argv
    try:
        counts, ideal, what = importlib.import_module(f"phase24.{op}.learner_cuda").counted(
            Path(path))
    except ValueError as err:  # the emulator's fault, the ABI's complaint: one line
        print(f"counts: none ({str(err).strip().splitlines()[0]})")
        return 1
    print("\n".join(table(counts, ideal, what)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
