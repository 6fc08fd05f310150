"""The commands' argument types that argparse checks, each refusing a bad value with one line."""

from __future__ import annotations

import argparse
import math


MOST_SECONDS = 86400.0  # a day: longer than any case, short of what the clocks can hold


def seconds(text: str) -> float:
    """A time limit in seconds: a number above 0, at most a day (argparse's type for --timeout
    and --load-timeout; 1e10 would overflow the waits' clocks)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds above 0")
    if value > MOST_SECONDS:
        raise argparse.ArgumentTypeError(f"{text}: at most {MOST_SECONDS:g} seconds (a day)")
    return value


def seed(text: str) -> int:
    """A seed: a whole number from 0 to 2^63 - 1 (argparse's type for --seed)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text}: a seed is from 0 to 2^63 - 1")
    return value
