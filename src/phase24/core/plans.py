"""What every ladder's decisions share: integer helpers for tile and grid sizes, and ``fallback``,
a plan handed on to another rung with the reason why (a plan is a dataclass with a ``note``)."""

from __future__ import annotations

import dataclasses


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def prev_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n.bit_length() - 1)


def fallback(plan, why: str):
    """``plan`` (another rung's), with the reason the asking rung gave it the shape."""
    return dataclasses.replace(plan, note=why + (f"; {plan.note}" if plan.note else ""))
