"""`phase24 check softmax`: every implementation against the float64 reference."""

from __future__ import annotations

import dataclasses
import math

import torch

from phase24.harness.cases import Case, big_case, standard_cases
from phase24.softmax import softmax_reference
from phase24.softmax.args import poisoned_outputs

# Per dtype: elementwise |out - ref| <= RTOL * |ref| + ATOL, and the whole tensor's relative
# L2 error below RTOL. RTOL covers rounding the result to the dtype (2^-24, 2^-11, 2^-8) plus
# float32 arithmetic over rows of up to ~10^6 elements; row sums must be 1 within RTOL too.
TOLERANCES = {
    torch.float32: (5e-5, 1e-12),
    torch.float16: (2e-3, 1e-7),
    torch.bfloat16: (1.6e-2, 1e-30),
}


@dataclasses.dataclass
class Verdict:
    impl: str
    dtype: str
    case: str
    rel_l2: float
    worst: float  # largest |out - ref| / (RTOL |ref| + ATOL); must be <= 1
    row_sum_err: float
    ok: bool
    why: str = ""


def compare(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> tuple[float, float, float, str]:
    """Return (relative L2 error, worst tolerance ratio, worst row-sum error, failure reason)."""
    rtol, atol = TOLERANCES[dtype]
    if out.shape != ref.shape:
        return math.inf, math.inf, math.inf, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
    if out.dtype != dtype:
        return math.inf, math.inf, math.inf, f"dtype {out.dtype} != {dtype}"
    if ref.numel() == 0:
        return 0.0, 0.0, 0.0, ""
    o = out.to(torch.float64)
    ref_nan = ref.isnan()
    if not torch.equal(o.isnan(), ref_nan):
        missing = (o.isnan() & ~ref_nan).sum().item()
        extra = (~o.isnan() & ref_nan).sum().item()
        return math.inf, math.inf, math.inf, f"NaN where the reference has a number ({missing}) " \
            f"or a number where it has NaN ({extra})"
    good = ~ref_nan
    o, r = o[good], ref[good]
    if not torch.isfinite(o).all():
        return math.inf, math.inf, math.inf, "inf in the output"
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
        why.append(f"a row's sum is off by {sum_err:.2g} (from the rounded reference's)")
    return rel_l2, worst, sum_err, "; ".join(why)


def _rows_to_check(x2d_rows: int, sample: int | None, gen: torch.Generator) -> torch.Tensor | None:
    if sample is None or x2d_rows <= sample:
        return None
    picks = torch.randint(0, x2d_rows, (sample,), generator=torch.Generator().manual_seed(
        int(gen.initial_seed())))
    return torch.unique(torch.cat([torch.tensor([0, x2d_rows - 1]), picks]))


def check_case(name: str, fn, case: Case, dtype: torch.dtype, device: str, seed: int) -> Verdict:
    gen = torch.Generator(device=device).manual_seed(seed)
    x = case.make(dtype, device, gen)
    dtname = str(dtype).removeprefix("torch.")
    try:
        ref = None
        outs = []
        for poison in (float("nan"), 42.0):  # unwritten elements show as NaN, then as 42
            with poisoned_outputs(poison):
                outs.append(fn(x))
        n_rows = math.prod(x.shape[:-1])
        rows = _rows_to_check(n_rows, case.sample_rows, gen)
        if rows is not None:
            rows = rows.to(x.device)
            x_s = x.reshape(-1, x.shape[-1])[rows]
            ref = softmax_reference(x_s)
            outs = [o.reshape(-1, x.shape[-1])[rows] for o in outs]
        else:
            ref = softmax_reference(x)
        results = [compare(o, ref, dtype) for o in outs]
    except Exception as err:  # a crash is a failed case with its message, not a stack trace
        return Verdict(name, dtname, case.name, math.inf, math.inf, math.inf, False,
                       f"{type(err).__name__}: {err}")
    rel, worst, sums, why = max(results, key=lambda r: (bool(r[3]), r[1]))
    if not why and not torch.equal(outs[0].nan_to_num(7.0), outs[1].nan_to_num(7.0)):
        why = "two runs on the same input differ (a race, or an element left unwritten)"
    return Verdict(name, dtname, case.name, rel, worst, sums, not why, why)


def run_checks(impls: dict, dtypes: list[torch.dtype], device: str, seed: int,
               big: bool = False, on_result=None) -> list[Verdict]:
    cases = standard_cases(gpu=device == "cuda")
    if big:
        cases.append(big_case())
    verdicts = []
    for i, (name, fn) in enumerate(impls.items()):
        for dtype in dtypes:
            for j, case in enumerate(cases):
                if case.gpu_only and device != "cuda":
                    continue
                v = check_case(name, fn, case, dtype, device, seed + 1000 * i + j)
                verdicts.append(v)
                if on_result:
                    on_result(v)
                if case.gpu_only:
                    torch.cuda.empty_cache()
    return verdicts


def tolerance_table() -> str:
    return ", ".join(f"{str(d).removeprefix('torch.')}: rtol {r:g} atol {a:g}"
                     for d, (r, a) in TOLERANCES.items())
