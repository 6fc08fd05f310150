"""GEMM (C = A @ B) as the lab's commands see it: ``Gemm``, this package's ``Op`` (core/op.py says
what each method is for), and its one instance ``OP``.

Checking: the reference is the float64 product of the operands as given, with what the error
bound needs: the sum of the products' magnitudes (|A| @ |B|) and K. An output passes when every
element is within ``U_OUT[dtype] * |C| + (K + 1) * U_ACC * (|A| @ |B|)`` of it (rounding to the
output dtype, plus the worst case of K float32 additions in any order: a kernel may add in any
order, but must add in float32, not TF32 or half precision), and its relative L2 error is within
``U_OUT + 4 * sqrt(K) * U_ACC`` (the typical growth of a float32 sum of random terms, with room:
a tile of K added twice or left out is far past it). NaN and inf where float64 has them.
Benchmark: square sizes, a transformer layer's products and decode shapes; 2 M N K flops, the
operands and the result moved at least once; cuBLAS (``cublas``, TF32 and reduced-precision
reductions off) is the ceiling each implementation is a percentage of.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from phase24.core.op import Comparison, Op
from phase24.core.dtypes import element_size
from phase24.gemm import cases as gemm_cases
from phase24.gemm.shapes import DECODE, parse_shape, shapes

U_OUT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
U_ACC = 2.0**-24  # every dtype accumulates in float32


def compare(out: torch.Tensor, ref: tuple, dtype: torch.dtype) -> Comparison:
    exact, mag, k = ref
    inf = math.inf
    if out.shape != exact.shape:
        return Comparison(inf, inf, inf, f"shape {tuple(out.shape)} != {tuple(exact.shape)}")
    if out.dtype != dtype:
        return Comparison(inf, inf, inf, f"dtype {out.dtype} != {dtype}")
    if exact.numel() == 0:
        return Comparison(0.0, 0.0, 0.0, "")
    o = out.to(torch.float64)
    special = ~torch.isfinite(exact) | ~torch.isfinite(mag)
    if not torch.equal(o.isnan(), exact.isnan()):
        return Comparison(inf, inf, inf, f"NaN where float64 has a number or the reverse "
                          f"({int((o.isnan() != exact.isnan()).sum())} elements)")
    if not torch.equal(o[special & ~exact.isnan()], exact[special & ~exact.isnan()]):
        return Comparison(inf, inf, inf, "an inf where float64 has another value")
    good = ~special
    o, r, m = o[good], exact[good], mag[good]
    if r.numel() == 0:
        return Comparison(0.0, 0.0, 0.0, "")
    if not torch.isfinite(o).all():
        return Comparison(inf, inf, inf, "inf or NaN where float64 has a number")
    err = (o - r).abs()
    bound = U_OUT[dtype] * r.abs() + (1 + U_OUT[dtype]) * (k + 1) * U_ACC * m + 1e-300
    worst = (err / bound).max().item()
    rel_l2 = (err.norm() / r.norm().clamp_min(1e-300)).item()
    rel_bound = U_OUT[dtype] + 4 * math.sqrt(k) * U_ACC
    why = []
    if worst > 1:
        why.append(f"elementwise error {worst:.2g}x the bound")
    if rel_l2 > rel_bound:
        why.append(f"relative L2 error {rel_l2:.2g} > {rel_bound:.2g}")
    return Comparison(rel_l2, worst, rel_l2 / rel_bound, "; ".join(why))


def tolerances() -> str:
    return ("|C - ref| <= u_out |ref| + (K+1) 2^-24 (|A| @ |B|); relative L2 <= u_out + "
            "4 sqrt(K) 2^-24; u_out: f32 2^-24, f16 2^-11, bf16 2^-8")


# What `profile gemm --all --dtype float32` records: the naive rung, shared-memory tiling, 1-D
# blocking, the best SIMT rung and cuBLAS (the Tensor Core rung: --impl cuda-v8 cublas --dtype
# bfloat16).
PROFILES = tuple((impl, "4096x4096x4096") for impl in
                 ("cuda-naive", "cuda-v2", "cuda-v3", "cuda-v7", "cublas"))


class Gemm(Op):
    """GEMM's answers to what the commands ask (core/op.py)."""

    name = "gemm"
    tolerances = tolerances()
    shape_fields = ("M", "N", "K")
    main = ("cublas", "cuda", "triton")
    profiles = PROFILES
    extra_name = "L2/bound"
    few_shapes = DECODE

    def implementations(self) -> dict:
        from phase24.gemm import IMPLEMENTATIONS

        return IMPLEMENTATIONS

    def reference(self, a: torch.Tensor, b: torch.Tensor, rows=None) -> tuple:
        """(C, |A| @ |B|, K) in float64, for the rows ``rows`` of C when given."""
        a64 = (a if rows is None else a[rows]).to(torch.float64)
        b64 = b.to(torch.float64)
        return a64 @ b64, a64.abs() @ b64.abs(), a.shape[1]

    def result_like(self, inputs: tuple) -> tuple:
        return (inputs[0].shape[0], inputs[1].shape[1]), inputs[0].dtype

    def rows(self, inputs: tuple) -> int:
        return inputs[0].shape[0]

    def compare(self, out: torch.Tensor, ref: tuple, dtype: torch.dtype) -> Comparison:
        return compare(out, ref, dtype)

    # the cases and the shapes are the package's own modules'
    cases = staticmethod(gemm_cases.standard_cases)
    big_case = staticmethod(gemm_cases.big_case)
    shapes = staticmethod(shapes)
    parse_shape = staticmethod(parse_shape)

    def make_inputs(self, shape, dtype) -> tuple:
        m, n, k = shape
        return (torch.randn(m, k, device="cuda").to(dtype), torch.randn(k, n, device="cuda").to(dtype))

    def bytes_moved(self, shape, dtype) -> int:
        m, n, k = shape
        return (m * k + k * n + m * n) * element_size(dtype)

    def flops(self, shape) -> int:
        m, n, k = shape
        return 2 * m * n * k

    def which(self, name: str, inputs: tuple) -> str | None:
        from phase24.gemm import which as which_

        return which_(*inputs, impl=name)

    def not_here(self, name: str) -> str | None:
        """Why ``name`` cannot be checked on this machine, or None."""
        if torch.cuda.is_available():
            return None
        from phase24.gemm import triton

        if name in triton.IMPLEMENTATIONS and triton.INTERPRETED:
            return None
        return "needs a GPU" + (" (cuBLAS)" if name == "cublas" else "")

    def learner(self, path: Path, timing: bool = False) -> tuple:
        """A learner's file as (matmul callable, notes [(text, failed)], dtypes it covers); a .py
        file's kernels are witnessed by the profiler (while timed, by the run's)."""
        if path.suffix == ".py":
            from phase24.gemm.learner_triton import load_learner_gemm

            return load_learner_gemm(path, witness=not timing)
        from phase24.gemm.learner_cuda import load_learner_gemm
        from phase24.core.learner_cu import notes

        fn, covered = load_learner_gemm(path)
        return fn, notes(fn.abi), covered

    def not_swept(self, name: str, shape: tuple) -> str | None:
        """The naive and coalesced rungs are swept up to 2048^3's work: beyond, a call takes from
        tens of milliseconds to seconds (naive, float32, 8192^3: about 2 s) and says nothing new."""
        m, n, k = shape
        if name in ("cuda-naive", "cuda-v1") and m * n * k > 2048**3:
            return "not in the default sweep beyond 2048^3's work (--shapes times it)"
        return None

    def plot(self, result: dict, path: Path) -> Path:
        from phase24.gemm.plot import plot_bench

        return plot_bench(result, path)

    def build_jobs(self, targets: list[str]) -> list[tuple[Path, str]]:
        from phase24.gemm import cuda

        return cuda.build_jobs(targets)

    def hopper_only(self) -> set[str]:
        from phase24.gemm import cuda

        return set(cuda.HOPPER_ONLY)

    def markdown(self, result: dict) -> str:
        from phase24.gemm.tables import table_files

        return "\n".join(text for name, text in table_files(result).items()
                         if not name.endswith(".es.md"))


OP = Gemm()
