"""Inputs larger than one launch takes (2^31 rows and more, M·N or M·S past 2^31), on small
inputs: the bounds on a launch's work (parts.MAX_ITEMS, parts.MAX_WORDS) set small, so that
every rung takes the path a huge input takes, parts (ranges of rows) of at most that work; and
the kernels' 64-bit offsets, on rows 2^30 values apart (8 GB of address space, of which only
the rows are touched). tests/test_big_rows_gpu.py runs the real sizes on a GPU."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS, SoftmaxArgumentError
from phase24.softmax.args import run_rows
from phase24.softmax.shapes import shapes
from phase24.softmax.triton import (INTERPRETED, RUNGS, common, parts, v0_naive, v1_rows,
                                    v2_split, v3_lagged, which)
from softmax_asserts import assert_softmax, randn

ROOT = Path(__file__).resolve().parents[1]
DEVICE = "cpu" if INTERPRETED else "cuda"
pytestmark = [pytest.mark.interpreter,
              pytest.mark.skipif(not INTERPRETED and not torch.cuda.is_available(),
                                 reason="Triton compiles for a GPU here and there is none")]

# Each rung by its entry, and the forced configurations that reach its other paths.
PATHS = {
    **{name: (name, None) for name in RUNGS},
    "v1-tall": ("triton-v1", v1_rows.Config(block_m=4, num_warps=4)),
    "v2-steps": ("triton-v2", v2_split.Config(seg=16, num_warps=1, pblock=2)),  # 7 chunks a row
    "v3-two": ("triton-v3", v3_lagged.Config(seg=64, num_warps=1)),  # rows of two chunks
}
ITEMS, WORDS = 8, 4  # a launch's work, in the tests below


def run(path: str, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    name, config = PATHS[path]
    if config is None:
        return IMPLEMENTATIONS[name](x, out)
    return run_rows(lambda a, o: RUNGS[name].softmax_rows(a, o, config), x, out)


@pytest.fixture
def small_launches(monkeypatch):
    monkeypatch.setattr(parts, "MAX_ITEMS", ITEMS)
    monkeypatch.setattr(parts, "MAX_WORDS", WORDS)
    common.forget()  # (decisions are kept per shape, whatever the bounds were)
    yield
    common.forget()


def recorded_launches(monkeypatch) -> list:
    """Every ``kernel[(grid,)](...)`` of the rungs from now on, as (kernel, grid, arguments);
    a grid beyond the launch bound fails at once, as one beyond the hardware's limit does."""
    from triton.runtime import KernelInterface  # (after phase24.softmax.triton chose the mode)

    seen = []
    kernels = [v for rung in RUNGS.values() for v in vars(rung).values()
               if isinstance(v, KernelInterface)]
    for cls in {next(c for c in type(k).__mro__ if "__getitem__" in vars(c)) for k in kernels}:
        real = vars(cls)["__getitem__"]

        def getitem(kernel, grid, real=real):
            assert grid[0] <= parts.MAX_ITEMS, f"{kernel.__name__}: a grid of {grid[0]}"
            launch = real(kernel, grid)
            return lambda *args, **meta: (seen.append((kernel.__name__, grid[0], args)),
                                          launch(*args, **meta))[1]

        monkeypatch.setattr(cls, "__getitem__", getitem)
    return seen


CASES = [((13, 7), torch.float32, 0), ((11, 100), torch.bfloat16, 0), ((9, 1), torch.float16, 0),
         ((12, 70), torch.float32, 1), ((10, 127), torch.bfloat16, 3)]  # (shape, dtype, offset)


@pytest.mark.parametrize("path", PATHS)
def test_more_than_a_launch_runs_in_parts(path, small_launches, monkeypatch):
    # Each input is several launches' work; each launch holds at most ITEMS items (programs,
    # rows, chunks), and scratch of at most WORDS words unless it holds a single row; the
    # parts together compute the softmax, into out (poisoned) and from rows of any stride.
    seen = recorded_launches(monkeypatch)
    for (m, n), dtype, offset in CASES:
        x = randn((m, n + offset), dtype, seed=m * n, device=DEVICE)[:, offset:]
        seen.clear()
        out = run(path, x, torch.full_like(x, float("nan"), memory_format=torch.contiguous_format))
        assert_softmax(out, x, f"{path} {tuple(x.shape)} {dtype} offset {offset}")
        assert len(seen) > 1, f"{path} {tuple(x.shape)}: one launch for more than its work"
        for kernel, grid, args in seen:
            a, scratch = args[0], args[2] if isinstance(args[2], torch.Tensor) else None
            what = f"{path} {tuple(x.shape)} {kernel}[{grid}] on {a.shape[0]} rows"
            assert a.shape[0] <= ITEMS, what
            if scratch is not None:
                words = scratch.numel() - (common.HEAD if "lagged" in kernel else 0)
                assert words <= WORDS or a.shape[0] == 1, f"{what}: {words} words of scratch"


def test_which_names_the_parts(small_launches):
    x = randn((20, 7), torch.float32, seed=2, device=DEVICE)
    plan = common.decided(v0_naive.decide, x, torch.empty_like(x)).plan
    assert [(first, rows) for first, rows, _ in plan.parts] == [(0, 8), (8, 8), (16, 4)]
    assert which(x, "triton-naive") == (
        "in 3 parts: 2 of 8 rows, each: triton-naive naive_kernel[8](BLOCK_N=8, "
        "num_warps=4) | 1 of 4 rows: triton-naive naive_kernel[4](BLOCK_N=8, num_warps=4)")
    assert plan.launches[0].rung == "triton-naive"


def test_parts_keep_the_alignment_of_the_whole(small_launches, monkeypatch):
    # A part starts a multiple of 16 bytes from x's and out's first rows (16-bit rows of 5 or
    # 3 values: every 8th row; 11 rows a launch: parts of 8), so every full part shares one
    # decision, and the rungs that need 16-byte rows or pairs of values (v3 to v5) keep them.
    monkeypatch.setattr(parts, "MAX_ITEMS", 11)
    for n, dtype in ((7, torch.float32), (5, torch.bfloat16), (3, torch.float16)):
        x = randn((30, n + 1), dtype, seed=n, device=DEVICE)[:, 1:]
        out = torch.empty(x.shape, dtype=dtype, device=DEVICE)
        plan = common.decided(v1_rows.decide, x, out).plan
        elem = x.element_size()
        assert len(plan.parts) > 2
        for first, rows, d in plan.parts:
            assert first * x.stride(0) * elem % 16 == 0 and first * n * elem % 16 == 0, (n, first)
        assert len({id(d) for _, _, d in plan.parts}) == 2, n  # the full parts' and the last's


def test_a_row_more_than_a_launch_is_refused_in_one_line(small_launches):
    # Rows of 100 values in chunks of 8 are 13 items each, more than a launch takes (ITEMS).
    x = randn((2, 100), torch.float32, seed=3, device=DEVICE)
    with pytest.raises(SoftmaxArgumentError) as err:
        run_rows(lambda a, o: RUNGS["triton-v2"].softmax_rows(
            a, o, v2_split.Config(seg=8, num_warps=1)), x)
    assert str(err.value) == (
        f"triton-v2: a row of 100 values is 13 chunks here, more than one launch takes ({ITEMS}); "
        "choose a configuration with fewer chunks a row")


class _Compiled:
    """A stand-in for Triton's CompiledKernel: records each launch."""
    function, packed_metadata = "function", "packed"

    def __init__(self):
        self.launches = []

    def run(self, *args):
        self.launches.append(args)


def test_parts_replay_with_their_own_pointers(small_launches, monkeypatch):
    # On a GPU a part's decision launches through kernel[grid](...) once, then replays with
    # each part's own pointers; the whole input's key keeps no replay, so its calls are never
    # made from C++ (which would launch one part's kernels on the whole). The launches stubbed.
    compiled, first = _Compiled(), []

    def launch(p, x2d, out):
        first.append((x2d.data_ptr(), out.data_ptr()))
        return [compiled]

    def decide(x2d, out, config=None):
        split = parts.split_rows(decide, x2d, out, config, 1, scratch=False, rung="test",
                                 items="rows")
        return split or common.Plan((common.Launch(
            "test", v0_naive.naive_kernel, x2d.shape[0], (8, 8), dict(BLOCK_N=8)),), launch)

    monkeypatch.setattr(common, "INTERPRETED", False)
    monkeypatch.setattr(common, "REPLAY_KNOWN", True)
    monkeypatch.setattr(common, "current_stream", lambda index: 1234)
    x, out = torch.randn(20, 8), torch.empty(20, 8)
    ptrs = [(x[r:].data_ptr(), out[r:].data_ptr()) for r in (0, 8, 16)]
    common.launch_rows(decide, x, out)
    assert first == [ptrs[0], ptrs[2]]  # rows 8-15: the decision of rows 0-7, replayed
    common.launch_rows(decide, x, out)
    assert [(c[0], c[9:11]) for c in compiled.launches] == \
        [(8, ptrs[1]), (8, ptrs[0]), (8, ptrs[1]), (4, ptrs[2])]
    assert all(c[11:] == (8, 8, 8) for c in compiled.launches)  # N, stride, BLOCK_N
    assert common.fast_launches(decide, x, out) is None


def test_no_benchmark_shape_is_split():
    # The bounds are far beyond what the benchmark times: its shapes run as before, one launch
    # (or v2's two) for the whole input.
    common.forget()
    for m, n in shapes():
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.empty(m, n, dtype=dtype, device=DEVICE)  # (never written: not touched)
            for name, rung in RUNGS.items():
                if (name == "triton-naive" and n > v0_naive.MAX_N) or \
                        (name == "triton-v1" and n > v1_rows.MAX_BLOCK_N):
                    continue
                assert not rung.decide(x, x).parts, (name, m, n, dtype)
    common.forget()


# Rows 2^30 + 64 values apart: x + row * stride is 2^31 + 128 values in at row 2 (and, for v3's
# pairs of 16-bit values, 2^31 + 128 32-bit words in at row 4), which a 32-bit product wraps to
# an address before x: the process is then killed by the fault, hence a process of its own.
FAR_ROWS = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, "tests")
    from softmax_asserts import assert_softmax
    from test_big_rows import PATHS, run
    from phase24.softmax import SoftmaxArgumentError
    from phase24.softmax.triton import common, parts

    stride = 2**30 + 64
    base = torch.empty(4 * stride + 128, dtype=torch.bfloat16)  # 8 GB of addresses, 5 rows used
    g = torch.Generator().manual_seed(5)
    for limit in (parts.MAX_ITEMS, 2):  # one launch; parts of two rows or one
        parts.MAX_ITEMS = parts.MAX_WORDS = limit
        common.forget()
        for n in (127, 128):  # odd: value by value; even: v3 reads and writes pairs
            x = base.as_strided((5, n), (stride, 1))
            x.copy_(torch.randn(5, n, generator=g, dtype=torch.float64).mul(3))
            for path in PATHS:
                try:
                    y = run(path, x)
                except SoftmaxArgumentError as err:  # 8 chunks a row, more than 2
                    assert (path, limit) == ("v2-steps", 2), err
                    continue
                assert_softmax(y, x, f"{path} n={n} rows {stride} apart")
                print("ok", path, n, limit, flush=True)
""")


@pytest.mark.skipif(not INTERPRETED, reason="the interpreter's CPU tensors (8 GB of addresses)")
def test_rows_more_than_2_31_values_apart():
    proc = subprocess.run([sys.executable, "-c", FAR_ROWS], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (f"exit {proc.returncode} after:\n{proc.stdout[-2000:]}"
                                  f"\n{proc.stderr[-3000:]}")
    assert proc.stdout.count("ok ") == 2 * (2 * len(PATHS) - 1)
