"""The learner's profile annotation (labs/starters/my_profile.md): `- field: text` lines, each
filled in a line or two; a field that still reads TODO is not filled. `dod` reads what is left;
`profile OP --file F` fills the first two fields of an untouched annotation."""

from __future__ import annotations

import re
from pathlib import Path

FIELDS = ("kernel", "profile", "bound", "evidence", "next change", "predicted effect",
          "what happened")
BOUNDS = ("memory", "compute", "latency", "memoria", "cómputo", "computo", "latencia")
LINE = re.compile(r"^(\s*[-*]\s*)([a-z ]+?)(\s*:)(.*)$", re.M | re.I)


def values(text: str) -> dict[str, str]:
    return {m.group(2).strip().lower(): m.group(4).strip() for m in LINE.finditer(text)}


def _todo(v: str | None) -> bool:
    return not v or v.upper().startswith("TODO")


def gaps(path: Path) -> list[str]:
    """What the annotation still lacks (empty when filled): the fields left at TODO or missing,
    a bound that names none of memory, compute, latency, evidence without a figure."""
    if not path.is_file():
        return [f"{path}: no such file"]
    v = values(path.read_text(errors="replace"))
    left = [f for f in FIELDS if _todo(v.get(f))]
    if "bound" not in left and not any(b in v["bound"].lower() for b in BOUNDS):
        left.append("bound (name memory, compute or latency)")
    if "evidence" not in left and not re.search(r"\d", v["evidence"]):
        left.append("evidence (the metric's value)")
    return left


def start(path: Path, kernel: str, summary: str) -> bool:
    """Fill `kernel` and `profile` of an annotation whose every field still reads TODO; False
    (and the file untouched) once the learner has written any field."""
    text = path.read_text(errors="replace")
    if not all(_todo(v) for v in values(text).values()):
        return False
    filled = {"kernel": kernel, "profile": summary}

    def put(m):
        name = m.group(2).strip().lower()
        if name not in filled:
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}{m.group(3)} {filled[name]}"

    path.write_text(LINE.sub(put, text))
    return True
