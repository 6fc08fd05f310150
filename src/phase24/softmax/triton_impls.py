"""Triton softmax implementations: ``triton-naive`` and ``triton``.

``triton-naive`` is the direct translation: one program per row, the whole row in one block.

``triton`` picks one of three shapes of work from the row length N (padded to a power of two,
BLOCK_N), the element size and the number of rows M:

* short rows (BLOCK_N * element size <= 2 KB): ``rows_kernel`` with a tile of several rows, so
  that each program moves ~16 KB; without this a 128-float row keeps a program busy for 512 bytes.
* medium rows (BLOCK_N up to 32768, any dtype): ``rows_kernel`` with one row per tile,
  persistent programs (grid = SMs x the programs that fit on an SM) striding over rows. Few rows
  (M < SMs) take this path too when BLOCK_N <= 32768: one launch, no workspace.
* long rows (and few rows longer than 32768): a row is cut into chunks spread over programs.
  ``ring_kernel`` (gluon_kernels.py, Gluon; on a GPU the default for bulk long rows and the
  autotuner's first candidates, also tried on rows of 32768): the lagged kernel below with its
  chunks in a shared-memory ring, finished three steps after they arrive: 90.5-94.1% of copy for
  float32 rows of 65536-262144, 84.2-85.2% for bfloat16 rows of 32768-262144 (bench run of
  a2d0aa2). Rows that are not whole 16-byte copies, and GPUs before Ampere, run the lagged kernel.
  ``lagged_kernel`` (on a GPU: the few-row default, and among the autotuner's candidates for
  long bulk rows, where it beat the split and looped kernels on every shape in the H200
  exploration runs of 2026-11-30): one launch, persistent programs, all resident; each keeps
  its chunk in registers, publishes the chunk's (max, sum) and writes the chunk of its previous
  step, whose row's partials its peers published meanwhile. The input is read once: 86.2-87.5%
  of copy for float32 rows of 65536-262144, 67.7-72.2% for bfloat16 (results/h200/explore/,
  like every "exploration run" figure in this file). Designs that read a chunk twice stop at
  ~67%, whether the second read comes from DRAM or from the L2: the lagged kernel reading its
  chunk again from the L2 (one step after the first read) instead of keeping it measured
  63-68% (float32) and 55-65% (bfloat16). ``split_kernel``, the heuristic default for bulk long
  rows in the interpreter (and without Gluon): partial (max, sum) per chunk, then combine and
  write, in two launches (the input is read twice: at best 67%), or with
  PHASE24_TRITON_SPLIT_MODE=fused in one launch where a row's programs wait for each other (slower
  and erratic: 26-48%). The autotuner
  also tries ``looped_kernel`` (one program per row, two passes over the row, optionally with the
  programs in flight capped so that the second read can hit the L2): 57-71%.

On a GPU, bulk shapes (M >= SMs, M*N >= 2^22) are autotuned once per (dtype, BLOCK_N) among a
few candidate plans (set PHASE24_TRITON_AUTOTUNE=0 to use the first, heuristic one);
``chosen_config(x)`` says which plan runs for ``x``. Everything a launch needs apart from the
data pointers is cached per (device, dtype, shape, row stride, pointer alignment); with
PHASE24_TRITON_DIRECT=1, later launches also skip Triton's JIT dispatch (opt-in: its saving is
not measured; see "Launching" below). Without a GPU, with
TRITON_INTERPRET=1, the same kernels run in Triton's interpreter. It runs programs one after
another, so one cannot wait for another: the split always runs as two launches there, and the
lagged kernel as one program, which takes its slow way (re-reading the row) whenever a row has
more than two chunks.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass, replace

import torch

from phase24.softmax.args import (SUPPORTED_DTYPES, SoftmaxArgumentError, check_input,
                                  run_rows, triton_interpreter_active)

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
FEW_ROWS_MAX_BLOCK = 32768       # with M < SMs, longer rows are split over programs
LOOPED_CHUNK_BYTES = 16384       # looped kernel: bytes per chunk (4096 fp32, 8192 16-bit)
LOOPED_L2_MB = 32                # looped kernel: rows in flight at most this many MB (L2 50 MB)
SPLIT_SEG = 8192                 # elements per chunk of a split row (bulk), any dtype
SPLIT_SEG_MIN = 1024             # smallest chunk when splitting few rows
SPLIT_MIN_N = 16384              # bulk rows this long also try a split (autotuner candidates)
NAIVE_MAX_N = 65536              # triton-naive holds a row in one block; beyond this it refuses
INTERPRETER_SMS = 4              # the "number of SMs" used to size grids in the interpreter
WAIT_NS = 10**9                  # fused split on a GPU: give up waiting (write NaN) after 1 s
LAGGED_WAIT_NS = 10**7           # lagged kernel: after 10 ms, stop waiting, take the slow way
NEG_INF_PAIR = {torch.bfloat16: 0xFF80FF80 - 2**32,  # two -inf in one int32 word (lagged, PAIRS)
                torch.float16: 0xFC00FC00 - 2**32}
LAGGED_MAX_S = 256               # lagged kernel: at most this many chunks per row (one read of
                                 # the row's partials)
# Lagged plans (chunk, warps, register cap) the autotuner tries on long bulk rows, by element
# size; the first one of each also runs few long rows. The best of the H200 exploration runs of
# 2026-11-30 (results/h200/explore/triton-lagged-2026-11-30-run5/run6): float32 86.2-87.5% of
# copy at 65536-262144, bfloat16 67.7-72.2%. A cap of 72 registers gives float32 7 programs
# per SM instead of 5 (with 8-16 bytes of spills).
LAGGED_CONFIGS = {4: [(2048, 4, 72), (1024, 2, 72), (2048, 4, 80)],
                  2: [(2048, 2, 0), (1024, 1, 0), (4096, 4, 0)]}
# Ring plans (chunk, warps, lag, ahead): the Gluon kernel (gluon_kernels.ring_kernel), chunks in
# a shared-memory ring; the best of the H200 exploration runs of 2026-11-30
# (results/h200/explore/gluon-ring-2026-11-30-*): bfloat16 83.9-86.4% of copy at 32768-262144,
# float32 90.3-93.9% at 65536-262144. The first of each is the default for bulk long rows on a GPU.
RING_CONFIGS = {4: [(4096, 4, 3, 1), (4096, 4, 2, 2)],
                2: [(4096, 4, 3, 1), (4096, 4, 4, 1)]}
# Whole-row plans (chunk, warps): the Gluon kernel that holds a whole row in shared memory
# (gluon_kernels.whole_row_kernel), for rows of 16384 values or more: in one program where the
# row fits in WHOLE_ROW_MAX_BYTES (the builder checks the GPU's limit), and split across
# programs in slices of WHOLE_ROW_SLICE_BYTES (each program holds two: three programs per SM)
# for rows of four slices or more, up to 32 slices. H200 explorations
# (results/h200/explore/whole-row-2026-11-30/): one program per row, bfloat16 8192x32768 and
# 4096x65536 at 88.1% of copy against 84.5% and 86.3% for the ring plans in the same run;
# split, bfloat16 2048x131072 and 1024x262144 at 89.5% and 90.0% against 86.7% and 84.6%;
# float32's long rows 91.0-92.3% against the ring's 91.2-93.8%; slices of 64 KB (one program
# per SM) 65-82%.
WHOLE_ROW_CONFIGS = [(8192, 8), (4096, 8), (8192, 16)]
WHOLE_ROW_SPLIT_CONFIGS = [(2048, 4), (4096, 4)]
WHOLE_ROW_MAX_BYTES = 192 * 1024
WHOLE_ROW_SLICE_BYTES = 32 * 1024
INTERPRETER_SPIN_LIMIT = 64      # interpreter polls (programs run in turn: a wait never succeeds)
TUNE_MIN_ELEMENTS = 1 << 22      # only shapes this large are autotuned (timings mean something)


@dataclass(frozen=True)
class Plan:
    """How ``triton`` runs one shape. Fields unused by a path are left at their defaults."""

    path: str                    # "rows", "split", "looped", "lagged", "ring" or "wholerow"
    num_warps: int = 4
    block_m: int = 1             # rows: rows per tile
    per_sm: int = 0              # rows: 0 = one tile per program; k = persistent grid of k x SMs
    num_stages: int = 1          # rows, looped: software-pipelining depth of the loops
    seg: int = 8192              # split, looped: elements per chunk
    s_max: int = 0               # split: cap on programs per row (0 = number of SMs)
    mode: str = "auto"           # split: "fused" (one kernel), "twopass", or "auto"
    spin_limit: int = 0          # split, interpreter: polls (0 = INTERPRETER_SPIN_LIMIT)
    pblock: int = 0              # split: partials combined per step (0 = enough for S, <= 256)
    l2_mb: int = 0               # looped: cap programs so that rows in flight fit this (0: none)
    hints: bool = True           # looped: L2 eviction hints on the loads and stores
    maxnreg: int = 0             # lagged: cap on registers per thread (0: ptxas chooses)
    lag: int = 0                 # ring: steps a chunk waits in the ring for its row's partials
    ahead: int = 0               # ring: chunks being copied ahead of the one being reduced
    group: int = 1               # ring: chunks of a row a program takes in a row (one partial)
    split: int = 1               # wholerow: programs that share a row (a slice each)

    def describe(self, n: int | None = None, sms: int | None = None) -> str:
        if self.path == "rows":
            bn = f"{_next_pow2(n)}" if n is not None else "BLOCK_N"
            grid = ("one tile per program" if self.per_sm == 0
                    else f"persistent grid {self.per_sm}xSMs")
            return (f"rows_kernel: tile {self.block_m}x{bn}, {self.num_warps} warps, {grid}, "
                    f"num_stages={self.num_stages}")
        if self.path == "looped":
            text = (f"looped_kernel: chunks of {self.seg}, {self.num_warps} warps, "
                    f"{self.per_sm}xSMs programs")
            if self.l2_mb:
                text += f" (rows in flight <= {self.l2_mb} MB)"
            return text + f", num_stages={self.num_stages}" + ("" if self.hints else ", no hints")
        if self.path == "wholerow":
            text = ("whole_row_kernel (Gluon): the row in shared memory"
                    + (f", split across {self.split} programs" if self.split > 1 else "")
                    + f", chunks of {self.seg}, {self.num_warps} warps")
            if n is not None:
                text += f", {_cdiv(_cdiv(n, self.split), self.seg)} chunks per program"
            return text + ", all resident"
        if self.path == "ring":
            text = (f"ring_kernel (Gluon): chunks of {self.seg}, {self.num_warps} warps, "
                    f"lag {self.lag}, ahead {self.ahead}")
            if self.group > 1:
                text += f", {self.group} chunks a program"
            if n is not None:
                text += f", {_cdiv(n, self.seg)} chunks per row"
            return text + ", all resident"
        if self.path == "lagged":
            text = f"lagged_kernel: chunks of {self.seg}, {self.num_warps} warps"
            if n is not None:
                text += f", {_cdiv(n, self.seg)} chunks per row"
            text += ", all resident" if self.per_sm == 0 else f", <= {self.per_sm} per SM"
            return text + (f", maxnreg {self.maxnreg}" if self.maxnreg else "")
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


def _lagged_plans(n: int, elem: int) -> list[Plan]:
    """The lagged plans for rows of n values (none cutting a row in > LAGGED_MAX_S chunks)."""
    return [Plan("lagged", seg=seg, num_warps=warps, maxnreg=maxnreg)
            for seg, warps, maxnreg in LAGGED_CONFIGS.get(elem, LAGGED_CONFIGS[2])
            if _cdiv(n, seg) <= LAGGED_MAX_S]


def _ring_plans(n: int, elem: int) -> list[Plan]:
    """The ring plans for rows of n values: on a GPU with Gluon only (no interpreter)."""
    if triton_interpreter_active() or not gluon_available():
        return []
    return [Plan("ring", seg=seg, num_warps=warps, lag=lag, ahead=ahead)
            for seg, warps, lag, ahead in RING_CONFIGS.get(elem, RING_CONFIGS[2])
            if _cdiv(n, seg) <= LAGGED_MAX_S]


def _ring_candidates(n: int, elem: int) -> list[Plan]:
    """The ring plans, then each with segments of two chunks where a row has an even number of
    chunks (one partial per segment: half as many partials per row, a row spread over half as
    many programs). In the H200 run of 427bf77
    (results/h200/softmax-427bf77.json) the autotuner chose segments only for bfloat16
    1024 x 262144: 84.9% of copy, against 84.6% without them in the run of e437d3f."""
    ring = _ring_plans(n, elem)
    return ring + [replace(p, group=2) for p in ring if _cdiv(n, p.seg) % 2 == 0]


def _whole_row_plans(n: int, elem: int) -> list[Plan]:
    """The whole-row plans for rows of n values (see WHOLE_ROW_CONFIGS), on a GPU with Gluon."""
    if triton_interpreter_active() or not gluon_available() or n < 16384:
        return []
    plans = [p for p in (Plan("wholerow", seg=seg, num_warps=warps)
                         for seg, warps in WHOLE_ROW_CONFIGS)
             if _whole_row_layout(p, n, elem)[1] <= WHOLE_ROW_MAX_BYTES]
    split = n * elem // WHOLE_ROW_SLICE_BYTES
    if 4 <= split <= 32 and n * elem % WHOLE_ROW_SLICE_BYTES == 0:
        plans += [Plan("wholerow", seg=seg, num_warps=warps, split=split)
                  for seg, warps in WHOLE_ROW_SPLIT_CONFIGS]
    return plans


def _whole_row_layout(plan: Plan, n: int, elem: int) -> tuple[int, int]:
    """(chunks per slice, shared memory per program in bytes) of a whole-row plan on rows of n
    values: a slice is the row's n / split values in whole chunks, and a program holds one row
    (split 1) or two slices (see whole_row_kernel)."""
    nch = _cdiv(_cdiv(n, plan.split), plan.seg)
    return nch, (1 if plan.split == 1 else 2) * nch * plan.seg * elem


@functools.cache
def gluon_available() -> bool:
    """Whether this Triton has Gluon with Ampere's asynchronous copies (Triton 3.5 and later)."""
    try:
        importlib.import_module("triton.experimental.gluon.language.nvidia.ampere.async_copy")
    except ImportError:
        return False
    return True


def few_rows_seg(m: int, n: int, sms: int) -> int:
    """Chunk size for few rows: about two programs per SM have work (M*S ~ 2 x SMs)."""
    return min(SPLIT_SEG, max(SPLIT_SEG_MIN, _prev_pow2(m * n // (2 * sms))))


def default_plan(m: int, n: int, elem: int, sms: int) -> Plan:
    """The heuristic plan (the autotuner's first candidate).

    Few rows (M < SMs): a row that fits one program (BLOCK_N <= 32768) runs in one program (one
    launch, no workspace); a longer one runs the first lagged plan on a GPU (64 x 262144 float32:
    47.6 us against the two-launch split's 60.9 us in the bench runs of e59fdcd and 8d8cefb; but
    8 x 131072 11.9 us against 11.5 in float32, 11.1 against 10.1 in bfloat16), the two-launch
    split in the interpreter. Bulk rows longer than one program holds: on a GPU with Gluon, the
    first ring plan (see RING_CONFIGS); otherwise the two-launch split (reads the input twice:
    65.2-65.5% of copy fp32, 54.4-54.8% bf16 in the H200 exploration run of 2026-11-30). The
    autotuner also tries the looped and lagged kernels.
    """
    bn = _next_pow2(n)
    if bn * elem <= SHORT_ROW_BYTES:
        return _rows_plan(bn, ROWS_TILE, 16, 0, 1)
    if m < sms:
        if bn <= FEW_ROWS_MAX_BLOCK:
            return _rows_plan(bn, ROWS_TILE, 16 if bn < 32768 else 32, -1, 1)
        lagged = _lagged_plans(n, elem)
        if lagged and not triton_interpreter_active():
            return lagged[0]
        return _split_plan(few_rows_seg(m, n, sms))
    if bn <= ROWS_MAX_BLOCK[elem]:
        return _rows_plan(bn, ROWS_TILE, 16 if bn < 32768 else 32, -1, 1)
    ring = _ring_plans(n, elem)
    return ring[0] if ring else _split_plan(SPLIT_SEG)


def candidate_plans(m: int, n: int, elem: int, sms: int) -> list[Plan]:
    """The plans the autotuner times for a bulk shape; the first is the default."""
    first = default_plan(m, n, elem, sms)
    bn = _next_pow2(n)
    cands = [first]
    if first.path == "rows" and bn * elem <= SHORT_ROW_BYTES:
        # Twice the warps on the same tile (8 values a thread), or a tile twice as large. With
        # them, float32 rows of 128/256/512 went from 98.2/96.7/96.6% of copy (bench run of
        # e965307) to 98.5/98.4/98.8% (run of 8d8cefb), level with torch; the persistent grids
        # lost there (87-91%, results/h200/explore/triton-exchange-2026-11-30.log).
        cands += [_rows_plan(bn, ROWS_TILE, 8, 0, 1), _rows_plan(bn, 2 * ROWS_TILE, 16, 0, 1),
                  replace(first, per_sm=8, num_stages=3),      # persistent, pipelined
                  replace(first, per_sm=8)]                    # persistent
    elif first.path == "rows":
        if bn * elem <= 65536:                                 # room for 2 stages in smem
            cands.append(replace(first, num_stages=2))
        cands.append(replace(first, per_sm=0))                 # one tile per program
        if elem == 2 and bn == 16384:
            # Fewer warps, more values per thread (32 or 64): not yet measured. ptxas (sm_90a,
            # checked on the CPU with triton.compile) gives 63-64 registers at 16 warps and
            # 127-128 at 8, no spills: two programs per SM either way.
            cands += [replace(first, num_warps=16, per_sm=0), replace(first, num_warps=16),
                      replace(first, num_warps=8, per_sm=0)]
        cands += _whole_row_plans(n, elem)
        if bn == ROWS_MAX_CANDIDATE:
            # Rows of 32768: the ring kernel too (8 chunks per row). bfloat16 8192 x 32768:
            # rows_kernel 77.0% of copy in the bench run of 6f3a592, 84.2% with these candidates
            # in the run of a2d0aa2 (the ring 83.9-84.5% in the exploration runs).
            cands += _ring_candidates(n, elem)
    else:
        if bn <= ROWS_MAX_CANDIDATE:
            cands.append(_rows_plan(bn, ROWS_TILE, 32, -1, 1))
        cands += _ring_candidates(n, elem)
        cands += _whole_row_plans(n, elem)
        cands += [_split_plan(SPLIT_SEG), _looped_plan(elem, 2, LOOPED_L2_MB),
                  _looped_plan(elem, 2, 0), _looped_plan(elem, 2, LOOPED_L2_MB // 2)]
        cands += _lagged_plans(n, elem)
    return list(dict.fromkeys(cands))  # without repeats, in order


# ---------------------------------------------------------------------------------------------
# Launching
#
# Everything about a launch that does not depend on the data pointers (the plan, the grids, the
# arguments and constexprs, the kernel, the split's workspace, the number of SMs) is worked out
# once per (device, dtype, shape, row stride, 16-byte alignment of the pointers, plan) and kept in
# a _Launcher, so that a call only looks it up, fetches the current stream and launches.
# On a GPU the first launch of each kernel goes through Triton's JIT (which compiles it, or finds
# it in its cache, and returns the compiled kernel); later launches call that compiled kernel's
# launcher directly, with the same arguments Triton would pass, skipping Triton's per-call
# argument binding and cache lookup. The key holds everything Triton specialises a kernel on
# (the int arguments' values, the pointers' 16-byte alignment), so the compiled kernel is the one
# Triton's own dispatch would pick. Launch hooks registered with triton.knobs (profilers) send
# every launch through the JIT again. The direct path is opt-in (PHASE24_TRITON_DIRECT=1, read
# when a launcher is built): on the H200 its outputs equal the JIT's bit for bit
# (test_gpu_direct_launches_match_the_jit, run at commit e965307), but the host time it saves
# has not been measured; the H200 exploration run of
# 2026-11-30 measured 49-103 us of host time per call with one launch and 90-182 us with the
# two-launch split, all hidden by the benchmark's ~150 us of GPU work before each call.

LAUNCHER_CACHE_MAX = 512  # launchers kept (one per shape/plan seen); the cache is emptied beyond


class _Step:
    """One kernel launch: kernel, grid, the arguments after (x, out) and the Triton options."""

    __slots__ = ("fn", "grid", "args", "kw", "full", "direct")

    def __init__(self, fn, grid: int, args: tuple, kw: dict):
        self.fn, self.grid, self.args, self.kw = fn, (grid,), args, kw
        self.full = ()        # every parameter after (x, out), constexprs included, in order
        self.direct = None    # (launcher, CUfunction, packed metadata); False: never direct

    def adopt(self, compiled) -> None:
        """Keep what the direct launch needs from the kernel Triton's JIT just launched."""
        try:
            if hasattr(compiled, "result"):  # Triton's asynchronous compile mode
                compiled = compiled.result()
            values = dict(self.kw)
            names = self.fn.arg_names
            values.update(zip(names[2:], self.args))
            self.full = tuple(values[name] for name in names[2:])
            self.direct = (compiled.run, compiled.function, compiled.packed_metadata)
        except Exception:  # an unexpected Triton: stay on the JIT path
            self.direct = False


_KNOBS: list = []


def _no_launch_hooks() -> bool:
    if not _KNOBS:
        from triton import knobs
        _KNOBS.append(knobs)
    rt = _KNOBS[0].runtime
    return (not getattr(rt.launch_enter_hook, "calls", rt.launch_enter_hook)
            and not getattr(rt.launch_exit_hook, "calls", rt.launch_exit_hook))


class _Launcher:
    """The launches of one plan for one (device, dtype, shape, stride, alignment)."""

    __slots__ = ("dev", "make", "bound", "env", "direct")

    def __init__(self, dev: int | None, make, env: tuple, direct: bool):
        self.dev = dev        # CUDA device index, None in the interpreter
        self.make = make      # stream -> (steps, tensor to zero before them or None)
        self.bound: dict = {}
        self.env = env        # ((variable, value when built), ...) the plan depends on
        self.direct = direct

    def current(self) -> bool:
        environ = os.environ
        return all(environ.get(name) == value for name, value in self.env)

    def __call__(self, x2d: torch.Tensor, out: torch.Tensor) -> None:
        stream = None if self.dev is None else _raw_stream(self.dev)
        bound = self.bound.get(stream)
        if bound is None:
            bound = self.bound[stream] = self.make()
        steps, zero = bound
        if zero is not None:
            zero.zero_()
        direct = self.direct and _no_launch_hooks()
        for st in steps:
            d = st.direct
            if direct and d:
                d[0](st.grid[0], 1, 1, stream, d[1], d[2], None, None, None, x2d, out, *st.full)
            else:
                compiled = st.fn.run(x2d, out, *st.args, grid=st.grid, warmup=False, **st.kw)
                if d is None and direct:
                    st.adopt(compiled)


def _raw_stream(dev: int) -> int:
    return torch._C._cuda_getCurrentRawStream(dev)


_LAUNCHERS: dict = {}


def _build(plan: Plan, x2d: torch.Tensor, sms: int, env: tuple = (),
           out_align: int = 0) -> _Launcher:
    from phase24.softmax.triton_kernels import kernel

    m, n = x2d.shape
    stride = x2d.stride(0)
    gpu = x2d.is_cuda and not triton_interpreter_active()
    dev = x2d.device.index if gpu else None  # None: the interpreter (no stream, no direct launch)
    direct = gpu and os.environ.get("PHASE24_TRITON_DIRECT", "0") not in ("0", "")
    opts = dict(num_warps=plan.num_warps, num_stages=plan.num_stages)
    if plan.path == "rows":
        n_tiles = _cdiv(m, plan.block_m)
        grid = n_tiles if plan.per_sm == 0 else min(n_tiles, plan.per_sm * sms)
        steps = ([_Step(kernel("rows"), grid, (m, n, stride), dict(
            BLOCK_M=plan.block_m, BLOCK_N=_next_pow2(n), NUM_STAGES=plan.num_stages,
            **opts))], None)
        return _Launcher(dev, lambda: steps, env, direct)
    if plan.path == "looped":
        grid = min(m, max(1, plan.per_sm) * sms)
        if plan.l2_mb:
            grid = min(grid, max(1, (plan.l2_mb << 20) // (n * x2d.element_size())))
        steps = ([_Step(kernel("looped"), grid, (m, n, stride), dict(
            SEG=plan.seg, NUM_STAGES=plan.num_stages, HINTS=plan.hints, **opts))], None)
        return _Launcher(dev, lambda: steps, env, direct)
    if plan.path == "lagged":
        return _build_lagged(plan, x2d, sms, env, dev, direct, out_align)
    if plan.path == "ring":
        return _build_ring(plan, x2d, sms, env, dev, direct, out_align)
    if plan.path == "wholerow":
        return _build_whole_row(plan, x2d, sms, env, dev, direct, out_align)
    if plan.path == "naive":
        steps = ([_Step(kernel("naive"), m, (n, stride), dict(
            BLOCK_N=_next_pow2(n), num_warps=plan.num_warps))], None)
        return _Launcher(dev, lambda: steps, env, direct)
    if plan.path != "split":
        raise ValueError(f"unknown plan path {plan.path!r}")
    s, cpp = _split_shape(n, plan.seg, plan.s_max or sms)
    fused = plan._mode() == "fused"
    common = dict(SEG=plan.seg, PBLOCK=plan.pblock or min(256, max(16, _next_pow2(s))),
                  WAIT_NS=WAIT_NS, SPIN_LIMIT=plan.spin_limit or INTERPRETER_SPIN_LIMIT,
                  GPU=not triton_interpreter_active(), num_warps=plan.num_warps, num_stages=1)
    k = kernel("split")
    device = x2d.device

    def make():
        # One int32 buffer per stream: [ticket counter, abort flag, M arrival counters, M*S
        # maxima, M*S sums (float32)]. Two launches never read the counters; the fused kernel
        # needs them at zero before every launch (zeroed on the stream, before the launch).
        ws = torch.empty(2 + m + 2 * m * s, dtype=torch.int32, device=device)
        sync, parts = ws[:2 + m], ws[2 + m:].view(torch.float32)
        args = (parts, sync, m, n, stride, s, cpp)
        if fused:
            return [_Step(k, m * s, args, dict(PHASE=0, **common))], sync
        return [_Step(k, m * s, args, dict(PHASE=1, **common)),
                _Step(k, m * s, args, dict(PHASE=2, **common))], None
    return _Launcher(dev, make, env, direct)


def _build_lagged(plan: Plan, x2d: torch.Tensor, sms: int, env: tuple, dev, direct: bool,
                  out_align: int):
    """lagged_kernel: a persistent grid of programs that are all resident at once (the driver's
    occupancy calculator says how many fit). In the interpreter, which runs programs one after
    another, one program: with S <= 2 every partial it needs is its own and already published;
    with S > 2 it waits in vain and takes the slow way (which the tests want exercised too)."""
    from phase24.softmax.triton_kernels import kernel

    m, n = x2d.shape
    s = _cdiv(n, plan.seg)
    total = m * s
    gpu = dev is not None
    k = kernel("lagged")
    # Two 16-bit values per 32-bit word where the row and its start allow it.
    pairs = (x2d.element_size() == 2 and n % 2 == 0 and x2d.stride(0) % 2 == 0
             and x2d.data_ptr() % 4 == 0 and out_align % 4 == 0 and plan.seg >= 2)
    kw = dict(SEG=plan.seg, PAIRS=pairs, NEG_PAIR=NEG_INF_PAIR[x2d.dtype] if pairs else 0,
              PBLOCK=max(16, _next_pow2(s)), GPU=gpu,
              SPIN_LIMIT=plan.spin_limit or INTERPRETER_SPIN_LIMIT, num_warps=plan.num_warps,
              num_stages=1)
    if plan.maxnreg and gpu:
        kw["maxnreg"] = plan.maxnreg

    def make():
        ws, args = _lagged_workspace(x2d, s)
        if gpu:
            per_sm = _resident_per_sm(k, x2d, args, kw)
            grid = min(total, (min(per_sm, plan.per_sm) if plan.per_sm else per_sm) * sms)
        else:  # one program, or (tests) per_sm x SMs programs, which run one after another
            grid = min(total, max(1, plan.per_sm * sms))
        return [_Step(k, grid, args, kw)], ws
    return _Launcher(dev, make, env, direct)


def _build_ring(plan: Plan, x2d: torch.Tensor, sms: int, env: tuple, dev, direct: bool,
                out_align: int):
    """ring_kernel (Gluon) where it applies: a GPU of compute capability 8.0 or later, rows of
    whole 16-byte copies (N and the row stride multiples of 16 bytes, both pointers 16-byte
    aligned) and a ring that fits in shared memory. Elsewhere the first lagged plan (or the split,
    for rows of more than LAGGED_MAX_S lagged chunks) runs instead."""
    m, n = x2d.shape
    elem = x2d.element_size()
    vec = 16 // elem
    if not _gluon_applies(x2d, dev, out_align, (plan.lag + plan.ahead + 1) * plan.seg * elem):
        lagged = _lagged_plans(n, elem)
        return _build(lagged[0] if lagged else _split_plan(SPLIT_SEG), x2d, sms, env, out_align)
    from phase24.softmax.gluon_kernels import ring_kernel

    s = _cdiv(n, plan.seg)
    total = m * s
    group = plan.group if s % plan.group == 0 else 1
    kw = dict(SEG=plan.seg, VEC=vec, LAG=plan.lag, AHEAD=plan.ahead,
              PBLOCK=max(32, _next_pow2(s // group)), EVEN=n % plan.seg == 0, FOLD=elem == 2,
              GROUP=group, num_warps=plan.num_warps)

    def make():
        # Zeroed once here, never before a launch: ring_kernel leaves it ready for the next one.
        ws, args = _lagged_workspace(x2d, s, head=3)
        grid = min(total, _resident_per_sm(ring_kernel, x2d, args, kw) * sms)
        return [_Step(ring_kernel, grid, args, kw)], None
    return _Launcher(dev, make, env, direct)


def _build_whole_row(plan: Plan, x2d: torch.Tensor, sms: int, env: tuple, dev, direct: bool,
                     out_align: int):
    """whole_row_kernel (Gluon) where it applies: as for the ring kernel (compute capability 8.0
    or later, rows of whole 16-byte copies, both pointers 16-byte aligned), and a slice (the
    row's n / split values, in whole chunks) that fits in one program's shared memory, with
    room for a group of split programs on the GPU; elsewhere the heuristic plan runs instead."""
    m, n = x2d.shape
    elem = x2d.element_size()
    vec = 16 // elem
    nch, smem = _whole_row_layout(plan, n, elem)
    if not (_gluon_applies(x2d, dev, out_align, smem)
            and plan.seg % (32 * plan.num_warps * vec) == 0 and plan.split <= min(sms, 32)):
        return _build(default_plan(m, n, elem, sms), x2d, sms, env, out_align)
    from phase24.softmax.gluon_kernels import whole_row_kernel

    kw = dict(VEC=vec, R=plan.seg // (32 * plan.num_warps * vec), NCH=nch, SPLIT=plan.split,
              EVEN=n == plan.split * nch * plan.seg, FOLD=elem == 2, num_warps=plan.num_warps)

    def make():
        # [launches, programs finished, abort flag, a word per slice of each row], zeroed once
        # here (whole_row_kernel leaves it ready for the next launch, as ring_kernel does).
        ws = torch.zeros(3 + m * plan.split, dtype=torch.int64, device=x2d.device)
        args = (ws, m, n, x2d.stride(0), LAGGED_WAIT_NS)
        groups = _resident_per_sm(whole_row_kernel, x2d, args, kw) * sms // plan.split
        return [_Step(whole_row_kernel, min(m, groups) * plan.split, args, kw)], None
    return _Launcher(dev, make, env, direct)


def _gluon_applies(x2d: torch.Tensor, dev, out_align: int, smem_bytes: int) -> bool:
    """Whether a Gluon kernel of this lab, with smem_bytes of shared memory per program, runs
    on x2d: a GPU of compute capability 8.0 or later with that much shared memory per block (and
    1 KB more for the compiler's own), rows of whole 16-byte copies (N and the row stride
    multiples of 16 bytes) and both pointers 16-byte aligned."""
    vec = 16 // x2d.element_size()
    return (dev is not None and gluon_available()
            and torch.cuda.get_device_capability(dev)[0] >= 8
            and smem_bytes + 1024 <= _smem_per_block(dev)
            and x2d.shape[1] % vec == 0 and x2d.stride(0) % vec == 0
            and x2d.data_ptr() % 16 == 0 and out_align == 0)


def _lagged_workspace(x2d: torch.Tensor, s: int, head: int = 1) -> tuple:
    """The workspace of the lagged and ring kernels for rows of s chunks, and their arguments
    after (x, out): int64 [head words, one partial per item, one mark per item], zeroed. The
    lagged kernel's head is its abort flag, and its launcher zeroes the workspace before every
    launch; the ring kernel's is [launches, programs finished, abort flag], and it needs no
    zeroing after the first (see ring_kernel)."""
    m, n = x2d.shape
    ws = torch.zeros(head + 2 * m * s, dtype=torch.int64, device=x2d.device)
    return ws, (ws, m, n, x2d.stride(0), s, LAGGED_WAIT_NS)


def _smem_per_block(dev: int) -> int:
    props = torch.cuda.get_device_properties(dev)
    return getattr(props, "shared_memory_per_block_optin", 48 * 1024)


def _resident_per_sm(fn, x2d: torch.Tensor, args: tuple, kw: dict) -> int:
    """How many programs of ``fn`` (compiled for these arguments) an SM holds at once."""
    compiled = fn.warmup(x2d, x2d, *args, grid=(1,), **kw)
    compiled._init_handles()
    threads = 32 * kw["num_warps"]
    try:
        from cuda.bindings import driver
    except ImportError:  # no calculator: one per SM, which a kernel that compiled always gets
        return 1
    err, per_sm = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        driver.CUfunction(compiled.function), threads, compiled.metadata.shared)
    return max(1, per_sm) if err == driver.CUresult.CUDA_SUCCESS else 1


def _env_deps(plan: Plan, tunable: bool, x2d: torch.Tensor) -> tuple:
    """The environment variables a launcher's plan was chosen under (checked at every call)."""
    names = []
    if tunable:
        names.append("PHASE24_TRITON_AUTOTUNE")
    if plan.path == "split" and plan.mode == "auto" and not triton_interpreter_active():
        names.append("PHASE24_TRITON_SPLIT_MODE")
    if not x2d.is_cuda:  # the interpreter decides the split mode and the kernels' wrapping
        names.append("TRITON_INTERPRET")
    return tuple((name, os.environ.get(name)) for name in names)


def _launch(plan: Plan, x2d: torch.Tensor, out: torch.Tensor, sms: int) -> None:
    """Launch ``plan`` on x2d into out (the autotuner's entry: ``sms`` as the dispatch's)."""
    key = (x2d.device, x2d.dtype, out.dtype, x2d.shape, x2d.stride(0), x2d.data_ptr() & 15,
           out.data_ptr() & 15, plan, sms)
    launcher = _LAUNCHERS.get(key)
    if launcher is None or (launcher.env and not launcher.current()):
        launcher = _store(key, _build(plan, x2d, sms, _env_deps(plan, False, x2d),
                                      out.data_ptr() & 15))
    launcher(x2d, out)


def _store(key: tuple, launcher: _Launcher) -> _Launcher:
    if len(_LAUNCHERS) >= LAUNCHER_CACHE_MAX:
        _LAUNCHERS.clear()
    _LAUNCHERS[key] = launcher
    return launcher


def clear_launch_cache() -> None:
    """Forget every cached launcher (and with them the split workspaces they hold)."""
    _LAUNCHERS.clear()


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
    cands = candidate_plans(m, n, x2d.element_size(), sms)
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
    if x2d.is_cuda and x2d.device.index != torch.cuda.current_device():
        with torch.cuda.device(x2d.device):
            _run(x2d, out, plan)
    else:
        _run(x2d, out, plan)


def _run(x2d: torch.Tensor, out: torch.Tensor, plan: Plan | None) -> None:
    key = (x2d.device, x2d.dtype, out.dtype, x2d.shape, x2d.stride(0), x2d.data_ptr() & 15,
           out.data_ptr() & 15, plan)
    launcher = _LAUNCHERS.get(key)
    if launcher is None or (launcher.env and not launcher.current()):
        # First call for this key (or an environment variable the plan depends on changed).
        if x2d.shape[1] >= 2**31 - 2**20:  # in-row offsets are int32
            raise SoftmaxArgumentError(
                f"triton: rows of {x2d.shape[1]} values are too long (< 2^31)")
        sms = _num_sms(x2d.device)
        tunable = False
        if plan is None:
            tunable = _tune_key(*x2d.shape, x2d, sms) is not None
            plan = _plan_for(x2d, out, sms)
        launcher = _store(key, _build(plan, x2d, sms, _env_deps(plan, tunable, x2d),
                                      out.data_ptr() & 15))
    launcher(x2d, out)


def naive_rows(x2d: torch.Tensor, out: torch.Tensor) -> None:
    """The row kernel of ``triton-naive``: one program per row, BLOCK_N >= N."""
    if x2d.is_cuda and x2d.device.index != torch.cuda.current_device():
        with torch.cuda.device(x2d.device):
            _run_naive(x2d, out)
    else:
        _run_naive(x2d, out)


def _run_naive(x2d: torch.Tensor, out: torch.Tensor) -> None:
    key = (x2d.device, x2d.dtype, out.dtype, x2d.shape, x2d.stride(0), x2d.data_ptr() & 15,
           out.data_ptr() & 15, "naive")
    launcher = _LAUNCHERS.get(key)
    if launcher is None or (launcher.env and not launcher.current()):
        bn = _next_pow2(x2d.shape[1])
        warps = 4 if bn <= 2048 else 8 if bn <= 8192 else 16 if bn <= 16384 else 32
        plan = Plan("naive", num_warps=warps)
        launcher = _store(key, _build(plan, x2d, 0, _env_deps(plan, False, x2d)))
    launcher(x2d, out)


def _check(x: object, name: str) -> torch.Tensor:
    # The common case without reading the environment: a CUDA tensor of a supported dtype.
    if type(x) is torch.Tensor and x.is_cuda and x.dtype in SUPPORTED_DTYPES and x.dim():
        return x
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
