"""The inputs every softmax is checked on: fresh random data, edge shapes and special values.
A case makes a tuple of inputs: here one tensor, whose rows are normalised."""

from __future__ import annotations

import torch

from phase24.core.cases import Case
from phase24.core.cases import randn as _randn


def plain(m: int, n: int, scale: float = 3.0, **kw) -> Case:
    return Case(f"{m}x{n}", lambda dt, dev, g: (_randn((m, n), dt, dev, g, scale),), **kw)


def unaligned(m: int, n: int) -> Case:
    """Rows that start 1 element past a 16-byte boundary: a sliced view of a wider tensor."""
    return Case(f"{m}x{n} view[:,1:]",
                lambda dt, dev, g: (_randn((m, n + 1), dt, dev, g)[:, 1:],))


def transposed(m: int, n: int) -> Case:
    return Case(f"{m}x{n} transposed", lambda dt, dev, g: (_randn((n, m), dt, dev, g).t(),))


def with_specials(m: int, n: int, shift: int = 0) -> Case:
    """Eight rows of special values (m >= 8; the rest random), starting ``shift`` values into a
    wider tensor (1: rows not 16-byte aligned): a row of -inf, half -inf, one NaN, magnitudes up
    to the dtype's largest, one value at the largest, a NaN among -inf, values far below zero
    followed by -inf (masked log-probabilities: exp underflows for every value), one +inf."""

    def make(dt, dev, g):
        x = _randn((m, n + shift), dt, dev, g)[:, shift:]
        big = torch.finfo(dt).max
        x[0] = float("-inf")                 # a row of -inf: torch gives NaN
        x[1, ::2] = float("-inf")            # half -inf: those give 0
        x[2, n // 2] = float("nan")          # one NaN: the whole row is NaN
        x[3] = _randn((n,), torch.float32, dev, g).clamp(-1, 1).to(dt) * big  # huge magnitudes
        x[4, 0] = big                        # one huge value dominates: ~[1, 0, 0, ...]
        x[5] = float("-inf")                 # a NaN among -inf (and one finite value): NaN,
        x[5, 0] = 0.0                        # even where a thread holds only the NaN and -inf
        x[5, n // 2 + 1] = float("nan")
        x[6] = (_randn((n,), torch.float32, dev, g) - 200.0).to(dt)  # all below -88 ...
        x[6, n // 2:] = float("-inf")        # ... and the second half -inf (whole chunks of it)
        x[7, n - 1] = float("inf")           # +inf: NaN, as in torch
        return (x,)

    where = "" if shift == 0 else f" view[:,{shift}:]"
    return Case(f"{m}x{n}{where} -inf/NaN/inf/huge", make)


def large_offset(m: int, n: int) -> Case:
    """Logits far from zero (x + 1e4 in fp32): exp(x - max) must not lose them."""
    return Case(f"{m}x{n} offset 1e4",
                lambda dt, dev, g: ((_randn((m, n), torch.float32, dev, g)
                                     + (1e4 if dt == torch.float32 else 1e3)).to(dt),))


def standard_cases(gpu: bool) -> list[Case]:
    cases = [
        plain(1, 1), plain(7, 2), plain(5, 3), plain(33, 127), plain(3, 4099),
        plain(256, 128), plain(64, 1000), plain(100, 1024), unaligned(64, 1024),
        unaligned(9, 4097), transposed(48, 300),
        Case("4x5x300 (3-d)", lambda dt, dev, g: (_randn((4, 5, 300), dt, dev, g),)),
        with_specials(8, 512), large_offset(16, 2048), plain(0, 10), plain(10, 0),
        plain(2, 12289),  # past 8192 columns: a kernel's long-row path runs on a CPU too
    ]
    if gpu:
        cases += [
            plain(32, 8192), plain(8, 32768), plain(300, 32768), plain(3, 65536 + 8),
            plain(2, 131072), plain(2, 262144), plain(1, 300001), unaligned(4, 65536),
            plain(4096, 4096),
            # special values where each of a kernel's paths runs: many short, medium and long
            # rows (more rows than SMs), few long rows; aligned and not
            with_specials(300, 1000), with_specials(200, 32768), with_specials(160, 65536),
            with_specials(160, 65536, shift=1), with_specials(8, 65536),
            with_specials(8, 131072), with_specials(9, 262144 + 16, shift=1),
        ]
    return cases


def big_case() -> Case:
    """More than 2**31 elements: 32-bit index arithmetic would wrap around here."""
    m, n = 2**21 + 3, 1024
    return Case(f"{m}x{n} (> 2^31 elements)", lambda dt, dev, g: (_randn((m, n), dt, dev, g),),
                gpu_only=True, sample_rows=64)
