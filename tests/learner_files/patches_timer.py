"""Planted cheat: importing the file replaces the timer that `bench --file` reads by one that
reports every call as taking a nanosecond. The worker checks the grader's code after loading the
file and refuses it."""
import triton
import triton.language as tl

import phase24.core.timing as _timing

_timing.flushed_us = lambda fn, *args, **kwargs: 0.001  # CHEAT: the timer is patched at import


@triton.jit
def noop(out_ptr):
    pass


def softmax_rows(x2d, out):
    noop[(1,)](out)
