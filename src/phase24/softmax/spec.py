"""Softmax as the lab's commands see it: ``Softmax``, this package's ``Op`` (core/op.py says what
each method is for), and its one instance ``OP``.

Checking: a float64 reference of the input as given; per dtype an elementwise tolerance
|out - ref| <= RTOL |ref| + ATOL and a relative L2 bound of RTOL (rounding to the dtype plus
float32 arithmetic over rows of up to ~10^6 values); every row must sum to what the reference,
rounded to the dtype, sums to. Benchmark: the bulk shapes (2^28 values, rows of 128 to 262144)
and four few-row shapes; a softmax moves 2 * M * N * element bytes at least, and its ceiling is a
copy of the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from phase24.core.dtypes import element_size
from phase24.core.op import Comparison, Op
from phase24.softmax import cases as softmax_cases
from phase24.softmax.shapes import FEW_ROW_SHAPES, is_bulk, parse_shape, shapes

TOLERANCES = {
    torch.float32: (5e-5, 1e-12),
    torch.float16: (2e-3, 1e-7),
    torch.bfloat16: (1.6e-2, 1e-30),
}
PROFILES = (("cuda-naive", "32768x8192"), ("cuda-v3", "32768x8192"), ("cuda", "32768x8192"),
            ("triton", "32768x8192"), ("torch", "32768x8192"), ("cuda", "64x262144"),
            ("triton", "64x262144"))


def compare(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> Comparison:
    rtol, atol = TOLERANCES[dtype]
    inf = math.inf
    if out.shape != ref.shape:
        return Comparison(inf, inf, inf, f"shape {tuple(out.shape)} != {tuple(ref.shape)}")
    if out.dtype != dtype:
        return Comparison(inf, inf, inf, f"dtype {out.dtype} != {dtype}")
    if ref.numel() == 0:
        return Comparison(0.0, 0.0, 0.0, "")
    o = out.to(torch.float64)
    ref_nan = ref.isnan()
    if not torch.equal(o.isnan(), ref_nan):
        missing = (o.isnan() & ~ref_nan).sum().item()
        extra = (~o.isnan() & ref_nan).sum().item()
        return Comparison(inf, inf, inf, f"NaN where the reference has a number ({missing}) "
                          f"or a number where it has NaN ({extra})")
    good = ~ref_nan
    o, r = o[good], ref[good]
    if not torch.isfinite(o).all():
        return Comparison(inf, inf, inf, "inf in the output")
    diff = (o - r).abs()
    worst = (diff / (rtol * r.abs() + atol)).max().item() if r.numel() else 0.0
    rel_l2 = (diff.norm() / r.norm().clamp_min(1e-300)).item() if r.numel() else 0.0
    # Row sums are compared with those of the reference rounded to the output dtype, i.e. with
    # what an exact kernel would write: a float16 row of 10^6 values holds subnormal numbers
    # whose rounding alone moves its sum ~3e-3 away from 1.
    rows = ~ref_nan.reshape(-1, ref.shape[-1]).any(dim=1)
    sums = out.to(torch.float64).reshape(-1, ref.shape[-1])[rows].sum(dim=1)
    exact = ref.to(dtype).to(torch.float64).reshape(-1, ref.shape[-1])[rows].sum(dim=1)
    sum_err = (sums - exact).abs().max().item() if sums.numel() else 0.0
    why = []
    if worst > 1:
        why.append(f"elementwise error {worst:.2g}x the tolerance")
    if rel_l2 > rtol:
        why.append(f"relative L2 error {rel_l2:.2g} > {rtol:g}")
    if sum_err > rtol:
        why.append(f"a row's sum is off by {sum_err:.2g}")
    return Comparison(rel_l2, worst, sum_err, "; ".join(why))


def tolerances() -> str:
    from phase24.core.dtypes import TAG

    return ", ".join(f"{TAG[d]} {r:g}/{a:g}" for d, (r, a) in TOLERANCES.items())


class Softmax(Op):
    """Softmax's answers to what the commands ask (core/op.py)."""

    name = "softmax"
    tolerances = tolerances()
    shape_fields = ("M", "N")
    main = ("torch", "cuda", "triton")
    profiles = PROFILES
    extra_name = "sum err"
    few_shapes = FEW_ROW_SHAPES

    def implementations(self) -> dict:
        from phase24.softmax import IMPLEMENTATIONS

        return IMPLEMENTATIONS

    def reference(self, x: torch.Tensor, rows=None) -> torch.Tensor:
        from phase24.softmax.reference import softmax_reference

        return softmax_reference(self.pick(x, rows))

    def pick(self, t: torch.Tensor, rows) -> torch.Tensor:
        return t if rows is None else t.reshape(-1, t.shape[-1])[rows]

    def result_like(self, inputs: tuple) -> tuple:
        return inputs[0].shape, inputs[0].dtype

    def rows(self, inputs: tuple) -> int:
        return math.prod(inputs[0].shape[:-1])

    def compare(self, out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> Comparison:
        return compare(out, ref, dtype)

    # the cases and the shapes are the package's own modules'
    cases = staticmethod(softmax_cases.standard_cases)
    big_case = staticmethod(softmax_cases.big_case)
    shapes = staticmethod(shapes)
    parse_shape = staticmethod(parse_shape)

    def make_inputs(self, shape, dtype) -> tuple:
        m, n = shape
        return (torch.randn(m, n, device="cuda", dtype=torch.float32).mul_(3).to(dtype),)

    def bytes_moved(self, shape, dtype) -> int:
        m, n = shape
        return 2 * m * n * element_size(dtype)

    def peers(self) -> dict:
        """Other libraries' softmax, timed beside ours when they are installed: Liger-Kernel
        (Triton) and QuACK (CuTe DSL)."""
        found = {}
        try:
            from liger_kernel.ops.softmax import LigerSoftmaxFunction

            found["liger"] = LigerSoftmaxFunction.apply
        except Exception:
            pass
        try:
            from quack.softmax import softmax_fwd

            found["quack"] = softmax_fwd
        except Exception:
            pass
        return found

    def which(self, name: str, inputs: tuple) -> str | None:
        from phase24.softmax import which as which_

        return which_(inputs[0], name)

    def not_here(self, name: str) -> str | None:
        """Why ``name`` cannot be checked on this machine (no GPU), or None."""
        if name == "torch" or torch.cuda.is_available():
            return None
        from phase24.softmax import triton

        if name not in triton.RUNGS:
            return "needs a GPU"
        if not triton.INTERPRETED:
            return "needs a GPU, or Triton's interpreter (unset TRITON_INTERPRET=0)"
        x = torch.empty(4, 1000)
        plan = triton.RUNGS[name].decide(x, torch.empty_like(x))
        if plan.note.startswith(f"{name}: ") and all(step.rung != name for step in plan.launches):
            why = plan.note.split("; ")[0].removeprefix(f"{name}: ")
            return f"{why} (here it would run {plan.launches[0].rung}'s kernel)"
        return None

    def learner(self, path: Path, timing: bool = False) -> tuple:
        """A learner's file as (softmax callable, notes [(text, failed)], dtypes it covers); a .py
        file's kernels are witnessed by the profiler (while timed, by the run's)."""
        if path.suffix == ".py":
            from phase24.softmax.learner_triton import load_learner_softmax

            return load_learner_softmax(path, witness=not timing), [], None
        from phase24.core.learner_cu import notes
        from phase24.softmax.learner_cuda import load_learner_softmax

        fn, covered = load_learner_softmax(path)
        return fn, notes(fn.abi), covered

    def plot(self, result: dict, path: Path) -> Path:
        from phase24.softmax.plot import plot_bench

        return plot_bench(result, path, is_bulk)

    def build_jobs(self, targets: list[str]) -> list[tuple[Path, str]]:
        from phase24.softmax import cuda

        return cuda.build_jobs(targets)

    def hopper_only(self) -> set[str]:
        from phase24.softmax import cuda

        return set(cuda.HOPPER_ONLY)

    def markdown(self, result: dict) -> str:
        from phase24.softmax.tables import host_table, markdown_table

        return markdown_table(result) + "\n\n" + host_table(result)


OP = Softmax()
