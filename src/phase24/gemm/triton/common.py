"""Utilities of the Triton GEMM rungs: no rung's idea lives here.

* ``Launch`` and ``Plan``: a launch decided in full (kernel, grid, arguments, options), so that
  what ``which()`` prints is what runs;
* ``run``: every rung's tile kernel ``matmul_tiles(a, b, c, config=None)``: its ``decide`` runs
  once per key (sizes, dtype, device, alignment, configuration), then the plan's ``launch``
  (in the rung's own file) makes the launches; in the interpreter one call at a time;
* the facts about a GPU a rung's heuristic reads (SMs, shared memory a program may use,
  compute capability), per device, and the interpreter's stand-ins for them;
* ``Tuned``: the hook by which a rung or ``triton`` reads the offline table (triton_configs.json).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import torch

from phase24.core import tuned
from phase24.core.dtypes import TAG
from phase24.core.device import (INTERPRETER_SMS, capability, gpu_name,  # noqa: F401 (the rungs')
                                 num_sms, smem_optin)
from phase24.core.plans import cdiv, fallback, next_pow2  # noqa: F401  (for the rungs)
from phase24.core.triton_mode import INTERPRETED, interpreted
from phase24.gemm.args import GemmArgumentError

INTERPRETER_SMEM = 96 * 1024  # the shared memory a heuristic assumes there (bounds the tiles)
TABLE = Path(__file__).resolve().parent / "triton_configs.json"


@dataclasses.dataclass(frozen=True)
class Launch:
    """One kernel launch: ``kernel[grid](*tensors, *args, **meta)``."""

    rung: str        # the registry name of the rung this kernel belongs to
    kernel: object   # a @triton.jit function
    grid: tuple
    args: tuple      # the arguments after the tensors (sizes)
    meta: dict       # compile-time arguments and launch options (num_warps, num_stages)

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.meta.items())
        grid = "x".join(str(g) for g in self.grid)
        return f"{self.rung} {self.kernel.__name__}[{grid}]({opts})"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a rung's ``decide`` chose for a shape: the launches of one call, in order, and
    ``launch``, the function of the rung file whose ``kernel[grid](...)`` makes them."""

    launches: tuple
    launch: Callable  # launch(plan, a, b, c) -> None
    note: str = ""    # why a rung runs another rung's kernel here, if it does

    def describe(self) -> str:
        text = "; then ".join(launch.describe() for launch in self.launches)
        return f"{text} [{self.note}]" if self.note else text


# ---- decided once per key, then launched --------------------------------------------------------

_DECIDED: dict = {}
_DECIDED_KEPT = 4096  # keys kept; all are dropped beyond


def aligned(t: torch.Tensor) -> bool:
    """Whether the kernel will get ``t`` 16-byte aligned (a non-contiguous operand is copied by
    the entry, and a fresh copy is aligned)."""
    return not t.is_contiguous() or t.data_ptr() % 16 == 0


def key(decide: Callable, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor | None,
        config) -> tuple:
    return (decide, config, a.shape[0], b.shape[1], a.shape[1], a.dtype, a.device,
            aligned(a), aligned(b), c is None or c.data_ptr() % 16 == 0)


def decided(decide: Callable, a, b, c, config=None) -> Plan:
    """The plan for the key of (a, b, c) (``decide(a, b, c, config)``, on the key's first use);
    ``c`` may be None (which(): a fresh output, aligned)."""
    k = key(decide, a, b, c, config)
    plan = _DECIDED.get(k)
    if plan is None:
        if len(_DECIDED) >= _DECIDED_KEPT:
            _DECIDED.clear()
        plan = _DECIDED[k] = decide(a, b, c, config)
    return plan


def forget() -> None:
    """Drop every decision (after a test changed what a rung reads: the tuned table)."""
    _DECIDED.clear()
    tuned.clear()


def run(decide: Callable, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, config=None) -> None:
    """A rung's tile kernel: launch what ``decide`` chose for the key of (a, b, c); in the
    interpreter, one call at a time (``interpreted``: it is not thread-safe)."""
    if not INTERPRETED:
        plan = decided(decide, a, b, c, config)
        plan.launch(plan, a, b, c)
        return
    if a.dtype == torch.bfloat16:
        raise GemmArgumentError("Triton's interpreter has no bfloat16 tl.dot (it multiplies the "
                                "raw 16-bit patterns); check bfloat16 on a GPU")
    with interpreted():
        plan = decided(decide, a, b, c, config)
        plan.launch(plan, a, b, c)


# ---- the GPU, per device (core/device.py) -------------------------------------------------------

def smem_per_program(device: torch.device) -> int:
    """Shared memory one program may use (after opting in), in bytes."""
    return smem_optin(device, INTERPRETER_SMEM)


# ---- the tuned table ----------------------------------------------------------------------------
#
# triton_configs.json: {"gpu": name, "best": [{"dtype": "f32", "m": M class, "n": N class,
# "k": K class, "rung": name, "config": {...}}, ...]}, written offline on one GPU. A class is the
# size rounded up to a power of two (M at most 64 in its own classes: the decode shapes).

def shape_class(m: int, n: int, k: int) -> tuple[int, int, int]:
    return next_pow2(m), next_pow2(n), next_pow2(k)


def _key(e: dict) -> tuple:
    return (e["dtype"], e["m"], e["n"], e["k"])


def _value(e: dict) -> tuple:
    return (e["rung"], e["config"])


def tuned_pick(a: torch.Tensor, b: torch.Tensor) -> tuple | None:
    """(rung name, config dict) the table holds for this shape on this GPU, or None (no table,
    another GPU, a shape it lacks, or the interpreter)."""
    if INTERPRETED or not a.is_cuda:
        return None
    table = tuned.load(TABLE, gpu_name(a.device), key=_key, value=_value)
    return table.get((TAG[a.dtype], *shape_class(a.shape[0], b.shape[1], a.shape[1])))
