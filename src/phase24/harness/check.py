"""`phase24 check OP`: every implementation against the operation's float64 reference.

Each case makes fresh inputs and saves their bytes, then calls the implementation three times
(check_case), into outputs poisoned with NaN or 42 (an element left unwritten shows) that sit
inside guard regions (a write past either end shows); after each call every input must be
unchanged ("modified its input"); only then are the float64 references computed. A crash becomes the case's
verdict; a refusal by design of a registry implementation (the operation's argument error for a
valid input, e.g. a rung whose rows must fit one block) is "not applicable". harness/isolate.py
runs these cases in a worker process, so that a fault or a hang ends one case, not the run.
"""

from __future__ import annotations

import dataclasses
import math

import torch

from phase24.core.cases import Case
from phase24.core.dtypes import DTYPES, NAME
from phase24.core.op import Op, OpArgumentError
from phase24.core.outputs import GUARD, guarded, outside, storage_bytes


@dataclasses.dataclass
class Verdict:
    impl: str
    dtype: str
    case: str
    rel_l2: float
    worst: float  # largest |out - ref| / tolerance; must be <= 1
    extra: float  # the operation's own figure (softmax: the worst row sum's error)
    ok: bool      # passed, or not applicable
    why: str = ""
    na: bool = False  # not applicable: the implementation refuses this input by design


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


FRESH = 24301  # a case's third call draws inputs from seed + FRESH (CPU generators keep 32 bits)


def _rows_to_check(rows: int, sample: int | None, seed: int) -> torch.Tensor | None:
    if sample is None or rows <= sample:
        return None
    picks = torch.randint(0, rows, (sample,), generator=torch.Generator().manual_seed(seed))
    return torch.unique(torch.cat([torch.tensor([0, rows - 1]), picks]))


def local(fn, device: str):
    """A call of ``fn`` in this process: (inputs, poison, shape, dtype) -> (the guarded buffer
    it wrote into, its inputs as they are after the call)."""
    def call(inputs, poison, shape, dtype):
        buf, out = guarded(shape, dtype, device, poison)
        fn(*inputs, out=out)
        if device == "cuda":
            torch.cuda.synchronize()
        return buf, inputs

    return call


def _run(call, calls: list[tuple[tuple, float]], shape, dtype) -> tuple[list, str]:
    """Each (inputs, poison) call into a guarded output poisoned with that value; (outputs, the
    first problem found other than accuracy)."""
    numel = math.prod(shape)
    saved = {id(x): storage_bytes(x).clone() for inputs, _ in calls for x in inputs}
    outs = []
    for inputs, poison in calls:
        buf, after = call(inputs, poison, shape, dtype)
        if len(after) != len(inputs) or any(
                not torch.equal(storage_bytes(y).to(x.device), saved[id(x)])
                for x, y in zip(inputs, after)):
            return outs, "modified its input (the input must be read, never written)"
        wrote = outside(buf, numel)
        if wrote:
            return outs, wrote
        outs.append(buf[GUARD:GUARD + numel].view(shape))
    return outs, ""


def check_case(op: Op, name: str, fn, case: Case, dtype: torch.dtype, device: str, seed: int,
               learner: bool = False, call=None) -> Verdict:
    """Three calls: two on the same inputs, into outputs poisoned with NaN then 42 (an element
    left unwritten shows; two results that differ show a race), and one on fresh inputs of the
    same shape (a result kept from an earlier call shows). The implementation runs before any
    reference is computed (it cannot find the reference's freed memory), and every input must be
    unchanged byte for byte, so the references are those of the inputs as they were made.
    ``call`` makes one call of ``fn`` (by default ``local(fn, device)``, in this process;
    harness/decide.py's makes it in a worker); ``device`` is where the inputs are made and the
    references computed."""
    call = call or local(fn, device)
    inputs = case.make(dtype, device, torch.Generator(device=device).manual_seed(seed))
    fresh = case.make(dtype, device, torch.Generator(device=device).manual_seed(seed + FRESH))

    def failed(why, na=False):
        return Verdict(name, NAME[dtype], case.name, math.inf, math.inf, math.inf, na, why, na)

    try:
        shape, out_dtype = op.result_like(inputs)
        outs, problem = _run(call, [(inputs, float("nan")), (inputs, 42.0),
                                    (fresh, float("nan"))], shape, out_dtype)
        if problem:
            return failed(problem)
        rows = _rows_to_check(op.rows(inputs), case.sample_rows, seed)
        if rows is not None:
            rows = rows.to(device)
        ref = op.reference(*inputs, rows=rows)
        ref_fresh = op.reference(*fresh, rows=rows)
        outs = [op.pick(o, rows) for o in outs]
        results = [op.compare(o, r, dtype) for o, r in zip(outs, (ref, ref, ref_fresh))]
    except OpArgumentError as err:
        if learner:
            return failed(short_error(err))
        return failed(f"{type(err).__name__}: {err}", na=True)  # a limit by design
    except Exception as err:  # a crash is a failed case with its message, not a stack trace
        return failed(short_error(err))
    worst = max(results, key=lambda r: (bool(r.why), r.worst))
    why = worst.why
    if results[2].why and not results[0].why:
        why = f"wrong on fresh inputs of the same shape (a result kept from an earlier call?): " \
              f"{results[2].why}"
    if not why and not torch.equal(outs[0].nan_to_num(7.0), outs[1].nan_to_num(7.0)):
        why = "two runs on the same input differ (a race, or an element left unwritten)"
    return Verdict(name, NAME[dtype], case.name, worst.rel_l2, worst.worst, worst.extra,
                   not why, why)


DTYPE_ORDER = list(DTYPES)  # a dtype's place in the seeds of jobs()


@dataclasses.dataclass(frozen=True)
class Job:
    impl: str
    dtype: str
    case: Case
    seed: int


def jobs(op: Op, impls: list[str], dtypes: list[str], device: str, seed: int, big: bool = False,
         only: str | None = None) -> list[Job]:
    """Every (implementation, dtype, case) to check, in order, each with its own seed (the same
    whether or not ``only`` keeps just the cases whose name contains it; each dtype's its own,
    so that no two dtypes of one case share their values)."""
    cases = op.cases(device == "cuda") + ([op.big_case()] if big else [])
    return [Job(name, dt, case, seed + 1000 * i + 100 * DTYPE_ORDER.index(dt) + j)
            for i, name in enumerate(impls) for dt in dtypes for j, case in enumerate(cases)
            if not (case.gpu_only and device != "cuda") and (not only or only in case.name)]


def run_job(op: Op, job: Job, fn, device: str, learner: bool = False) -> Verdict:
    v = check_case(op, job.impl, fn, job.case, DTYPES[job.dtype], device, job.seed, learner)
    if job.case.gpu_only:
        torch.cuda.empty_cache()
    return v
