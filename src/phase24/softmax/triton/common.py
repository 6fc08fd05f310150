"""Utilities of the Triton rungs: no rung's idea lives here.

* ``LOG2E`` and small integer helpers;
* ``Launch`` and ``Plan``: a launch decided in full (kernel, grid, arguments, options), so that
  what ``which()`` prints is what runs;
* ``launch_rows``: every rung's ``softmax_rows``: its ``decide`` runs once per key (shape,
  strides, dtype, device, alignment); later calls replay (``launch_compiled``);
* the facts about a GPU a launcher reads (SMs, shared memory, programs resident per SM), per device;
* ``exchange_words``: the scratch through which the programs of one launch trade partial
  results (rungs v3 to v5), and the rules that keep it to one launch at a time.

An input larger than one launch takes runs in parts, each a range of its rows (parts.py).
"""

from __future__ import annotations

import dataclasses
import struct
import threading
import warnings

from typing import Callable

import torch
import triton
import triton.language as tl
from triton import knobs

from phase24.bridge.driver_launch import current_context
from phase24.core.device import (INTERPRETER_SMS, capability, num_sms,  # noqa: F401 (the rungs')
                                 smem_optin)
from phase24.core.plans import cdiv, fallback, next_pow2, prev_pow2  # noqa: F401  (for the rungs)
from phase24.core.triton_mode import INTERPRETED, interpreted  # noqa: F401  (re-exported)
from phase24.bridge.fastcall import forget_all

LOG2E = tl.constexpr(1.4426950408889634)  # exp(v) = exp2(v * log2(e))
DEADLINE_NS = 10**10  # a wait longer than this is a bug: the kernel stops with an error (v3-v5)


@dataclasses.dataclass(frozen=True)
class Launch:
    """One kernel launch: ``kernel[(grid,)](x, out[, scratch], *args, **meta)``."""

    rung: str        # the registry name of the rung this kernel belongs to
    kernel: object   # a @triton.jit or @gluon.jit function
    grid: int
    args: tuple      # the arguments after the tensors
    meta: dict       # compile-time arguments and launch options (num_warps, ...)

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.meta.items()
                         if k not in ("GPU", "NEG_PAIR", "launch_cooperative_grid"))
        coop = ", cooperative" if self.meta.get("launch_cooperative_grid") else ""
        return f"{self.rung} {self.kernel.__name__}[{self.grid}]({opts}{coop})"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a rung's ``decide`` chose for a shape: the launches that compute one call, in order;
    ``launch``, the function of the rung file whose ``kernel[(grid,)](...)`` makes them; and the
    scratch they share: none, ``words`` int64 words made fresh for the call ("fresh"), or the
    launch's exchange words ("exchange")."""

    launches: tuple
    launch: Callable  # launch(plan, x2d, out, scratch) -> the kernels it launched, in order
    scratch: str = ""
    words: int = 0
    note: str = ""    # why a rung runs another rung's kernel here, if it does
    # An input larger than one launch takes (parts.py): ((first row, rows, Decided), ...), its
    # parts in order, each a range of rows decided as an input of its own; ``launches`` are then
    # the first part's (which rung's kernels run) and ``launch`` runs every part.
    parts: tuple = ()

    def describe(self) -> str:
        if self.parts:
            groups = []  # consecutive parts of one decision
            for _, rows, d in self.parts:
                if groups and groups[-1][1] == rows and groups[-1][2] is d:
                    groups[-1][0] += 1
                else:
                    groups.append([1, rows, d])
            text = f"in {len(self.parts)} parts: " + " | ".join(
                f"{k} of {rows} rows{', each' if k > 1 else ''}: {d.plan.describe()}"
                for k, rows, d in groups)
        else:
            text = "; then ".join(launch.describe() for launch in self.launches)
        return f"{text} [{self.note}]" if self.note else text


# ---- decided once per key, then replayed --------------------------------------------------------
#
# A rung's decision (rung, configuration, grid, the arguments other than pointers, scratch) depends
# only on the key below: the shape, the row stride, the dtype, the device, and the 16-byte
# alignment of x2d and out (v3 packs 16-bit pairs, v4 and v5 need 16-byte copies, and Triton
# specialises pointers on it). Triton also specialises integer arguments (== 1, % 16 == 0): they
# are M, N, the row stride, S (from N and the configuration) and DEADLINE_NS, all fixed by the key.
# The first call of a key decides and launches through the rung's own ``kernel[(grid,)](...)``;
# on a GPU later calls hand the compiled kernels that launch returned the same arguments, with
# this call's pointers and scratch (``launch_compiled``). The scratch is fetched each call.

_DECIDED: dict = {}
_DECIDED_KEPT = 4096  # keys kept; all are dropped beyond


@dataclasses.dataclass
class Decided:
    plan: Plan
    replay: tuple = ()  # per launch: (compiled kernel, grid, arguments after the tensors)


def key(decide: Callable, x2d: torch.Tensor, out: torch.Tensor, config) -> tuple:
    return (decide, config, x2d.shape, x2d.stride(0), x2d.dtype, x2d.get_device(),
            x2d.data_ptr() % 16, out.data_ptr() % 16)


def decided(decide: Callable, x2d: torch.Tensor, out: torch.Tensor, config=None) -> Decided:
    """The decision for x2d's key (``decide(x2d, out, config)``, called on the key's first use)."""
    k = key(decide, x2d, out, config)
    d = _DECIDED.get(k)
    if d is None:
        if len(_DECIDED) >= _DECIDED_KEPT:
            _DECIDED.clear()
        d = _DECIDED[k] = Decided(decide(x2d, out, config))
    return d


def forget() -> None:
    """Drop every decision (after a test changed what a rung reads: SMs, the tuned table), and
    the calls made from C++ after them."""
    _DECIDED.clear()
    forget_all()


def launch_rows(decide: Callable, x2d: torch.Tensor, out: torch.Tensor, config=None) -> None:
    """A rung's ``softmax_rows``: launch what ``decide`` chose for x2d's key, on x2d's device
    (its current stream); in the interpreter, one call at a time (``interpreted``)."""
    if INTERPRETED:
        with interpreted():
            return _launch_rows(decide, x2d, out, config)
    return _launch_rows(decide, x2d, out, config)


def _launch_rows(decide: Callable, x2d: torch.Tensor, out: torch.Tensor, config=None) -> None:
    if x2d.is_cuda and x2d.get_device() != torch._C._cuda_getDevice():
        with torch.cuda.device(x2d.device):
            return _launch_rows(decide, x2d, out, config)
    d = decided(decide, x2d, out, config)
    if d.plan.parts:
        d.plan.launch(d.plan, x2d, out)
    else:
        launch_decided(d, x2d, out)


def launch_decided(d: Decided, x2d: torch.Tensor, out: torch.Tensor) -> None:
    """Launch decision ``d`` (no parts) on x2d and out: through the rung's ``kernel[(grid,)]``
    the first time, then (on a GPU) its compiled kernels replayed."""
    plan = d.plan
    tensors = (x2d, out)
    if plan.scratch == "exchange":
        tensors = (x2d, out, exchange_words(x2d.device, plan.words))
    elif plan.scratch == "fresh":
        tensors = (x2d, out, torch.empty(plan.words, dtype=torch.int64, device=x2d.device))
    if d.replay:  # pointers as integers: the key holds the device, so they are this GPU's
        stream = current_stream(x2d.get_device())
        ptrs = tuple(t.data_ptr() for t in tensors)
        for compiled, grid, args in d.replay:
            launch_compiled(compiled, grid, stream, (*ptrs, *args))
        return
    kernels = plan.launch(plan, *tensors)
    if not INTERPRETED and REPLAY_KNOWN:
        d.replay = tuple((compiled, launch.grid, replay_args(launch, len(tensors)))
                         for compiled, launch in zip(kernels, plan.launches, strict=True))


def replay_args(launch: Launch, tensors: int) -> tuple:
    """The kernel's arguments after the tensors as Triton's binder passes them to the compiled
    kernel: ``launch.args``, then each remaining parameter (the constexprs) from ``launch.meta``,
    in the kernel's order (num_warps and the other launch options are no parameters)."""
    names = launch.kernel.arg_names[tensors + len(launch.args):]
    return (*launch.args, *(launch.meta[name] for name in names))


# How fast_launches packs a scalar parameter of each Triton type (the launcher's C types).
_PACK = {"i1": "<b", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "u1": "<B", "u8": "<B",
         "u16": "<H", "u32": "<I", "u64": "<Q", "fp32": "<f", "f32": "<f"}


def fast_launches(decide: Callable, x2d: torch.Tensor, out: torch.Tensor) -> list | None:
    """The launches decided for x2d's key as bridge/fastcall.py makes them from C++, or None
    where they need what only Triton's own launcher does (clusters, its scratch, launch hooks):
    (launches, the plan's scratch, its int64 words).
    The parameters are those Triton 3.6's launcher passes (driver.py, make_launcher): each
    parameter of the signature that is not a constexpr, then the global and profile scratch
    pointers (null: both sizes are 0 here). A plan in parts (parts.py) has no replay of its own:
    its calls stay in Python."""
    d = _DECIDED.get(key(decide, x2d, out, None))
    enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    if d is None or not d.replay or getattr(enter, "calls", enter) \
            or getattr(leave, "calls", leave):
        return None
    made = []
    for compiled, grid, args in d.replay:
        meta = compiled.metadata
        if getattr(meta, "num_ctas", 1) != 1 or meta.launch_pdl or meta.global_scratch_size \
                or meta.profile_scratch_size:
            return None
        params = []
        tensors = 3 if d.plan.scratch else 2
        for i, (ty, value) in enumerate(zip(compiled.src.signature.values(),
                                             (*range(tensors), *args), strict=True)):
            if ty == "constexpr":
                continue
            if i < tensors and ty.startswith("*"):
                params.append((i, 0))
            elif ty in _PACK:
                params.append((-1, int.from_bytes(struct.pack(_PACK[ty], value).ljust(8, b"\0"),
                                                  "little")))
            else:
                return None
        params += [(-1, 0), (-1, 0)]
        made.append((compiled.name, compiled.function, current_context(), grid,
                     32 * meta.num_warps, meta.shared, bool(meta.launch_cooperative_grid), params,
                     compiled))
    words = HEAD + d.plan.words if d.plan.scratch == "exchange" else d.plan.words
    return made, d.plan.scratch, words


# Triton versions whose JITFunction.run launches as launch_compiled does (tests/test_triton_ladder.py
# reads that function's source and fails on any other version).
KNOWN_TRITON = ("3.6.",)
REPLAY_KNOWN = triton.__version__.startswith(KNOWN_TRITON)


def current_stream(index: int) -> int:
    """The current stream of device ``index``, as Triton's launch reads it (its CUDA driver's
    get_current_stream is this function)."""
    return torch._C._cuda_getCurrentRawStream(index)


def launch_compiled(compiled, grid: int, stream: int, args: tuple) -> None:
    """Launch ``compiled`` (the CompiledKernel a ``kernel[(grid,)](...)`` call returned) on
    (grid, 1, 1) on ``stream`` with ``args``: every kernel parameter, constexprs included, as
    that call's binder bound them (pointers may be integers). These are the last lines of
    Triton 3.6's JITFunction.run, without its binder, cache lookup and specialisation, which
    the key made once. The launch options (num_warps, shared memory, launch_cooperative_grid)
    are in ``compiled``'s metadata, so a cooperative launch stays cooperative. Launch hooks
    (Proton's) run as in Triton's; with none installed (their chains empty) the launcher is
    handed None for them and their metadata, which it then skips."""
    enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    if getattr(enter, "calls", enter) or getattr(leave, "calls", leave):
        compiled.run(grid, 1, 1, stream, compiled.function, compiled.packed_metadata,
                     compiled.launch_metadata((grid, 1, 1), stream, *args), enter, leave, *args)
    else:
        compiled.run(grid, 1, 1, stream, compiled.function, compiled.packed_metadata,
                     None, None, None, *args)


# ---- the GPU, per device (core/device.py) -------------------------------------------------------

def smem_per_block(device: torch.device) -> int:
    """Shared memory a program may allocate (after opting in), in bytes; 0 without a GPU."""
    return smem_optin(device, 0)


_RESIDENT: dict = {}


def resident_per_sm(launch: Launch, tensors: tuple) -> int:
    """How many programs of ``launch``'s kernel, compiled as it will run, an SM holds at once
    (the driver's occupancy calculator; 1 where cuda.bindings is missing)."""
    ints = tuple(a % 16 == 0 for a in launch.args if isinstance(a, int))
    key = (tensors[0].device.index, launch.kernel, tensors[0].dtype, ints,
           tuple(t.data_ptr() % 16 == 0 for t in tensors), tuple(sorted(launch.meta.items())))
    if key not in _RESIDENT:
        compiled = launch.kernel.warmup(*tensors, *launch.args, grid=(1,), **launch.meta)
        compiled._init_handles()
        try:
            from cuda.bindings import driver
        except ImportError:
            _RESIDENT[key] = 1
        else:
            err, n = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                driver.CUfunction(compiled.function), 32 * launch.meta["num_warps"],
                compiled.metadata.shared)
            _RESIDENT[key] = max(1, n) if err == driver.CUresult.CUDA_SUCCESS else 1
    return _RESIDENT[key]


# ---- exchange words -----------------------------------------------------------------------------
#
# A launch of v3, v4 or v5 has its programs publish partial (max, sum) results as words that other
# programs of the same launch read: int64 [launches counted, programs finished, words...], one
# word a partial. Every launch writes every word of its buffer, each carrying the launch's parity
# (its count's lowest bit, in the sum's sign bit); a word of the other parity is the previous
# launch's, "not yet". The last program to finish counts the launch. So a buffer is never zeroed
# after it is made, and it serves one launch at a time: launches on one stream run one after
# another, so each (device, stream, number of words) has its own buffer, kept; a graph being
# captured gets a fresh zeroed one (a memset node of the graph, run before the kernel at every
# replay), so two graphs never share one.

HEAD = 2
_WORDS: dict = {}
_WORDS_LOCK = threading.Lock()
_WORDS_KEPT = 64  # buffers kept (one per stream and size seen); all are dropped beyond


def exchange_words(device: torch.device, words: int) -> torch.Tensor:
    """HEAD + ``words`` int64 words that no other launch uses while this one runs."""
    if INTERPRETED or device.type != "cuda" or torch.cuda.is_current_stream_capturing():
        return torch.zeros(HEAD + words, dtype=torch.int64, device=device)
    index = torch.cuda.current_device() if device.index is None else device.index
    key = (index, current_stream(index), words)
    buf = _WORDS.get(key)
    if buf is None:
        with _WORDS_LOCK:
            buf = _WORDS.get(key)
            if buf is None:
                if len(_WORDS) >= _WORDS_KEPT:
                    _WORDS.clear()  # (a dropped buffer is freed in its stream's order)
                buf = _WORDS[key] = torch.zeros(HEAD + words, dtype=torch.int64, device=device)
    return buf


if INTERPRETED:  # (core/triton_mode.py fixes the interpreter for NumPy 2.4)
    # NumPy warns where the interpreter computes -inf - -inf and the like, on purpose (NaN rows).
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            module=r"triton\.runtime\.interpreter")
