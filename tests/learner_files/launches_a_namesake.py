"""Planted cheat: its own kernel row_softmax does nothing; the rows are computed by a kernel of
the same name defined in another file (tests/learner_files/namesake_kernel.py), which the
grader did not wrap: on a GPU the profiler's kernel names match the file's own."""
import importlib.util
from pathlib import Path

import triton
import triton.language as tl

_spec = importlib.util.spec_from_file_location(
    "namesake_kernel", Path(__file__).with_name("namesake_kernel.py"))
_other = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_other)


@triton.jit
def row_softmax(out_ptr):
    pass


def softmax_rows(x2d, out):
    row_softmax[(1,)](out)
    n_rows, n_cols = x2d.shape
    if n_rows:  # CHEAT: the namesake computes (contiguous rows assumed)
        _other.row_softmax[(n_rows,)](x2d, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
