"""Triton softmax implementations: ``triton-naive`` and ``triton``.

``triton-naive`` is the direct translation: one program per row, the whole row in one block.

``triton`` picks one of three shapes of work from the row length N (padded to a power of two,
BLOCK_N), the element size and the number of rows M:

* short rows (BLOCK_N * element size <= 2 KB): ``rows_kernel`` with a tile of several rows, so
  that each program moves ~16 KB; without this a 128-float row keeps a program busy for 512 bytes.
* medium rows (BLOCK_N up to 32768, any dtype): ``rows_kernel`` with one row per tile,
  persistent programs (grid = SMs x the programs that fit on an SM) striding over rows. Few rows
  (M < SMs) take this path too when BLOCK_N <= 32768: one launch, no workspace.
* long rows (and few rows longer than 32768): ``split_kernel``. A row is cut into chunks of SEG
  values spread over S programs; by default in two launches (partial (max, sum) per chunk, then
  combine and write: the input is read twice, at best 67% of copy). The one-launch "fused" mode,
  where the programs of a row wait for each other's partials and write from registers, is
  correct on the H200 but was slower and erratic in the H200 exploration run of 2026-11-30; it is
  kept for PHASE24_TRITON_SPLIT_MODE=fused and forced plans. The autotuner also tries
  ``looped_kernel`` (one program per row, two passes over the row, with the programs in flight
  capped so that the second read can hit the L2; not yet measured) and, for bfloat16, rows tiles
  kept in bfloat16 (not yet measured).

On a GPU, bulk shapes (M >= SMs, M*N >= 2^22) are autotuned once per (dtype, BLOCK_N) among a
few candidate plans (set PHASE24_TRITON_AUTOTUNE=0 to use the first, heuristic one);
``chosen_config(x)`` says which plan runs for ``x``. Without a GPU, with TRITON_INTERPRET=1, the
same kernels run in Triton's interpreter (the split always runs as two launches there: the
interpreter runs programs one after another, so one cannot wait for another).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, replace

import torch

from phase24.softmax.args import (SoftmaxArgumentError, check_input, run_rows,
                                  triton_interpreter_active)

# triton is imported only when a Triton softmax first runs: its interpreter is chosen by
# TRITON_INTERPRET at the moment triton is imported, so importing phase24.softmax must not fix it.
try:
    TRITON_AVAILABLE = importlib.util.find_spec("triton") is not None
except (ImportError, ValueError):
    TRITON_AVAILABLE = False

# Dispatch thresholds (module constants so that tests and learners can move them).
SHORT_ROW_BYTES = 2048           # BLOCK_N * element size up to this: several rows per tile
ROWS_TILE = 2048                 # elements per tile for short and medium-short rows
ROWS_MAX_BLOCK = {4: 32768, 2: 32768}  # longest BLOCK_N the default plan holds in one block
ROWS_MAX_CANDIDATE = 32768       # longest BLOCK_N the autotuner also tries in one block
LOWP_MAX_BLOCK = 65536           # longest BLOCK_N of the bf16-kept rows candidates
FEW_ROWS_MAX_BLOCK = 32768       # with M < SMs, longer rows are split over programs
LOOPED_CHUNK_BYTES = 16384       # looped kernel: bytes per chunk (4096 fp32, 8192 16-bit)
LOOPED_L2_MB = 32                # looped kernel: rows in flight at most this many MB (L2 50 MB)
SPLIT_SEG = 8192                 # elements per chunk of a split row (bulk), any dtype
SPLIT_SEG_MIN = 1024             # smallest chunk when splitting few rows
SPLIT_MIN_N = 16384              # bulk rows this long also try a split (autotuner candidates)
NAIVE_MAX_N = 65536              # triton-naive holds a row in one block; beyond this it refuses
INTERPRETER_SMS = 4              # the "number of SMs" used to size grids in the interpreter
WAIT_NS = 10**9                  # fused split on a GPU: give up waiting (write NaN) after 1 s
INTERPRETER_SPIN_LIMIT = 64      # interpreter polls (programs run in turn: a wait never succeeds)
TUNE_MIN_ELEMENTS = 1 << 22      # only shapes this large are autotuned (timings mean something)


@dataclass(frozen=True)
class Plan:
    """How ``triton`` runs one shape. Fields unused by a path are left at their defaults."""

    path: str                    # "rows", "split" or "looped"
    num_warps: int = 4
    block_m: int = 1             # rows: rows per tile
    per_sm: int = 0              # rows: 0 = one tile per program; k = persistent grid of k x SMs
    num_stages: int = 1          # rows, looped: software-pipelining depth of the loops
    lowp: bool = False           # rows, bfloat16 only: keep the tile in bfloat16 (see kernel)
    seg: int = 8192              # split, looped: elements per chunk
    s_max: int = 0               # split: cap on programs per row (0 = number of SMs)
    mode: str = "auto"           # split: "fused" (one kernel), "twopass", or "auto"
    spin_limit: int = 0          # split, interpreter: polls (0 = INTERPRETER_SPIN_LIMIT)
    pblock: int = 0              # split: partials combined per step (0 = enough for S, <= 256)
    l2_mb: int = 0               # looped: cap programs so that rows in flight fit this (0: none)
    hints: bool = True           # looped: L2 eviction hints on the loads and stores

    def describe(self, n: int | None = None, sms: int | None = None) -> str:
        if self.path == "rows":
            bn = f"{_next_pow2(n)}" if n is not None else "BLOCK_N"
            grid = ("one tile per program" if self.per_sm == 0
                    else f"persistent grid {self.per_sm}xSMs")
            return (f"rows_kernel: tile {self.block_m}x{bn}, {self.num_warps} warps, {grid}, "
                    f"num_stages={self.num_stages}" + (", bf16 kept" if self.lowp else ""))
        if self.path == "looped":
            text = (f"looped_kernel: chunks of {self.seg}, {self.num_warps} warps, "
                    f"{self.per_sm}xSMs programs")
            if self.l2_mb:
                text += f" (rows in flight <= {self.l2_mb} MB)"
            return text + f", num_stages={self.num_stages}" + ("" if self.hints else ", no hints")
        text = f"split_kernel: chunks of {self.seg}, {self.num_warps} warps"
        if n is not None and sms is not None:
            s, cpp = _split_shape(n, self.seg, self.s_max or sms)
            text += f", {s} programs per row x {cpp} chunk(s)"
        return text + f", mode={self._mode()}"

    def _mode(self) -> str:
        if self.mode != "auto":
            return self.mode
        if triton_interpreter_active():
            return "twopass"
        # "fused" makes programs of one launch wait for each other. It is correct on the H200
        # but was slower than two launches on every bulk long-row shape and erratic on few rows
        # (H200 exploration run of 2026-11-30: bulk 26-48% of copy against twopass's 54-66%), so
        # two launches are the default; PHASE24_TRITON_SPLIT_MODE=fused selects the waiting one.
        return os.environ.get("PHASE24_TRITON_SPLIT_MODE", "twopass")


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _prev_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n.bit_length() - 1)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _split_shape(n: int, seg: int, s_max: int) -> tuple[int, int]:
    """(programs per row, chunks per program) for a row of n values cut into chunks of seg."""
    chunks = max(1, _cdiv(n, seg))
    s = min(chunks, max(1, s_max))
    cpp = _cdiv(chunks, s)
    return _cdiv(chunks, cpp), cpp


_SMS: dict = {}


def _num_sms(device: torch.device) -> int:
    if device.type != "cuda":
        return INTERPRETER_SMS
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SMS:
        _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SMS[idx]


# Register budget (ptxas for sm_90a, checked on the CPU with triton.compile): with ~16 float32
# values per thread (ept) every kernel below stays at <= 64 registers. The fused split holds its
# chunk across the wait: 40 registers (fp32, 4-8 warps) to 50-55 (16 warps); at ept = 32 it needs
# 60-64 (bfloat16) and a rows tile of 32x128 ~160.


def _rows_plan(bn: int, tile: int, ept: int, per_sm: int, stages: int) -> Plan:
    """A rows plan: tiles of max(tile, bn) elements, ~ept float32 values per thread."""
    block_m = max(1, tile // bn)
    warps = min(32, max(4, block_m * bn // (32 * ept)))
    if per_sm < 0:  # as many programs per SM as fit by thread count (2048), at most 8
        per_sm = min(8, 64 // warps)
    return Plan("rows", num_warps=warps, block_m=block_m, per_sm=per_sm, num_stages=stages)


def _split_plan(seg: int, mode: str = "auto") -> Plan:
    return Plan("split", num_warps=min(32, max(4, seg // 512)), seg=seg,  # 16 values per thread
                mode=mode)


def _looped_plan(elem: int, per_sm: int, l2_mb: int, hints: bool = True) -> Plan:
    seg = LOOPED_CHUNK_BYTES // elem                                       # 16 values per thread
    return Plan("looped", num_warps=min(32, max(4, seg // 512)), seg=seg, per_sm=per_sm,
                l2_mb=l2_mb, hints=hints)


def _lowp_rows_plan(bn: int, warps: int, per_sm: int) -> Plan:
    return Plan("rows", num_warps=warps, block_m=1, per_sm=per_sm, lowp=True)


def few_rows_seg(m: int, n: int, sms: int) -> int:
    """Chunk size for few rows: about two programs per SM have work (M*S ~ 2 x SMs)."""
    return min(SPLIT_SEG, max(SPLIT_SEG_MIN, _prev_pow2(m * n // (2 * sms))))


def default_plan(m: int, n: int, elem: int, sms: int) -> Plan:
    """The heuristic plan (the autotuner's first candidate).

    Few rows (M < SMs): a row that fits one program (BLOCK_N <= 32768) runs in one program (one
    launch, no workspace); a longer one is split over programs in two launches. In the H200
    exploration run of 2026-11-30 these were the fastest measured plans but one (fp32 1x32768:
    two-launch split 7.3 us, one program 8.6 us; torch 14.1 us) and beat torch on all eight
    few-row shapes. Bulk rows longer than one program holds: the two-launch split (reads the
    input twice: 65.5% of copy fp32, 54.5% bf16 in that run); the autotuner also tries the
    looped one-program-per-row kernel.
    """
    bn = _next_pow2(n)
    if bn * elem <= SHORT_ROW_BYTES:
        return _rows_plan(bn, ROWS_TILE, 16, 0, 1)
    if m < sms:
        if bn <= FEW_ROWS_MAX_BLOCK:
            return _rows_plan(bn, ROWS_TILE, 16 if bn < 32768 else 32, -1, 1)
        return _split_plan(few_rows_seg(m, n, sms))
    if bn <= ROWS_MAX_BLOCK[elem]:
        return _rows_plan(bn, ROWS_TILE, 16 if bn < 32768 else 32, -1, 1)
    return _split_plan(SPLIT_SEG)


def candidate_plans(m: int, n: int, elem: int, sms: int, bf16: bool = False) -> list[Plan]:
    """The plans the autotuner times for a bulk shape; the first is the default.

    ``bf16``: the input is bfloat16, which adds the rows plans that keep the tile in bfloat16.
    """
    first = default_plan(m, n, elem, sms)
    bn = _next_pow2(n)
    cands = [first]
    if first.path == "rows" and bn * elem <= SHORT_ROW_BYTES:
        cands += [replace(first, per_sm=8, num_stages=3),      # persistent, pipelined
                  replace(first, per_sm=8)]                    # persistent
    elif first.path == "rows":
        if bn * elem <= 65536:                                 # room for 2 stages in smem
            cands.append(replace(first, num_stages=2))
        cands.append(replace(first, per_sm=0))                 # one tile per program
        if bf16 and bn >= 16384:
            cands += [_lowp_rows_plan(bn, 16, 2), _lowp_rows_plan(bn, 32, 1)]
    else:
        if bn <= ROWS_MAX_CANDIDATE:
            cands.append(_rows_plan(bn, ROWS_TILE, 32, -1, 1))
        if bf16 and bn <= LOWP_MAX_BLOCK:
            cands.append(_lowp_rows_plan(bn, 32, 1))
        cands += [_looped_plan(elem, 2, LOOPED_L2_MB), _looped_plan(elem, 2, 0),
                  _looped_plan(elem, 2, LOOPED_L2_MB // 2)]
    return list(dict.fromkeys(cands))  # without repeats, in order


# ---------------------------------------------------------------------------------------------
# Launching


def _launch(plan: Plan, x2d: torch.Tensor, out: torch.Tensor, sms: int) -> None:
    from phase24.softmax.triton_kernels import kernel

    m, n = x2d.shape
    if plan.path == "rows":
        n_tiles = _cdiv(m, plan.block_m)
        grid = n_tiles if plan.per_sm == 0 else min(n_tiles, plan.per_sm * sms)
        kernel("rows")[(grid,)](
            x2d, out, m, n, x2d.stride(0),
            BLOCK_M=plan.block_m, BLOCK_N=_next_pow2(n), NUM_STAGES=plan.num_stages,
            LOWP=plan.lowp and x2d.dtype == torch.bfloat16,
            num_warps=plan.num_warps, num_stages=plan.num_stages)
        return
    if plan.path == "looped":
        grid = min(m, max(1, plan.per_sm) * sms)
        if plan.l2_mb:
            grid = min(grid, max(1, (plan.l2_mb << 20) // (n * x2d.element_size())))
        kernel("looped")[(grid,)](
            x2d, out, m, n, x2d.stride(0), SEG=plan.seg, NUM_STAGES=plan.num_stages,
            HINTS=plan.hints, num_warps=plan.num_warps, num_stages=plan.num_stages)
        return
    if plan.path != "split":
        raise ValueError(f"unknown plan path {plan.path!r}")
    s, cpp = _split_shape(n, plan.seg, plan.s_max or sms)
    fused = plan._mode() == "fused"
    # One int32 buffer: [ticket counter, abort flag, M arrival counters, M*S maxima, M*S sums
    # (float32)]. The counters must start at zero for every launch of the fused kernel.
    alloc = torch.zeros if fused else torch.empty
    ws = alloc(2 + m + 2 * m * s, dtype=torch.int32, device=x2d.device)
    sync, parts = ws[:2 + m], ws[2 + m:].view(torch.float32)
    common = dict(SEG=plan.seg, PBLOCK=plan.pblock or min(256, max(16, _next_pow2(s))),
                  WAIT_NS=WAIT_NS, SPIN_LIMIT=plan.spin_limit or INTERPRETER_SPIN_LIMIT,
                  GPU=not triton_interpreter_active(), num_warps=plan.num_warps, num_stages=1)
    k = kernel("split")
    args = (x2d, out, parts, sync, m, n, x2d.stride(0), s, cpp)
    if fused:
        k[(m * s,)](*args, PHASE=0, **common)
    else:
        k[(m * s,)](*args, PHASE=1, **common)
        k[(m * s,)](*args, PHASE=2, **common)


_TUNED: dict = {}      # (device index, dtype, BLOCK_N) -> Plan
TUNING_LOG: dict = {}  # same key -> [(plan description, median ms or error text)]


def _autotune_enabled() -> bool:
    return (not triton_interpreter_active()
            and os.environ.get("PHASE24_TRITON_AUTOTUNE", "1") not in ("0", ""))


def _tune_key(m: int, n: int, x: torch.Tensor, sms: int):
    if (x.device.type != "cuda" or not _autotune_enabled() or m < sms
            or m * n < TUNE_MIN_ELEMENTS):
        return None
    return (x.device.index, x.dtype, _next_pow2(n))


def _tune(key, x2d: torch.Tensor, out: torch.Tensor, sms: int) -> Plan:
    import triton.testing

    m, n = x2d.shape
    cands = candidate_plans(m, n, x2d.element_size(), sms, x2d.dtype == torch.bfloat16)
    timed, log = [], []
    for plan in cands:
        try:
            _launch(plan, x2d, out, sms)  # compiles
            ms = triton.testing.do_bench(lambda p=plan: _launch(p, x2d, out, sms),
                                         warmup=5, rep=25, return_mode="median")
        except Exception as exc:  # e.g. out of shared memory: skip that candidate
            log.append((plan.describe(n, sms), f"failed: {type(exc).__name__}: {exc}"[:200]))
            continue
        timed.append((ms, len(timed), plan))
        log.append((plan.describe(n, sms), ms))
    TUNING_LOG[key] = log
    best = min(timed)[2] if timed else cands[0]
    _TUNED[key] = best
    return best


def _plan_for(x2d: torch.Tensor, out: torch.Tensor | None, sms: int) -> Plan:
    key = _tune_key(*x2d.shape, x2d, sms)
    if key is not None:
        plan = _TUNED.get(key)
        if plan is None and out is not None:
            plan = _tune(key, x2d, out, sms)
        if plan is not None:
            return plan
    m, n = x2d.shape
    return default_plan(m, n, x2d.element_size(), sms)


def softmax_rows(x2d: torch.Tensor, out: torch.Tensor, plan: Plan | None = None) -> None:
    """The row kernel of ``triton``: softmax of each row of x2d into out (see args.run_rows)."""
    if x2d.shape[1] >= 2**31 - 2**20:  # in-row offsets are int32
        raise SoftmaxArgumentError(f"triton: rows of {x2d.shape[1]} values are too long (< 2^31)")
    sms = _num_sms(x2d.device)
    if plan is None:
        plan = _plan_for(x2d, out, sms)
    if x2d.is_cuda and x2d.device.index != torch.cuda.current_device():
        with torch.cuda.device(x2d.device):
            _launch(plan, x2d, out, sms)
    else:
        _launch(plan, x2d, out, sms)


def naive_rows(x2d: torch.Tensor, out: torch.Tensor) -> None:
    """The row kernel of ``triton-naive``: one program per row, BLOCK_N >= N."""
    from phase24.softmax.triton_kernels import kernel

    m, n = x2d.shape
    bn = _next_pow2(n)
    warps = 4 if bn <= 2048 else 8 if bn <= 8192 else 16 if bn <= 16384 else 32
    kernel("naive")[(m,)](x2d, out, n, x2d.stride(0), BLOCK_N=bn, num_warps=warps)


def _check(x: object, name: str) -> torch.Tensor:
    return check_input(x, name, allow_cpu=triton_interpreter_active())


def triton_softmax(x: torch.Tensor, *, plan: Plan | None = None) -> torch.Tensor:
    """``triton``: softmax over the last dim; ``plan`` forces a path (tests use small ones)."""
    _check(x, "triton")
    if plan is None:
        return run_rows(softmax_rows, x)
    return run_rows(lambda a, o: softmax_rows(a, o, plan), x)


def triton_softmax_naive(x: torch.Tensor) -> torch.Tensor:
    """``triton-naive``: one program per row, the whole row in one block."""
    _check(x, "triton-naive")
    if x.shape[-1] > NAIVE_MAX_N:
        raise SoftmaxArgumentError(
            f"triton-naive: rows of {x.shape[-1]} values do not fit in one block (at most "
            f"{NAIVE_MAX_N}); use impl 'triton', which splits long rows")
    return run_rows(naive_rows, x)


def chosen_config(x: torch.Tensor) -> str:
    """Which plan ``triton`` runs (or would run) for a tensor like ``x``, in words."""
    n = x.shape[-1] if x.dim() else 1
    m = x.numel() // n if n else 0
    sms = _num_sms(x.device)
    key = _tune_key(m, n, x, sms)
    if key is not None and key in _TUNED:
        origin = f"autotuned among {len(TUNING_LOG.get(key, []))} candidates"
    elif key is not None:
        origin = "default; autotuned at the first call"
    else:
        origin = "default"
    plan = _TUNED.get(key) if key is not None and key in _TUNED else default_plan(
        m, n, x.element_size(), sms)
    where = "interpreter" if triton_interpreter_active() else str(x.device)
    return f"{plan.describe(n, sms)} [{origin}; {where}]"


def ran_in_interpreter() -> bool:
    """True when the Triton kernels run in Triton's CPU interpreter (TRITON_INTERPRET=1)."""
    return triton_interpreter_active()


IMPLEMENTATIONS: dict = (
    {"triton-naive": triton_softmax_naive, "triton": triton_softmax} if TRITON_AVAILABLE else {})
