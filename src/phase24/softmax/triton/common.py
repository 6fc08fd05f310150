"""Utilities of the Triton rungs: no rung's idea lives here.

* ``LOG2E`` and small integer helpers;
* ``Launch`` and ``Plan``: a launch decided in full (kernel, grid, arguments, options), so that
  what ``which()`` prints is what ``run()`` launches;
* the facts about a GPU a launcher reads (SMs, shared memory, programs resident per SM), per device;
* ``exchange_words``: the scratch through which the programs of one launch trade partial
  results (rungs v3 to v5), and the rules that keep it to one launch at a time.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import warnings

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # exp(v) = exp2(v * log2(e))
DEADLINE_NS = 10**10  # a wait longer than this is a bug: the kernel stops with an error (v3-v5)


@triton.jit
def _probe():
    pass


# Whether this process runs Triton kernels in the interpreter (fixed when triton was imported).
INTERPRETED = type(_probe).__name__ == "InterpretedFunction"
INTERPRETER_SMS = 4  # the "SMs" a launcher sizes grids for in the interpreter


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def prev_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n.bit_length() - 1)


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
    """The launches that compute one call, in order, and the scratch they share: none, ``words``
    int64 words made fresh for the call ("fresh"), or the launch's exchange words ("exchange")."""

    launches: tuple
    scratch: str = ""
    words: int = 0
    note: str = ""   # why a rung runs another rung's kernel here, if it does

    def describe(self) -> str:
        text = "; then ".join(launch.describe() for launch in self.launches)
        return f"{text} [{self.note}]" if self.note else text


def fallback(plan: Plan, why: str) -> Plan:
    """``plan`` (another rung's), with the reason the asking rung gave it the shape."""
    return dataclasses.replace(plan, note=why + (f"; {plan.note}" if plan.note else ""))


def run(plan: Plan, x2d: torch.Tensor, out: torch.Tensor) -> None:
    """Launch ``plan`` on x2d into out, under x2d's device (its current stream)."""
    if x2d.is_cuda and x2d.device.index != torch.cuda.current_device():
        with torch.cuda.device(x2d.device):
            return run(plan, x2d, out)
    tensors = (x2d, out)
    if plan.scratch == "exchange":
        tensors = (x2d, out, exchange_words(x2d.device, plan.words))
    elif plan.scratch == "fresh":
        tensors = (x2d, out, torch.empty(plan.words, dtype=torch.int64, device=x2d.device))
    for launch in plan.launches:
        launch.kernel[(launch.grid,)](*tensors, *launch.args, **launch.meta)


# ---- the GPU, per device ------------------------------------------------------------------------

def num_sms(device: torch.device) -> int:
    """Multiprocessors of the device (the interpreter's pretend count without one)."""
    if INTERPRETED or device.type != "cuda":
        return INTERPRETER_SMS
    return _props(device.index).multi_processor_count


def smem_per_block(device: torch.device) -> int:
    """Shared memory a program may allocate (after opting in), in bytes; 0 without a GPU."""
    if INTERPRETED or device.type != "cuda":
        return 0
    return getattr(_props(device.index), "shared_memory_per_block_optin", 48 * 1024)


def capability(device: torch.device) -> tuple[int, int]:
    return (0, 0) if INTERPRETED or device.type != "cuda" else torch.cuda.get_device_capability(
        device.index)


@functools.cache
def _props(index: int):
    return torch.cuda.get_device_properties(index)


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
    key = (device.index, torch.cuda.current_stream(device).cuda_stream, words)
    with _WORDS_LOCK:
        buf = _WORDS.get(key)
        if buf is None:
            if len(_WORDS) >= _WORDS_KEPT:
                _WORDS.clear()  # (a dropped buffer is freed in its stream's order)
            buf = _WORDS[key] = torch.zeros(HEAD + words, dtype=torch.int64, device=device)
    return buf


def install_interpreter_numpy_fix() -> None:
    """Let Triton 3.6's interpreter use runtime ints as loop bounds under NumPy >= 2.4.

    The interpreter holds every scalar as a 1-element array and converts it with ``int(array)``,
    which NumPy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars"), so
    ``for i in range(n)`` with a kernel argument ``n`` fails there. This wraps the interpreter's
    patching of ``tl.tensor`` so ``__index__`` reads the single element instead. Idempotent.
    """
    import triton.runtime.interpreter as interp

    if getattr(interp._patch_lang_tensor, "_phase24_fix", False):
        return
    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._phase24_fix = True
    interp._patch_lang_tensor = patched


if INTERPRETED:
    install_interpreter_numpy_fix()
    # NumPy warns where the interpreter computes -inf - -inf and the like, on purpose (NaN rows).
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            module=r"triton\.runtime\.interpreter")
