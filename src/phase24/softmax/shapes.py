"""The benchmark's shapes: the bulk sweep (2^28 values in rows of 128 to 262144) and the few-row
shapes where a caller's time per call counts; how a shape is written on the command line."""

from __future__ import annotations

BULK_ELEMENTS = 2**28
BULK_NS = tuple(2**k for k in range(7, 19))  # 128 ... 262144
FEW_ROW_SHAPES = ((1, 32768), (8, 131072), (64, 32768), (64, 262144))


def shapes() -> list[tuple[int, int]]:
    return [(BULK_ELEMENTS // n, n) for n in BULK_NS] + list(FEW_ROW_SHAPES)


def is_bulk(m: int, n: int) -> bool:
    return m * n == BULK_ELEMENTS


def parse_shape(text: str) -> tuple[int, int]:
    """'4096x4096' -> (4096, 4096)."""
    try:
        m, n = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"bad shape {text!r}: write MxN, e.g. 4096x4096") from None
    if m < 1 or n < 1:
        raise ValueError(f"bad shape {text!r}: M and N must be at least 1")
    return m, n
