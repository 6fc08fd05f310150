"""What an operation gives the lab's commands: the protocol every operation package fills in.

An operation (softmax, gemm) is a package with a ``spec.py`` that defines a subclass of ``Op``
and its one instance, ``OP``. The commands (check, bench, profile, results, the grader) take an
Op by name and know nothing else about it: they make its cases, call its implementations,
compare with its float64 reference, time it against its ceiling and write its records.

An implementation is ``fn(*inputs, out=None) -> tensor``; ``out``, when given, is a contiguous
tensor of the result's shape that the implementation must fill (the checker hands in one it has
poisoned, with guard regions around it).
"""

from __future__ import annotations

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


class Op:
    """An operation as the commands call it: a subclass per operation package (its spec.py) fills
    in the methods that raise NotImplementedError and may change the defaults."""

    name: str = ""
    tolerances: str = ""                     # the error bounds in words, for the checker's header
    shape_fields: tuple[str, ...] = ()       # names of a shape's sizes in the records
    bench_dtypes: tuple[str, ...] = ("float32", "bfloat16")
    main: tuple[str, ...] = ()               # the implementations shown by default
    profiles: tuple[tuple[str, str], ...] = ()  # (implementation, shape) the chapter records
    extra_name: str = "extra"                # the checker's column for Comparison.extra
    few_shapes: tuple = ()                   # shapes where a caller's per-call time counts
    # a shape's arithmetic, for TFLOP/s in records: a method where the operation counts it
    flops: Callable[[tuple], int] | None = None

    # ---- checking
    def implementations(self) -> dict:
        """name -> fn(*inputs, out=None); the first is the baseline speed-ups are taken against."""
        raise NotImplementedError

    def reference(self, *inputs, rows=None) -> object:
        """What ``compare`` takes as ``ref``, for the inputs (only the rows ``rows`` of the
        result, when given): the float64 result, and whatever else the error bound needs."""
        raise NotImplementedError

    def pick(self, t: torch.Tensor, rows) -> torch.Tensor:
        """Rows ``rows`` of an output (all of it when None)."""
        return t if rows is None else t[rows]

    def result_like(self, inputs: tuple) -> tuple:
        """(shape, dtype) of the result of ``inputs``."""
        raise NotImplementedError

    def rows(self, inputs: tuple) -> int:
        """Rows of the result (for sampling)."""
        raise NotImplementedError

    def compare(self, out: torch.Tensor, ref: object, dtype: torch.dtype) -> Comparison:
        raise NotImplementedError

    def cases(self, gpu: bool) -> list[Case]:
        """The checker's cases (on a GPU: ``gpu`` True)."""
        raise NotImplementedError

    def big_case(self) -> Case:
        """A case past 2^31 elements (--big)."""
        raise NotImplementedError

    def which(self, name: str, inputs: tuple) -> str | None:
        """What an implementation launches on ``inputs``, in words."""
        return None

    def not_here(self, name: str) -> str | None:
        """Why ``name`` cannot be checked on this machine, or None."""
        return None

    # ---- the benchmark
    def shapes(self) -> list[tuple]:
        raise NotImplementedError

    def parse_shape(self, text: str) -> tuple:
        raise NotImplementedError

    def make_inputs(self, shape: tuple, dtype: torch.dtype) -> tuple:
        """Fresh random inputs of one shape, on the GPU."""
        raise NotImplementedError

    def bytes_moved(self, shape: tuple, dtype: torch.dtype) -> int:
        """The bytes a call must move at least."""
        raise NotImplementedError

    def not_swept(self, name: str, shape: tuple) -> str | None:
        """Why the default sweep leaves (implementation, shape) out, or None: a call too slow to
        time in a sweep, which --shapes still times."""
        return None

    def peers(self) -> dict:
        """Other libraries' implementations found here."""
        return {}

    # ---- the learner's file
    def learner(self, path: Path, timing: bool = False) -> tuple:
        """(a learner's file, timing) -> (fn, notes [(text, failed)], dtypes it covers)."""
        raise NotImplementedError

    # ---- building
    def build_jobs(self, targets: list[str]) -> list[tuple[Path, str]]:
        """Kernel files x targets that ``build`` compiles."""
        return []

    def hopper_only(self) -> set[str]:
        return set()

    # ---- presentation
    def plot(self, result: dict, path: Path) -> Path:
        raise NotImplementedError

    def markdown(self, result: dict) -> str:
        """A run's tables, as `results OP --markdown` prints them."""
        raise NotImplementedError
