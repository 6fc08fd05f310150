"""The inputs every GEMM is checked on: fresh random operands (normal values, never zeros, never
small integers whose float32 sums would be exact), sizes that are multiples of no tile, K = 1,
one row, transposed and sliced operands, empty sizes, and a NaN. A case makes (a, b)."""

from __future__ import annotations

import torch

from phase24.core.cases import Case
from phase24.core.cases import randn as _randn


def plain(m: int, n: int, k: int, **kw) -> Case:
    return Case(f"{m}x{n}x{k}", lambda dt, dev, g: (_randn((m, k), dt, dev, g, 1.0),
                                                   _randn((k, n), dt, dev, g, 1.0)), **kw)


def transposed(m: int, n: int, k: int, which: str) -> Case:
    """``a`` (or ``b``) as the transpose of a row-major tensor: column-major."""
    def make(dt, dev, g):
        a = _randn((k, m), dt, dev, g, 1.0).t() if which == "a" else _randn((m, k), dt, dev, g, 1.0)
        b = _randn((n, k), dt, dev, g, 1.0).t() if which == "b" else _randn((k, n), dt, dev, g, 1.0)
        return a, b
    return Case(f"{m}x{n}x{k} {which}.t()", make)


def sliced(m: int, n: int, k: int) -> Case:
    """Both operands one column into wider tensors: rows not 16-byte aligned."""
    return Case(f"{m}x{n}x{k} a[:,1:] b[:,1:]",
                lambda dt, dev, g: (_randn((m, k + 1), dt, dev, g, 1.0)[:, 1:],
                                    _randn((k, n + 1), dt, dev, g, 1.0)[:, 1:]))


def with_nan(m: int, n: int, k: int) -> Case:
    """A NaN in a's row 1 and an inf in b's column 2: row 1 of C is NaN, column 2 is inf or
    NaN (inf times values of either sign), as in float64."""
    def make(dt, dev, g):
        a, b = _randn((m, k), dt, dev, g, 1.0), _randn((k, n), dt, dev, g, 1.0)
        a[1, k // 2] = float("nan")
        b[k // 3, 2] = float("inf")
        return a, b
    return Case(f"{m}x{n}x{k} NaN/inf", make)


def standard_cases(gpu: bool) -> list[Case]:
    cases = [
        plain(1, 1, 1), plain(5, 3, 1), plain(7, 2, 9), plain(17, 33, 65), plain(64, 64, 64),
        plain(1, 96, 80), plain(33, 65, 129), transposed(20, 24, 40, "a"),
        transposed(20, 24, 40, "b"), sliced(19, 23, 37), with_nan(8, 16, 24),
        plain(0, 5, 3), plain(4, 0, 3), plain(4, 5, 0),
        plain(9, 20, 300),  # K past 256: every K tile of a kernel's loop, on a CPU too
    ]
    if gpu:
        cases += [
            plain(128, 128, 128), plain(255, 257, 129), plain(1000, 1000, 1000),
            plain(2048, 2048, 2048), plain(1, 4096, 4096), plain(16, 4096, 4096),
            plain(64, 1000, 3000), plain(3, 5000, 4097), sliced(300, 500, 700),
            transposed(512, 384, 640, "a"), transposed(512, 384, 640, "b"),
            with_nan(256, 256, 512),
        ]
    return cases


def big_case() -> Case:
    """More than 2**31 elements of C: 32-bit index arithmetic would wrap around here."""
    m, n, k = 2**16 + 3, 2**15, 16
    return Case(f"{m}x{n}x{k} (> 2^31 outputs)",
                lambda dt, dev, g: (_randn((m, k), dt, dev, g, 1.0), _randn((k, n), dt, dev, g, 1.0)),
                gpu_only=True, sample_rows=64)
