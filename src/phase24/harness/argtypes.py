"""The commands' argument types that argparse checks, each refusing a bad value with one line."""

from __future__ import annotations

import argparse
import math


def seconds(text: str) -> float:
    """A time limit in seconds: a finite number above 0 (argparse's type for --timeout)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds above 0")
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
