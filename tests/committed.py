"""The learner's starter files as committed, for the tests that grade them.

A learner works in labs/starters/ (the pages say so): a test that read those files would fail
once the learner solves them. The tests grade a copy of the committed version instead.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def committed(relpath: str, folder: Path) -> Path:
    """A copy of ``relpath`` as committed at HEAD, written into ``folder`` under its own name;
    the working file where this is no git checkout (an unpacked archive holds the committed
    text)."""
    dest = Path(folder) / Path(relpath).name
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{relpath}"],
                          capture_output=True, timeout=60)
    dest.write_bytes(proc.stdout if proc.returncode == 0 else (ROOT / relpath).read_bytes())
    return dest


def committed_tree(relpath: str, folder: Path) -> Path:
    """A copy of the folder ``relpath`` as committed at HEAD, under ``folder``/``relpath``."""
    dest = Path(folder)
    proc = subprocess.run(f"git -C '{ROOT}' archive HEAD '{relpath}' | tar -x -C '{dest}'",
                          shell=True, capture_output=True, timeout=120)
    if proc.returncode != 0 or not (dest / relpath).exists():
        import shutil

        shutil.copytree(ROOT / relpath, dest / relpath, dirs_exist_ok=True)
    return dest / relpath
