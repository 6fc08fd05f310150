"""Explore `triton`'s long-row and few-row plans on a GPU: correctness first, then time.

Usage (GPU only): PYTHONPATH=src python3 scripts/explore_triton.py OUT.json

1. Wait smoke test. A small probe kernel makes programs of one launch wait for each other, the
   first program of every row arriving late on purpose (DELAY_NS), once with the first version's
   wait (a scalar tl.atomic_add polled in a loop) and once with the current one (per-thread
   acquire loads in PTX). For each program it logs the count it saw, the polls and the time.
   Then the first version of the whole fused split (kept below as `legacy_split_kernel`) and
   the current one run on 1x32768 and on many waves of programs (4096x65536, S = 32).
2. Sweep. For every standard shape with N >= 16384 or M < SMs, float32 and bfloat16: torch, the
   default `triton` (autotuned) and a few forced plans, each checked against the float64
   reference on the whole output (no NaN where the reference is finite, errors within the test
   tolerances) before it is timed. A failing or slow (> 50 ms) plan is not timed.

Nothing here can hang: every wait is bounded (the fused split gives up after WAIT_NS, lowered
to 0.1 s here), any exception is printed and the script goes on, and the sweep stops starting
new shapes after BUDGET_S seconds.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, replace

import torch
import triton
import triton.language as tl

from phase24.harness.bench import copy_gbps, standard_shapes, time_us
from phase24.softmax import softmax_reference
from phase24.softmax import triton_impls as T

BUDGET_S = 125  # seconds after start: no new shape begins later (whole run stays < 150 s)
SLOW_S = 0.05  # a single call slower than this is a timeout (or worse): not timed
# (relative error of the whole output, elementwise relative bound, absolute floor), as in
# tests/test_triton_softmax.py
TOL = {torch.float32: (2e-6, 1e-5, 1e-30), torch.bfloat16: (6e-3, 8e-3, 1e-30)}
LOG2E = tl.constexpr(1.4426950408889634)
T0 = time.time()


# ------------------------------------------------------------------------------ smoke test --

@triton.jit
def _timer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def wait_probe(sync_ptr, log_ptr, S, DELAY_NS: tl.constexpr, NEW: tl.constexpr,
               SPIN_LIMIT: tl.constexpr):
    # log per ticket: [count after own arrival (old wait), polls, count seen at the end, ns]
    t = tl.atomic_add(sync_ptr, 1, sem="relaxed")
    arrived = sync_ptr + 1 + t // S
    start = _timer()
    if t % S == 0:  # the row's first program arrives DELAY_NS late
        now = start
        while now - start < DELAY_NS:
            now = _timer()
    first = tl.full([], 0, tl.int32)
    polls = tl.full([], 0, tl.int32)
    if NEW:
        tl.atomic_add(arrived, 1, sem="release")
        seen = 0
        while (seen < S) & (polls < SPIN_LIMIT):
            seen = tl.inline_asm_elementwise(
                "nanosleep.u32 100;\n\tld.global.acquire.gpu.b32 $0, [$1];", "=r,l", [arrived],
                dtype=tl.int32, is_pure=False, pack=1)
            polls += 1
        seen = tl.min(seen + tl.zeros([128], tl.int32), axis=0)
    else:  # the first version's loop
        cnt = tl.atomic_add(arrived, 1, sem="acq_rel") + 1
        first = cnt
        while (cnt < S) & (polls < SPIN_LIMIT):
            cnt = tl.atomic_add(arrived, 0, sem="acquire")
            polls += 1
        seen = cnt
    ns = _timer() - start
    tl.store(log_ptr + 4 * t, first.to(tl.int64))
    tl.store(log_ptr + 4 * t + 1, polls.to(tl.int64))
    tl.store(log_ptr + 4 * t + 2, seen.to(tl.int64))
    tl.store(log_ptr + 4 * t + 3, ns)


@triton.jit
def legacy_split_kernel(x_ptr, out_ptr, part_ptr, sync_ptr, M, N, stride_x, S,
                        SEG: tl.constexpr, PBLOCK: tl.constexpr, SPIN_LIMIT: tl.constexpr):
    # The first version of the fused split (commit 290d6f9, PHASE 0, one chunk per program),
    # kept to see on the GPU whether it still fails and where.
    total = M * S
    t = tl.atomic_add(sync_ptr, 1, sem="relaxed")
    row = t // S
    seg = t - row * S
    x_row = x_ptr + row.to(tl.int64) * stride_x
    o_row = out_ptr + row.to(tl.int64) * N
    offs = seg * SEG + tl.arange(0, SEG)
    x0 = tl.load(x_row + offs, mask=offs < N, other=float("-inf")).to(tl.float32)
    m = tl.max(x0, axis=0)
    m_safe = tl.where(m == float("-inf"), 0.0, m)
    s = tl.sum(tl.exp2((x0 - m_safe) * LOG2E), axis=0)
    tl.store(part_ptr + t, m)
    tl.store(part_ptr + total + t, s)
    arrived = sync_ptr + 1 + row
    tl.debug_barrier()
    cnt = tl.atomic_add(arrived, 1, sem="acq_rel") + 1
    spins = tl.zeros_like(cnt)
    while (cnt < S) & (spins < SPIN_LIMIT):
        cnt = tl.atomic_add(arrived, 0, sem="acquire")
        spins += 1
    ok = cnt >= S
    pidx = tl.arange(0, PBLOCK)
    pm = tl.load(part_ptr + row * S + pidx, mask=pidx < S, other=float("-inf"),
                 cache_modifier=".cg")
    ps = tl.load(part_ptr + total + row * S + pidx, mask=pidx < S, other=0.0,
                 cache_modifier=".cg")
    m_row = tl.max(pm, axis=0)
    inv = 1.0 / tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
    inv = tl.where(ok, inv, float("nan"))
    y0 = tl.exp2((x0 - m_row) * LOG2E) * inv
    tl.store(o_row + offs, y0.to(out_ptr.dtype.element_ty), mask=offs < N)


def legacy_softmax(x: torch.Tensor, seg: int, warps: int) -> torch.Tensor:
    m, n = x.shape
    s = -(-n // seg)
    assert s <= 128
    ws = torch.zeros(1 + m + 2 * m * s, dtype=torch.int32, device=x.device)
    out = torch.empty_like(x)
    legacy_split_kernel[(m * s,)](x, out, ws[1 + m:].view(torch.float32), ws[:1 + m], m, n,
                                  x.stride(0), s, SEG=seg, PBLOCK=128, SPIN_LIMIT=1 << 18,
                                  num_warps=warps)
    return out


def probe(rows: int, s: int, delay_ns: int, new: bool) -> dict:
    ws = torch.zeros(1 + rows, dtype=torch.int32, device="cuda")
    log = torch.zeros(rows * s, 4, dtype=torch.int64, device="cuda")
    t = time.time()
    wait_probe[(rows * s,)](ws, log, s, DELAY_NS=delay_ns, NEW=new, SPIN_LIMIT=1 << 18,
                            num_warps=4)
    torch.cuda.synchronize()
    wall = time.time() - t
    log = log.cpu()
    short = int((log[:, 2] < s).sum())
    return {"wait": "new" if new else "first version", "rows": rows, "S": s,
            "delay_us": delay_ns / 1e3, "wall_ms": round(1e3 * wall, 2),
            "programs_that_saw_fewer_than_S": short,
            "polls_min_max": [int(log[:, 1].min()), int(log[:, 1].max())],
            "wait_us_min_max": [round(float(log[:, 3].min()) / 1e3, 2),
                                round(float(log[:, 3].max()) / 1e3, 2)],
            "first_programs": log[:min(4, rows * s)].tolist()}


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


def smoke(results: dict) -> None:
    print("== wait smoke test (first program of each row delayed) ==")
    for new in (False, True):
        for rows, s, delay in ((1, 16, 0), (1, 16, 200_000), (64, 32, 100_000)):
            try:
                r = probe(rows, s, delay, new)
                print(f"  probe {r['wait']:13s} {rows}x{s} delay {delay / 1e3:5.0f} us: "
                      f"{r['programs_that_saw_fewer_than_S']} short, polls {r['polls_min_max']},"
                      f" wait us {r['wait_us_min_max']}, wall {r['wall_ms']} ms")
                results["smoke"].append(r)
            except Exception as exc:  # noqa: BLE001
                print(f"  probe new={new} {rows}x{s}: {type(exc).__name__}: {exc}"[:300])
    # The first version only on small launches: if its waits time out, each costs ~0.2 s.
    for m, n, dtype, seg, warps in ((1, 32768, torch.float32, 2048, 4),
                                    (64, 262144, torch.float32, 8192, 16),
                                    (4096, 65536, torch.bfloat16, 2048, 4)):
        x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
        ref = softmax_reference(x)
        plan = T.Plan("split", seg=seg, num_warps=warps, mode="fused")
        kernels = [("current", lambda: T.triton_softmax(x, plan=plan))]
        if m * n <= 1 << 24:
            kernels.insert(0, ("first version", lambda: legacy_softmax(x, seg, warps)))
        for name, fn in kernels:
            try:
                fn()  # compile
                torch.cuda.synchronize()
                t = time.time()
                out = fn()
                torch.cuda.synchronize()
                wall = time.time() - t
                why = check(out, x, ref)
                nan_chunks = int(out.reshape(-1, seg).isnan().all(-1).sum())
                print(f"  fused split {name:13s} {m}x{n} {dtype} seg {seg}: "
                      f"{'OK' if not why else 'FAIL ' + why}; all-NaN chunks {nan_chunks}; "
                      f"one call {1e3 * wall:.2f} ms")
                results["smoke"].append({"kernel": name, "M": m, "N": n, "dtype": str(dtype),
                                         "seg": seg, "ok": not why, "why": why,
                                         "nan_chunks": nan_chunks, "wall_ms": 1e3 * wall})
            except Exception as exc:  # noqa: BLE001
                print(f"  fused split {name} {m}x{n}: {type(exc).__name__}: {exc}"[:300])
        del x, ref


# ----------------------------------------------------------------------------------- sweep --

def plans_for(m: int, n: int, elem: int, sms: int) -> list[T.Plan]:
    """The autotuner's candidates plus, for few rows, smaller and larger fused chunks."""
    plans = T.candidate_plans(m, n, elem, sms)
    if m < sms:
        base = T.few_rows_seg(m, n, sms)
        for seg in (base // 2, base * 2):
            if T.SPLIT_SEG_MIN // 2 <= seg <= T.SPLIT_SEG and -(-n // seg) <= sms:
                plans.append(T._split_plan(seg))
    plans = [replace(p, mode="fused") if p.path == "split" and p.mode == "auto" else p
             for p in plans]
    return list(dict.fromkeys(plans))[:6]


def run_one(label: str, fn, x, ref, nbytes: int, copy: float, rows: list, extra=None) -> None:
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
    except Exception as exc:  # noqa: BLE001
        rec["ok"], rec["why"] = False, f"{type(exc).__name__}: {exc}"[:300]
    rows.append(rec)
    us = f"{rec['us']:9.2f} us {rec['pct_copy']:5.1f}%" if "us" in rec else " " * 19
    print(f"    {us}  {'OK  ' if rec['ok'] else 'FAIL'} {label}"
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
            print(f"== {dtype} {m}x{n} ==", flush=True)
            x = torch.randn(m, n, device="cuda").mul_(3).to(dtype)
            ref = softmax_reference(x)
            nbytes = 2 * x.numel() * x.element_size()
            rows: list = []
            run_one("torch.softmax", lambda: torch.softmax(x, -1), x, None, nbytes, copy, rows)
            run_one("triton default", lambda: T.triton_softmax(x), x, ref, nbytes, copy, rows)
            rows[-1]["chosen"] = T.chosen_config(x)
            print(f"      default ran: {rows[-1]['chosen']}")
            for plan in plans_for(m, n, x.element_size(), sms):
                run_one(plan.describe(n, sms), lambda p=plan: T.triton_softmax(x, plan=p), x,
                        ref, nbytes, copy, rows, {"config": asdict(plan)})
            results["shapes"].append({"dtype": str(dtype).replace("torch.", ""), "M": m,
                                      "N": n, "runs": rows})
            del x, ref
            torch.cuda.empty_cache()


def main(out_path: str) -> None:
    T.WAIT_NS = 100_000_000  # 0.1 s: a broken wait costs little here
    results: dict = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
                     "torch": torch.__version__, "smoke": [], "shapes": []}
    try:
        smoke(results)
    except Exception as exc:  # noqa: BLE001
        print(f"smoke test failed: {type(exc).__name__}: {exc}"[:300])
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
