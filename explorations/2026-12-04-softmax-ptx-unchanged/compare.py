"""compare.py NEW_DIR OLD_DIR: for each rung's PTX file in NEW_DIR, how many of its kernels have
the same name and the same instructions in OLD_DIR's file of the same rung."""

import re
import sys
from pathlib import Path


def kernels(path: Path) -> dict[str, str]:
    text = path.read_text()
    out = {}
    for m in re.finditer(r"^\.(?:visible )?\.?entry (\w+)\(", text, re.M):
        name = m.group(1)
        body = text[m.start():text.index("\n}\n", m.start()) + 3].replace(name, "K")
        out[name] = "\n".join(line for line in body.split("\n") if line.strip()
                              and not line.strip().startswith((".loc", "//", ".file")))
    return out


new_dir, old_dir = map(Path, sys.argv[1:3])
for new in sorted(new_dir.glob("*.ptx")):
    old = old_dir / new.name
    mine, theirs = kernels(new), kernels(old) if old.exists() else {}
    same = sum(1 for name, body in mine.items() if theirs.get(name) == body)
    print(f"{new.stem:24s} {same:4d} of {len(mine):4d} kernels the same")
