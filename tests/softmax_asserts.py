"""What the softmax tests share: comparisons tighter than the checker's tolerances, inputs, a busy GPU."""

from __future__ import annotations

import torch

from phase24.softmax.cases import with_specials
from phase24.softmax import softmax_reference

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# (relative error of the whole output, elementwise relative bound, elementwise absolute floor);
# rounding the float32 result to float16 / bfloat16 costs up to 2^-11 / 2^-8 relative.
TOL = {torch.float32: (2e-6, 1e-5, 1e-30),
       torch.float16: (1e-3, 1e-3, 1e-7),
       torch.bfloat16: (6e-3, 8e-3, 1e-30)}


def assert_softmax(out: torch.Tensor, x: torch.Tensor, what: str = "") -> None:
    """out is softmax(x) over the last dim: NaN exactly where torch has NaN, the rest within TOL
    of the float64 reference (plus the rounding of the exact result to the dtype), rows summing
    as the rounded reference does."""
    assert out.shape == x.shape and out.dtype == x.dtype, what
    ref = softmax_reference(x).cpu()
    got = out.detach().to(torch.float64).cpu()
    nan_ref = ref.isnan()
    assert torch.equal(got.isnan(), nan_ref), f"{what}: NaN pattern differs from torch's"
    ok = ~nan_ref.any(dim=-1) if ref.dim() else ~nan_ref
    r, g = ref[ok], got[ok]
    if r.numel() == 0:
        return
    rel_all, rel_elem, atol = TOL[x.dtype]
    rounded = r.to(x.dtype).to(torch.float64)
    floor = ((rounded - r).norm() / r.norm()).item()
    rel = ((g - r).norm() / r.norm()).item()
    assert rel <= rel_all + floor, f"{what}: relative error {rel:.3g} > {rel_all:.3g} + {floor:.3g}"
    bad = (g - r).abs() > rel_elem * r.abs() + atol
    assert not bad.any(), f"{what}: {int(bad.sum())} elements out of bounds"
    n = x.shape[-1]
    sums = g.reshape(-1, n).sum(-1)
    want = ref.to(x.dtype).to(torch.float64)[ok].reshape(-1, n).sum(-1)
    assert torch.allclose(sums, want, atol=rel_elem * 2 + n * 1e-7), \
        f"{what}: row sums {sums.min().item():.6g}..{sums.max().item():.6g}"


def randn(shape, dtype, seed, device="cpu", scale=3.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype).to(device)


def specials(m: int, n: int, dtype, seed: int, device="cpu", shift: int = 0) -> torch.Tensor:
    """The checker's special-value rows (softmax/cases.py with_specials), m >= 8."""
    (x,) = with_specials(m, n, shift).make(dtype, device, torch.Generator(device).manual_seed(seed))
    return x


def busy_gpu(ms: float, programs: int):
    """A kernel on a side stream that keeps `programs` programs spinning for `ms`."""
    import triton
    import triton.language as tl

    @triton.jit
    def spin(out_ptr, NS):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                       is_pure=False, pack=1)
        t = t0
        while t - t0 < NS:
            t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                          is_pure=False, pack=1)
        tl.store(out_ptr + tl.program_id(0), t - t0)

    side = torch.cuda.Stream()
    sink = torch.empty(programs, dtype=torch.int64, device="cuda")
    with torch.cuda.stream(side):
        spin[(programs,)](sink, int(ms * 1e6), num_warps=4)
    return side


def check_two_graphs_replayed(f, shape, reps: int, what: str) -> None:
    """Two graphs of ``f`` on inputs of ``shape``, captured after one warm-up call, replayed on two
    streams at once, ``reps`` times, each on fresh values copied into its captured input: every
    output is its own fresh input's softmax (the graph holds the launch, not the captured call's
    values or buffers)."""
    static = [randn(shape, torch.bfloat16, s, device="cuda") for s in (1, 2)]
    f(static[0])  # the warm-up call compiles, builds and sizes the launch
    torch.cuda.synchronize()
    graphs, outs = [], []
    for x in static:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs.append(f(x))
        graphs.append(g)
    streams = [torch.cuda.Stream() for _ in graphs]
    for rep in range(reps):
        fresh = [randn(shape, torch.bfloat16, 100 * rep + k, device="cuda") for k in (0, 1)]
        torch.cuda.synchronize()
        for x, new in zip(static, fresh):
            x.copy_(new)
        torch.cuda.synchronize()
        for g, s in zip(graphs, streams):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                g.replay()
        torch.cuda.synchronize()
        for k in (0, 1):
            assert_softmax(outs[k], fresh[k], f"{what} graph {k} replay {rep} {shape}")


def check_on_a_busy_gpu(f, xs, sms: int, what: str) -> None:
    """Every one of the ``sms`` SMs busy with another stream's kernel for 50 ms when the calls of
    ``f`` on ``xs`` arrive: right, and done within seconds (a launch waits for room)."""
    import time

    f(xs[0])
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    side = busy_gpu(50, 16 * sms)
    outs = [f(x) for x in xs]
    torch.cuda.synchronize()
    side.synchronize()
    assert time.perf_counter() - t0 < 5
    for x, out in zip(xs, outs):
        assert_softmax(out, x, f"{what} on a busy GPU {tuple(x.shape)}")
