"""The benchmark's shapes (M, N, K): square sizes, the matrix products of a transformer layer
(4096 tokens; the attention and MLP projections of a 4096-wide model) and decode shapes (1 to 64
tokens against the same weights); how a shape is written on the command line."""

from __future__ import annotations

SQUARES = tuple((s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192))
LAYER = ((4096, 4096, 4096), (4096, 11008, 4096), (4096, 4096, 14336))
DECODE = tuple((m, n, k) for m in (1, 16, 64) for n, k in ((4096, 4096), (11008, 4096),
                                                          (4096, 14336)))


def shapes() -> list[tuple[int, int, int]]:
    return [*SQUARES, *LAYER, *DECODE]


def parse_shape(text: str) -> tuple[int, int, int]:
    """'4096x4096x4096' -> (4096, 4096, 4096): M x N x K."""
    try:
        m, n, k = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"bad shape {text!r}: write MxNxK, e.g. 4096x4096x4096") from None
    if min(m, n, k) < 1:
        raise ValueError(f"bad shape {text!r}: M, N and K must be at least 1")
    return m, n, k
