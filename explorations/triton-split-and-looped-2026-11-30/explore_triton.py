"""Explore `triton`'s few-row and long-row plans on a GPU: correctness first, then time.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_triton.py OUT.json

For the few-row shapes (M < SMs) and the bulk shapes with N >= 16384, float32 and bfloat16:
torch, the default `triton` (autotuned on bulk shapes; the tuning log is printed) and a few
forced plans, each checked against the float64 reference on the whole output (no NaN where the
reference is finite, errors within the test tolerances) before it is timed. A failing or slow
(> 50 ms) plan is not timed. Times are the bench's (harness time_us: L2 flushed, ~150 us of GPU
sleep before each call). Few-row shapes also get, per plan, the host time of one call (Python
and launches, CPU clock, no sync) and the GPU time with a 1 ms sleep before each call: when the
host time exceeds what the bench's sleep and flush hide, the bench's number includes it.
The few-row default is also run with PHASE24_TRITON_DIRECT=0 (every launch through Triton's JIT)
to compare its host time with the cached direct launches.

Nothing can hang: the fused split gives up after WAIT_NS (0.1 s here), any exception is printed
and the script goes on, and no new shape begins after BUDGET_S seconds.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, replace

import torch
import triton

from phase24.harness.bench import copy_gbps, standard_shapes, time_us
from phase24.softmax import softmax_reference
from phase24.softmax import triton_impls as T

BUDGET_S = 100  # seconds after start: no new shape begins later (whole run stays < 120 s)
SLOW_S = 0.05  # a single call slower than this is a timeout (or worse): not timed
# (relative error of the whole output, elementwise relative bound, absolute floor), as in
# tests/test_triton_softmax.py
TOL = {torch.float32: (2e-6, 1e-5, 1e-30), torch.bfloat16: (6e-3, 8e-3, 1e-30)}
T0 = time.time()
_flush = None


def host_and_quiet_us(fn) -> tuple[float, float]:
    """(host microseconds per call, median GPU microseconds with a 1 ms sleep before each)."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    torch.cuda.synchronize()
    torch.cuda._sleep(20_000_000)  # ~10 ms: the GPU is busy, the calls below only queue
    t = time.perf_counter()
    for _ in range(20):
        fn()
    host = (time.perf_counter() - t) / 20 * 1e6
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(60)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(60)]
    for s, e in zip(starts, ends):
        _flush.zero_()
        torch.cuda._sleep(2_000_000)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return host, 1000.0 * times[len(times) // 2]


def check(out: torch.Tensor, x: torch.Tensor, ref: torch.Tensor) -> str:
    """'' when out matches the float64 reference within the test tolerances, else why not."""
    got = out.to(torch.float64)
    bad_nan = int((got.isnan() & ~ref.isnan()).sum())
    if bad_nan:
        return f"{bad_nan} NaN where the reference is finite"
    fin = ~ref.isnan()
    r, g = ref[fin], got[fin]
    rel_all, rel_elem, atol = TOL[x.dtype]
    rel = ((g - r).norm() / r.norm()).item()
    worst = ((g - r).abs() / (rel_elem * r.abs() + atol)).max().item()
    sums = got.sum(-1)
    why = []
    if rel > rel_all:
        why.append(f"relative error {rel:.3g}")
    if worst > 1:
        why.append(f"elementwise error {worst:.3g}x the bound")
    if (sums - 1).abs().max().item() > 2 * rel_elem + x.shape[-1] * 1e-7:
        why.append("rows do not sum to 1")
    return "; ".join(why)



def plans_for(m: int, n: int, x: torch.Tensor, sms: int) -> list[T.Plan]:
    """Few rows: the default and 2-3 alternatives. Bulk: the autotuner's candidates (the
    default first) and the fused split (the previous default, for comparison)."""
    elem = x.element_size()
    first = T.default_plan(m, n, elem, sms)
    if first.path == "split":
        first = replace(first, mode=first._mode())  # "auto" resolved: no duplicate below
    bn = T._next_pow2(n)
    if m < sms:
        seg = T.few_rows_seg(m, n, sms)
        plans = [first, T._split_plan(seg, "twopass"), T._split_plan(max(512, seg // 2),
                                                                     "twopass")]
        if bn > T.FEW_ROWS_MAX_BLOCK:
            plans.append(T._split_plan(seg, "fused"))
        return list(dict.fromkeys(plans))
    plans = T.candidate_plans(m, n, elem, sms)
    if first.path == "split":
        plans.append(replace(first, mode="fused"))
        plans.append(replace(T._looped_plan(elem, 2, T.LOOPED_L2_MB), num_stages=2))
    return list(dict.fromkeys(plans))


def run_one(label: str, fn, x, ref, nbytes: int, copy: float, rows: list, few: bool,
            extra=None) -> None:
    rec = {"plan": label, **(extra or {})}
    try:
        fn()  # compiles (and autotunes, for the default)
        torch.cuda.synchronize()
        t = time.time()
        out = fn()
        torch.cuda.synchronize()
        wall = time.time() - t
        why = check(out, x, ref) if ref is not None else ""
        del out
        if wall > SLOW_S:
            why = (why + "; " if why else "") + f"one call took {1e3 * wall:.1f} ms"
        rec["ok"], rec["why"] = not why, why
        if not why:
            us = time_us(fn)
            rec["us"] = round(us, 2)
            rec["pct_copy"] = round(100 * nbytes / us / 1e3 / copy, 1)
            if few:
                rec["host_us"], rec["quiet_us"] = (round(v, 2) for v in host_and_quiet_us(fn))
    except Exception as exc:  # noqa: BLE001
        rec["ok"], rec["why"] = False, f"{type(exc).__name__}: {exc}"[:300]
    rows.append(rec)
    us = f"{rec['us']:9.2f} us {rec['pct_copy']:5.1f}%" if "us" in rec else " " * 19
    more = (f"  [host {rec['host_us']:6.1f} us, gpu-quiet {rec['quiet_us']:7.2f} us]"
            if "host_us" in rec else "")
    print(f"    {us}  {'OK  ' if rec['ok'] else 'FAIL'} {label}{more}"
          + ("" if rec["ok"] else f"  <- {rec['why']}"), flush=True)


def sweep(results: dict, copy: float) -> None:
    sms = T._num_sms(torch.device("cuda"))
    shapes = [s for s in standard_shapes() if s[1] >= 16384 or s[0] < sms]
    shapes.sort(key=lambda s: (s[0] >= sms, s[1]))  # few rows first
    for dtype in (torch.float32, torch.bfloat16):
        for m, n in shapes:
            if time.time() - T0 > BUDGET_S:
                print(f"  budget spent: skipping {dtype} {m}x{n}")
                continue
            few = m < sms
            print(f"== {dtype} {m}x{n} ==", flush=True)
            x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
            ref = softmax_reference(x)
            nbytes = 2 * x.numel() * x.element_size()
            rows: list = []
            run_one("torch.softmax", lambda: torch.softmax(x, -1), x, None, nbytes, copy, rows,
                    few)
            run_one("triton default", lambda: T.triton_softmax(x), x, ref, nbytes, copy, rows,
                    few)
            rows[-1]["chosen"] = T.chosen_config(x)
            print(f"      default ran: {rows[-1]['chosen']}")
            if few:  # the same launches through Triton's JIT every time (host time compared)
                os.environ["PHASE24_TRITON_DIRECT"] = "0"
                T.clear_launch_cache()
                run_one("triton default, JIT launches (PHASE24_TRITON_DIRECT=0)",
                        lambda: T.triton_softmax(x), x, ref, nbytes, copy, rows, few)
                del os.environ["PHASE24_TRITON_DIRECT"]
                T.clear_launch_cache()
            key = T._tune_key(m, n, x, sms)
            if key in T.TUNING_LOG:
                rows[-1]["tuning_log"] = T.TUNING_LOG[key]
                for desc, ms in T.TUNING_LOG[key]:
                    print(f"      tuned: {ms if isinstance(ms, str) else f'{1e3 * ms:9.2f} us'}"
                          f"  {desc}")
            for plan in plans_for(m, n, x, sms):
                run_one(plan.describe(n, sms), lambda p=plan: T.triton_softmax(x, plan=p), x,
                        ref, nbytes, copy, rows, few, {"config": asdict(plan)})
            results["shapes"].append({"dtype": str(dtype).replace("torch.", ""), "M": m,
                                      "N": n, "runs": rows})
            del x, ref
            torch.cuda.empty_cache()


def main(out_path: str) -> None:
    T.WAIT_NS = 100_000_000  # 0.1 s: a broken wait costs little here
    results: dict = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
                     "torch": torch.__version__, "shapes": []}
    copy = copy_gbps()
    results["copy_gbps"] = round(copy, 1)
    print(f"copy: {copy:.0f} GB/s   ({time.time() - T0:.0f} s so far)")
    try:
        sweep(results, copy)
    finally:
        results["elapsed_s"] = round(time.time() - T0, 1)
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)
        print(f"wrote {out_path} after {results['elapsed_s']} s")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not torch.cuda.is_available():
        sys.exit(__doc__)
    main(sys.argv[1])
