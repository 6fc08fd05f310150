"""`phase24 check softmax`: every implementation against the float64 reference.

Each case makes a fresh input, computes the float64 reference from it and saves its bytes, then
calls the implementation twice, on outputs poisoned first with NaN and then with 42 (an element
left unwritten shows). After each call the input must be unchanged ("modified its input"), and
for a learner's file, whose row kernel the checker calls itself, the guard regions around the
output must be intact (a write past either end shows). A crash becomes the case's verdict; a
refusal by design of a registry implementation (SoftmaxArgumentError for a valid input, e.g.
triton-naive's rows longer than one block) is "not applicable". harness/isolate.py runs these
cases in a worker process, so that a fault or a hang ends one case, not the run.
"""

from __future__ import annotations

import dataclasses
import math

import torch

from phase24.harness.cases import DTYPES, Case, big_case, standard_cases
from phase24.softmax import softmax_reference
from phase24.softmax.args import DTYPE_TAG, SoftmaxArgumentError, poisoned_outputs, rows_view

# Per dtype: elementwise |out - ref| <= RTOL * |ref| + ATOL, and the whole tensor's relative
# L2 error below RTOL. RTOL covers rounding the result to the dtype (2^-24, 2^-11, 2^-8) plus
# float32 arithmetic over rows of up to ~10^6 elements; row sums must be 1 within RTOL too.
TOLERANCES = {
    torch.float32: (5e-5, 1e-12),
    torch.float16: (2e-3, 1e-7),
    torch.bfloat16: (1.6e-2, 1e-30),
}
GUARD = 65536        # elements of guard region before and after a learner's output
GUARD_VALUE = -3.0   # what they hold: exact in every dtype, and never a probability


@dataclasses.dataclass
class Verdict:
    impl: str
    dtype: str
    case: str
    rel_l2: float
    worst: float  # largest |out - ref| / (RTOL |ref| + ATOL); must be <= 1
    row_sum_err: float
    ok: bool      # passed, or not applicable
    why: str = ""
    na: bool = False  # not applicable: the implementation refuses this input by design


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
        why.append(f"a row's sum is off by {sum_err:.2g}")
    return rel_l2, worst, sum_err, "; ".join(why)


def _rows_to_check(x2d_rows: int, sample: int | None, gen: torch.Generator) -> torch.Tensor | None:
    if sample is None or x2d_rows <= sample:
        return None
    picks = torch.randint(0, x2d_rows, (sample,), generator=torch.Generator().manual_seed(
        int(gen.initial_seed())))
    return torch.unique(torch.cat([torch.tensor([0, x2d_rows - 1]), picks]))


def storage_bytes(x: torch.Tensor) -> torch.Tensor:
    """All the bytes of x's storage (a view's gaps included), as a flat uint8 tensor."""
    return torch.empty(0, dtype=torch.uint8, device=x.device).set_(x.untyped_storage())


def guarded_call(row_kernel, x: torch.Tensor, poison: float) -> tuple[torch.Tensor, str]:
    """Run a row kernel into an output with guard regions; (output, what it wrote outside)."""
    n, numel = x.shape[-1], x.numel()
    buf = torch.full((GUARD + numel + GUARD,), GUARD_VALUE, dtype=x.dtype, device=x.device)
    out = buf[GUARD:GUARD + numel].view(x.shape).fill_(poison)
    if numel:
        row_kernel(rows_view(x), out.view(-1, n))
    if x.is_cuda:
        torch.cuda.synchronize(x.device)
    before = (buf[:GUARD] != GUARD_VALUE).sum().item()
    after = (buf[GUARD + numel:] != GUARD_VALUE).sum().item()
    wrote = [f"{k} elements {where}" for k, where in ((before, "before its start"),
                                                        (after, "after its end")) if k]
    return out, ("wrote outside its output: " + " and ".join(wrote)) if wrote else ""


CUDA_FAULTS = {  # the driver's words -> the verdict
    "illegal memory access": "illegal memory access (a read or write outside the tensors)",
    "misaligned address": "misaligned address (a vector access off its alignment)",
    "illegal instruction": "illegal instruction",
    "unspecified launch failure": "the kernel crashed (unspecified launch failure)",
    "too many resources requested": "launch failed: too many resources requested for the block",
}


def short_error(err: BaseException) -> str:
    """A crash as one line: a GPU fault by its name, else the exception's first line."""
    text = str(err)
    for needle, said in CUDA_FAULTS.items():
        if needle in text:
            return said
    first = text.strip().splitlines()[0] if text.strip() else ""
    if isinstance(err, ValueError) and type(err).__module__.startswith("phase24"):
        return first  # the lab's own errors say what is wrong in words
    kind = type(err).__name__
    return f"{kind}: {first}" if first else kind


def _run_twice(fn, x: torch.Tensor, saved: torch.Tensor) -> tuple[list, str]:
    """The two poisoned calls; (outputs, the first problem found other than accuracy)."""
    rows = getattr(fn, "row_kernel", None)
    outs = []
    for poison in (float("nan"), 42.0):  # unwritten elements show as NaN, then as 42
        if rows is not None:
            out, outside = guarded_call(rows, x, poison)
        else:
            with poisoned_outputs(poison):
                out, outside = fn(x), ""
            if x.is_cuda:
                torch.cuda.synchronize(x.device)
        if not torch.equal(storage_bytes(x), saved):
            return outs, "modified its input (the input must be read, never written)"
        if outside:
            return outs, outside
        outs.append(out)
    return outs, ""


def check_case(name: str, fn, case: Case, dtype: torch.dtype, device: str, seed: int) -> Verdict:
    gen = torch.Generator(device=device).manual_seed(seed)
    x = case.make(dtype, device, gen)
    dtname = str(dtype).removeprefix("torch.")

    def failed(why, na=False):
        return Verdict(name, dtname, case.name, math.inf, math.inf, math.inf, na, why, na)

    learner = getattr(fn, "row_kernel", None) is not None
    try:
        rows = _rows_to_check(math.prod(x.shape[:-1]), case.sample_rows, gen)
        if rows is not None:
            rows = rows.to(x.device)
        picked = (lambda t: t.reshape(-1, x.shape[-1])[rows]) if rows is not None else (lambda t: t)
        ref = softmax_reference(picked(x))  # from the input as it is before any call
        saved = storage_bytes(x).clone()
        outs, problem = _run_twice(fn, x, saved)
        if problem:
            return failed(problem)
        outs = [picked(o) for o in outs]
        results = [compare(o, ref, dtype) for o in outs]
    except SoftmaxArgumentError as err:
        if learner:
            return failed(short_error(err))
        return failed(f"SoftmaxArgumentError: {err}", na=True)  # a limit by design
    except Exception as err:  # a crash is a failed case with its message, not a stack trace
        return failed(short_error(err))
    rel, worst, sums, why = max(results, key=lambda r: (bool(r[3]), r[1]))
    if not why and not torch.equal(outs[0].nan_to_num(7.0), outs[1].nan_to_num(7.0)):
        why = "two runs on the same input differ (a race, or an element left unwritten)"
    return Verdict(name, dtname, case.name, rel, worst, sums, not why, why)


@dataclasses.dataclass(frozen=True)
class Job:
    impl: str
    dtype: str
    case: Case
    seed: int


def jobs(impls: list[str], dtypes: list[str], device: str, seed: int, big: bool = False,
         only: str | None = None) -> list[Job]:
    """Every (implementation, dtype, case) to check, in order, each with its own seed (the same
    whether or not ``only`` keeps just the cases whose name contains it)."""
    cases = standard_cases(gpu=device == "cuda") + ([big_case()] if big else [])
    return [Job(name, dt, case, seed + 1000 * i + j) for i, name in enumerate(impls)
            for dt in dtypes for j, case in enumerate(cases)
            if not (case.gpu_only and device != "cuda") and (not only or only in case.name)]


def run_job(job: Job, fn, device: str) -> Verdict:
    v = check_case(job.impl, fn, job.case, DTYPES[job.dtype], device, job.seed)
    if job.case.gpu_only:
        torch.cuda.empty_cache()
    return v


def run_checks(impls: dict, dtypes: list[torch.dtype], device: str, seed: int,
               big: bool = False, on_result=None) -> list[Verdict]:
    """Every case in this process (harness/isolate.py runs them in a worker instead)."""
    names = [str(d).removeprefix("torch.") for d in dtypes]
    verdicts = []
    for job in jobs(list(impls), names, device, seed, big):
        verdicts.append(run_job(job, impls[job.impl], device))
        if on_result:
            on_result(verdicts[-1])
    return verdicts


def tolerance_table() -> str:
    return ", ".join(f"{DTYPE_TAG[d]} {r:g}/{a:g}"
                     for d, (r, a) in TOLERANCES.items())
