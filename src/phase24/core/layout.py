"""Plain-text tables that fit a terminal of 100 columns, printed a row at a time (flushed, so
a row is on the screen, or in the log, as soon as it is known)."""

from __future__ import annotations

import math
import textwrap

WIDTH = 100


def num(v: float | None, small: str = "{:.2f}") -> str:
    """A number in at most 8 characters: fixed point below 1000, scientific notation above."""
    if v is None:
        return "-"
    if math.isinf(v) or math.isnan(v):
        return str(v)
    return small.format(v) if abs(v) < 1000 else f"{v:.1e}"


def sci(v: float | None) -> str:
    return "-" if v is None else str(v) if math.isinf(v) or math.isnan(v) else f"{v:.1e}"


def out(line: str = "") -> None:
    print(line, flush=True)


class Columns:
    """Fixed-width columns; ``right`` names the right-aligned ones. The last column takes what
    is left of the width; a longer cell there continues on the next line, indented."""

    def __init__(self, heads: list[str], widths: list[int], right: set[str] = frozenset(),
                 width: int = WIDTH):
        self.heads, self.right, self.width = heads, right, width
        self.widths = [max(w, len(h)) for h, w in zip(heads, widths)]

    def line(self, cells: list[str]) -> str:
        parts = []
        for head, w, cell in zip(self.heads, self.widths, cells):
            parts.append(cell.rjust(w) if head in self.right else cell.ljust(w))
        return "  ".join(parts).rstrip()

    def header(self) -> None:
        out(self.line(self.heads))
        out(self.line(["-" * w for w in self.widths]))

    def row(self, cells: list[str], detail: str = "") -> None:
        """One row; ``detail`` (a failure's reason) goes on the line below, at most two lines."""
        out(self.line(cells))
        if detail:
            for text in textwrap.wrap(detail, self.width - 4, max_lines=2, placeholder=" ..."):
                out("    " + text)


def chunked(fixed: list[str], fixed_rows: list[list[str]], heads: list[str],
            rows: list[list[str]], width: int = WIDTH) -> list[str]:
    """A wide table as several tables, each repeating the ``fixed`` columns and taking as many
    of the other columns as fit in ``width``."""
    fw = [max([len(h)] + [len(r[i]) for r in fixed_rows]) for i, h in enumerate(fixed)]
    cw = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    room = width - sum(fw) - 2 * len(fw)
    groups, group, used = [], [], 0
    for i, w in enumerate(cw):
        if group and used + w + 2 > room:
            groups.append(group)
            group, used = [], 0
        group.append(i)
        used += w + 2
    groups.append(group)
    lines = []
    for g in groups:
        table = Columns(fixed + [heads[i] for i in g], fw + [cw[i] for i in g],
                        right=set(heads[i] for i in g), width=width)
        lines += [table.line(table.heads), table.line(["-" * w for w in table.widths])]
        lines += [table.line(f + [r[i] for i in g]) for f, r in zip(fixed_rows, rows)]
        lines.append("")
    return lines[:-1]


def say(text: str, indent: str = "") -> None:
    """A message of any length, wrapped to the width (continued lines indented 4 more)."""
    for line in text.splitlines() or [""]:
        for part in textwrap.wrap(line, WIDTH - len(indent), subsequent_indent="    ") or [""]:
            out(indent + part)
