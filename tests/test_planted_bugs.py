"""scripts/planted_bugs.py's entries still apply: each one's text appears exactly once in the file
it names, so a bug can still be planted (moving code, such as the grouped tile order into
block_tile.cuh, must move the entry too). Which tests catch each bug is seen on the GPU."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_planted_bug_still_applies():
    done = subprocess.run([sys.executable, "scripts/planted_bugs.py", "--list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
