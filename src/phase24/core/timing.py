"""Three times of one call, each a different number (say which one a figure is):

* ``gpu_us``: the GPU's time alone. The calls are captured in a CUDA graph and the graph is
  replayed, so no host work sits between them; L2 is not flushed (a call may find its input
  there when it fits).
* ``loop_us``: what a caller of back-to-back calls waits per call: ``fn()`` in a loop, no
  flush, CUDA events around the loop. When the host's work on a call (argument checks, the
  output's allocation, the launches) takes longer than the kernel, this is the host's time.
* ``flushed_us``: the GPU's time with a cold L2: before each call 256 MB are written (the
  flush) and the GPU is kept busy ~150 us (torch.cuda._sleep), so the host has queued the call
  before its start event fires. With ``host=True`` the GPU is not kept busy: the time then
  includes what of the host's work the GPU waited for, though the flush still hides up to
  ~70 us of it.

Every figure is a median over repetitions after a warm-up: as many as fit a fixed time (at
least 20 loops, graphs of 20 calls, for the microseconds a softmax takes), down to 3 to 5 for a
call of tens of milliseconds (a naive GEMM at 8192^3), whose median is steady.
"""

from __future__ import annotations

import torch

_flush: torch.Tensor | None = None


def call_ms(fn) -> float:
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    torch.cuda.synchronize()
    return max(start.elapsed_time(end) / 5, 1e-3)


def flushed_us(fn, warmup_ms: float = 25, rep_ms: float = 100, host: bool = False,
               estimate_ms: float | None = None) -> float:
    """Median time of ``fn()`` in microseconds, L2 flushed before each call (module docstring)."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    estimate_ms = estimate_ms or call_ms(fn)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        fn()
    n = min(1000, max(10 if estimate_ms < 10 else 5, int(rep_ms / estimate_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        _flush.zero_()
        if not host:
            torch.cuda._sleep(300_000)  # ~150 us of GPU cycles
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return 1000.0 * times[len(times) // 2]


def loop_us(fn, rep_ms: float = 50, rounds: int = 5, estimate_ms: float | None = None) -> float:
    """A caller's time per call of back-to-back calls: the median over ``rounds`` loops."""
    estimate_ms = estimate_ms or call_ms(fn)
    n = min(2000, max(20 if estimate_ms < 1 else 3, int(rep_ms / rounds / estimate_ms)))
    for _ in range(n):
        fn()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(n):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / n)
    return 1000.0 * sorted(times)[len(times) // 2]


def gpu_us(fn, calls: int = 20, rounds: int = 10, estimate_ms: float | None = None,
           rep_ms: float = 200) -> float | None:
    """The GPU's time per call: ``calls`` calls captured in a CUDA graph, replayed ``rounds``
    times, the median per call (fewer of both where they would take over ``rep_ms``). None when
    ``fn`` cannot be captured (it synchronises, say)."""
    estimate_ms = estimate_ms or call_ms(fn)
    calls = max(1, min(calls, int(rep_ms / rounds / estimate_ms)))
    rounds = max(3, min(rounds, int(rep_ms / calls / estimate_ms)))
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(stream):  # warm up on the capture stream
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
    except Exception:
        torch.cuda.synchronize()
        return None
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    del graph
    return 1000.0 * sorted(times)[len(times) // 2]


def copy_gbps(nbytes: int = 2**31) -> float:
    """Device-to-device copy bandwidth (bytes read + bytes written per second), in GB/s."""
    src = torch.randn(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    us = flushed_us(lambda: dst.copy_(src))
    src = dst = None
    torch.cuda.empty_cache()
    return 2 * nbytes / us / 1e3
