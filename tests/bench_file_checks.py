"""What `bench OP --file F` must print on a GPU for a file that passed its check, for any
operation: the check's line, a table headed by the three times beside the baseline's and the
copy's, a row of numbers for every shape asked, and one run in the history with the best so far."""

from __future__ import annotations

import json
import re
from pathlib import Path


def assert_timed(out: str, dtype: str, shapes: tuple[str, ...], baseline: str,
                 history: Path) -> None:
    assert "passed, 0 failed" in out, out  # the check ran first
    head = next(line for line in out.splitlines() if line.startswith("dtype "))
    assert head.split() == ["dtype", "shape", "us", "gpu_us", "loop_us", baseline, "us", "copy",
                            "us", "vs", baseline, "%", "copy"], head
    for shape in shapes:
        row = next(line for line in out.splitlines()
                   if line.startswith(f"{dtype:<8}  {shape}"))
        cells = row.split()[2:]
        assert len(cells) == 7 and all(re.fullmatch(r"[\d.]+x?%?", c) for c in cells), row
        assert float(cells[0]) > 0 and float(cells[3]) > 0 and float(cells[4]) > 0, row
    lines = history.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["ok"] and "your best so far" in out, out
