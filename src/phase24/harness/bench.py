"""`phase24 bench OP`: time implementations against the operation's baseline and its ceiling.

For every dtype and shape of the operation's sweep, each implementation (the baseline first,
then those asked, then the installed peers) is checked on a few rows against the float64
reference and timed three ways (core/timing.py says what each is):

* ``us``: the GPU's time with a cold L2 and the host hidden (``flushed_us``);
* ``gpu_us``: the GPU's time alone, calls replayed from a CUDA graph, L2 warm;
* ``loop_us``: a caller's time per call of back-to-back calls, the host's work included;

and ``host_us``, a flushed call with the host's launch included (what earlier runs reported).
The bytes the operation must move over ``us`` give its bandwidth, compared with a copy measured
in the same run; a copy of each shape's own bytes is timed the same four ways (``copy_same_size``).
"""

from __future__ import annotations

import dataclasses

import torch

from phase24.core import timing
from phase24.core.dtypes import DTYPES
from phase24.core.op import Op, OpArgumentError
from phase24.core.provenance import stamp


@dataclasses.dataclass
class Record:
    impl: str
    dtype: str
    shape: dict      # the operation's sizes, e.g. {"M": 64, "N": 32768}
    us: float        # flushed, host hidden
    gbps: float
    pct_copy: float
    speedup: float | None
    plan: str | None
    host_us: float
    gpu_us: float | None
    loop_us: float
    tflops: float | None = None  # for an operation that counts its flops (Op.flops)

    def as_dict(self, baseline: str) -> dict:
        d = {"impl": self.impl, "dtype": self.dtype, **self.shape, "us": self.us,
             "gbps": self.gbps, "pct_copy": self.pct_copy,
             f"speedup_vs_{baseline}": self.speedup, "plan": self.plan,
             "host_us": self.host_us, "gpu_us": self.gpu_us, "loop_us": self.loop_us}
        if self.tflops is not None:
            d["tflops"] = self.tflops
        return d


def verify(op: Op, out: torch.Tensor, inputs: tuple, rows: int = 16) -> str:
    """Compare a few rows of a timed output with the float64 reference; '' when right."""
    m = op.rows(inputs)
    idx = torch.unique(torch.tensor([0, m - 1, *torch.randint(0, m, (rows,)).tolist()])).cuda()
    return op.compare(op.pick(out, idx), op.reference(*inputs, rows=idx), inputs[0].dtype).why


def refill(inputs: tuple) -> None:
    """New random values, in place, in every floating-point input (a view's gaps untouched)."""
    for x in inputs:
        if x.is_floating_point():
            x.copy_(torch.randn(x.shape, device=x.device).to(x.dtype))


def times(fn) -> dict:
    """The four times of ``fn()`` (module docstring), rounded to the nanosecond."""
    est = timing.call_ms(fn)  # one estimate sets how many repetitions each time takes
    gpu = timing.gpu_us(fn, estimate_ms=est)
    return {"us": round(timing.flushed_us(fn, estimate_ms=est), 3),
            "host_us": round(timing.flushed_us(fn, host=True, estimate_ms=est), 3),
            "gpu_us": None if gpu is None else round(gpu, 3),
            "loop_us": round(timing.loop_us(fn, estimate_ms=est), 3)}


def run_bench(op: Op, impls: dict, dtypes: list[str], shapes: list[tuple], progress=None,
              peers: dict | None = None, on_shape=None, sweep: bool = False) -> dict:
    """Time the baseline (the first of the operation's implementations, each speed-up's
    reference, asked for or not), ``impls`` and the installed peers on every shape;
    ``on_shape(line)`` hears a line as each shape is done. ``sweep``: the default shapes, where
    ``op.not_swept`` leaves out what is too slow to time there."""
    every = op.implementations()
    baseline = next(iter(every))
    peers = op.peers() if peers is None else peers
    impls = {baseline: every[baseline], **impls, **{k: v for k, v in peers.items()
                                                    if k not in impls}}
    copy = timing.copy_gbps()
    records, same_size, failures, refused = [], [], [], []
    task = progress.add_task("bench", total=len(dtypes) * len(shapes) * len(impls)) \
        if progress else None
    for dtname in dtypes:
        dtype = DTYPES[dtname]
        for shape in shapes:
            label = "x".join(map(str, shape))
            sizes = dict(zip(op.shape_fields, shape))
            inputs = op.make_inputs(shape, dtype)
            nbytes = op.bytes_moved(shape, dtype)
            base_us = None
            for name, fn in impls.items():
                if progress:
                    progress.update(task, description=f"{name} {dtname} {label}")
                skip = sweep and op.not_swept(name, shape)
                if skip:
                    refused.append(f"{name} {dtname} {label}: {skip}")
                    if progress:
                        progress.advance(task)
                    continue
                call = (lambda fn=fn: fn(*inputs))
                try:
                    out = call()
                except Exception as err:  # a documented limit, or a peer's refusal
                    if not isinstance(err, OpArgumentError) and name not in peers:
                        raise
                    first = (str(err).strip().splitlines() or [""])[0][:200]
                    refused.append(f"{name} {dtname} {label}: " + (
                        f"{type(err).__name__}: {first}" if name in peers else str(err)))
                    if progress:
                        progress.advance(task)
                    continue
                why = verify(op, out, inputs)
                t = times(call)
                why = why or verify(op, call(), inputs)  # and again after the timed loops
                if not why:  # fresh values in the same buffers: a result kept by address shows
                    refill(inputs)
                    why = verify(op, call(), inputs)
                    why = why and ("wrong on fresh values written into the same buffers after "
                                   f"the timing (a result kept by address?): {why}")
                if why:
                    failures.append(f"{name} {dtname} {label}: {why}")
                if name == baseline:
                    base_us = t["us"]
                gbps = nbytes / t["us"] / 1e3
                records.append(Record(
                    name, dtname, sizes, t["us"], round(gbps, 1), round(100 * gbps / copy, 1),
                    round(base_us / t["us"], 3) if base_us else None, op.which(name, inputs)
                    if name in every else None, t["host_us"], t["gpu_us"], t["loop_us"],
                    round(op.flops(shape) / t["us"] / 1e6, 2) if op.flops else None))
                del out
                if progress:
                    progress.advance(task)
            if on_shape:
                done = [r for r in records if r.dtype == dtname and r.shape == sizes]
                on_shape(f"{dtname} {label}: " + ", ".join(
                    f"{r.impl} {r.us:.1f} us (loop {r.loop_us:.1f})" for r in done))
            src = inputs[0]
            dst = torch.empty_like(src)
            t = times(lambda: dst.copy_(src))
            same_size.append({"dtype": dtname, **sizes, **t,
                              "pct_copy": round(100 * nbytes / t["us"] / 1e3 / copy, 1),
                              "gbps": round(2 * src.nbytes / t["us"] / 1e3, 1)})
            inputs = dst = src = None  # freed before the next shape
            torch.cuda.empty_cache()
    return {
        "op": op.name, **stamp(),
        "timing": "us: median GPU time per call, L2 flushed and the GPU kept busy before each "
                  "call so the host's work is hidden; host_us: the same without keeping the GPU "
                  "busy (the host's launch included, up to ~70 us of it hidden by the flush); "
                  "gpu_us: the GPU's time per call, 20 calls replayed from a CUDA graph, L2 "
                  "warm; loop_us: a caller's time per call of back-to-back calls, no flush "
                  "(src/phase24/core/timing.py)",
        "baseline": baseline, "peers": sorted(peers),
        "copy_gbps": round(copy, 1), "copy_same_size": same_size, "failures": failures,
        "refused": refused, "records": [r.as_dict(baseline) for r in records],
    }
