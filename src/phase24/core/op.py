"""What an operation gives the lab's commands: the protocol every operation package fills in.

An operation (softmax, gemm) is a package with a ``spec.py`` that builds one
``Op``. The commands (check, bench, profile, results, the grader) take an Op by name and know
nothing else about it: they make its cases, call its implementations, compare with its float64
reference, time it against its ceiling and write its records.

An implementation is ``fn(*inputs, out=None) -> tensor``; ``out``, when given, is a contiguous
tensor of the result's shape that the implementation must fill (the checker hands in one it has
poisoned, with guard regions around it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, NamedTuple

import torch

from phase24.core.cases import Case


class OpArgumentError(ValueError):
    """An implementation was called with inputs it cannot take (device, dtype, layout, shape);
    for a valid input, a limit by design (the checker says "not applicable")."""


class Comparison(NamedTuple):
    """An output against the reference: relative L2 error, the worst element's error over its
    tolerance (must be <= 1), one more figure of the operation's own (softmax: the worst row
    sum's error), and why it fails ('' when it passes)."""

    rel_l2: float
    worst: float
    extra: float
    why: str


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    # name -> fn(*inputs, out=None); the first is the baseline that speed-ups are taken against
    implementations: Callable[[], dict]
    # what ``compare`` takes as ``ref``, for the inputs (only the rows ``rows`` of the result,
    # when given): the float64 result, and whatever else the operation's error bound needs
    reference: Callable[..., object]
    pick: Callable[[torch.Tensor, object], torch.Tensor]  # rows `rows` of an output
    result_like: Callable[[tuple], tuple]        # inputs -> (shape, dtype) of the result
    rows: Callable[[tuple], int]                 # inputs -> rows of the result (for sampling)
    compare: Callable[[torch.Tensor, object, torch.dtype], Comparison]
    tolerances: str                              # in words, for the checker's header
    cases: Callable[[bool], list[Case]]          # the checker's cases (on a GPU: True)
    big_case: Callable[[], Case]                 # a case past 2^31 elements (--big)
    # the benchmark: its shapes, the inputs of one shape, the bytes it must move at least
    shapes: Callable[[], list[tuple]]
    parse_shape: Callable[[str], tuple]
    shape_fields: tuple[str, ...]                # names of a shape's sizes in the records
    make_inputs: Callable[[tuple, torch.dtype], tuple]
    bytes_moved: Callable[[tuple, torch.dtype], int]
    bench_dtypes: tuple[str, ...]
    peers: Callable[[], dict]                    # other libraries' implementations found here
    which: Callable[[str, tuple], str | None]    # what an implementation launches, in words
    not_here: Callable[[str], str | None]        # why one cannot be checked on this machine
    learner: Callable[..., tuple]  # (a learner's file, timing=False) -> (fn, notes, dtypes)
    plot: Callable[[dict, Path], Path]
    profiles: tuple[tuple[str, str], ...]        # (implementation, shape) the chapter records
    build_jobs: Callable[[list[str]], list[tuple[Path, str]]]  # kernel files x targets
    hopper_only: Callable[[], set[str]]
    main: tuple[str, ...]                        # the implementations shown by default
    markdown: Callable[[dict], str]              # a run's tables, as `results OP --markdown` prints
    extra_name: str = "extra"                    # the checker's column for Comparison.extra
    few_shapes: tuple = ()                       # shapes where a caller's per-call time counts
    flops: Callable[[tuple], int] | None = None  # a shape's arithmetic, for TFLOP/s in records
    # Why the benchmark's default sweep leaves (implementation, shape) out, or None: a call too
    # slow to time in a sweep (a naive GEMM at 8192^3 takes seconds), asked for by --shapes still.
    not_swept: Callable[[str, tuple], str | None] = lambda name, shape: None
