"""The Triton rungs on a GPU: every configuration at full size, special values where every path
runs, and the calling situations a library meets (threads, streams, graphs, a busy or small GPU,
another device), through the registered rungs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax.args import run_rows
from phase24.softmax.triton import (RUNGS, common, v1_rows, v3_lagged, v4_ring, v5_whole_row,
                                    which)
from softmax_asserts import (DTYPES, assert_softmax, check_on_a_busy_gpu,
                             check_two_graphs_replayed, randn, specials)

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[1]
SWEEP_N = [128 << i for i in range(12)]  # 128 ... 262144
FEW_ROWS = [(1, 32768), (8, 131072), (64, 32768), (64, 262144)]
WAITING = ("triton-v3", "triton-v4", "triton-v5", "triton")


def forced(name, config):
    return lambda x, out=None: run_rows(lambda a, o: RUNGS[name].softmax_rows(a, o, config), x,
                                        out)


def configurations(name: str, n: int, elem: int) -> list:
    """The rung's default (None) and every candidate configuration the tuner may pick."""
    more = {"triton-v1": lambda: v1_rows.candidates(n),
            "triton-v3": lambda: v3_lagged.candidates(n, elem),
            "triton-v4": lambda: v4_ring.candidates(n, elem),
            "triton-v5": lambda: v5_whole_row.candidates(n, elem)}.get(name, list)
    return [None] + more()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_every_rung_and_configuration(dtype):
    # Every rung, with its default and (float32, bfloat16) each configuration the tuner may
    # choose, on 144 rows (more than the SMs) of every sweep length with special rows, and at
    # the few-rows shapes; rungs that need whole 16-byte rows must run their own kernel there
    # (no silent fallback).
    elem = torch.empty(0, dtype=dtype).element_size()
    for n in SWEEP_N:
        x = specials(144, n, dtype, seed=n, device="cuda")
        for name in RUNGS:
            if (name == "triton-naive" and n > 65536) or (name == "triton-v1" and n > 32768):
                continue
            configs = configurations(name, n, elem) if dtype != torch.float16 else [None]
            for config in configs:
                f = IMPLEMENTATIONS[name] if config is None else forced(name, config)
                what = f"{name} {config} {x.shape} {dtype}"
                assert_softmax(f(x), x, what)
                if name in ("triton-v4", "triton-v5") and n >= 32768:
                    ran = RUNGS[name].decide(x, torch.empty_like(x), config).launches[0].rung
                    assert ran == name, f"{what}: fell back to {ran}"
    for m, n in FEW_ROWS:
        x = (specials(m, n, dtype, seed=m + n, device="cuda") if m >= 8 else
             randn((m, n), dtype, seed=m + n, device="cuda"))
        for name in RUNGS:
            if (name == "triton-naive" and n > 65536) or (name == "triton-v1" and n > 32768):
                continue
            assert_softmax(IMPLEMENTATIONS[name](x), x, f"{name} {x.shape} {dtype}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_gpu_unaligned_rows_fall_back_and_say_so(dtype):
    for name in ("triton-v4", "triton-v5"):
        x = specials(160, 65536, dtype, seed=3, device="cuda", shift=1)
        assert_softmax(IMPLEMENTATIONS[name](x), x, f"{name} unaligned")
        assert "not whole 16-byte copies" in which(x, name)


def _mixed_inputs(dtype, seed):
    return [randn(s, dtype, seed + i, device="cuda") for i, s in
            enumerate([(8, 131072), (200, 65536), (64, 262144), (300, 1000), (137, 32768)])]


def _tiny_inputs(dtype, seed):
    """Long rows in launches of a few programs, which leave room for others beside them."""
    return [randn(s, dtype, seed + i, device="cuda") for i, s in
            enumerate([(2, 8192), (4, 16384), (1, 65536)])]


@pytest.mark.parametrize("name", WAITING)
def test_gpu_two_host_threads_one_stream(name):
    # Two threads call the rung on the default stream with their own inputs, 300 calls each:
    # launches interleave on the stream, each must use scratch no other launch is using.
    f = IMPLEMENTATIONS[name]
    inputs = {t: _mixed_inputs(torch.bfloat16, 10 * t) for t in range(2)}
    refs = {t: [softmax_reference(x) for x in xs] for t, xs in inputs.items()}
    wrong = []

    def work(t):
        outs = [f(inputs[t][i % 5]) for i in range(300)]
        torch.cuda.synchronize()
        for i, out in enumerate(outs):
            ref = refs[t][i % 5]
            if (out.double() - ref).abs().max().item() > 1e-2:
                wrong.append((t, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not wrong, f"{len(wrong)} wrong outputs of 600: {wrong[:5]}"


@pytest.mark.parametrize("name", WAITING)
def test_gpu_several_streams(name):
    # Four streams run the rung at once, each on its own values of the same shape (so of the
    # same scratch size), one shape after another; launches of a few programs run side by side.
    f = IMPLEMENTATIONS[name]
    streams = [torch.cuda.Stream() for _ in range(4)]
    xs = {k: _mixed_inputs(torch.float32, 40 + 10 * k) + _tiny_inputs(torch.float32, 45 + 10 * k)
          for k in range(len(streams))}
    torch.cuda.synchronize()
    outs = []
    for rep in range(3):
        for shape in range(len(xs[0])):
            for k, s in enumerate(streams):
                with torch.cuda.stream(s):
                    outs.append((k, f(xs[k][shape]), shape))
    torch.cuda.synchronize()
    for k, out, shape in outs:
        assert_softmax(out, xs[k][shape], f"{name} stream {k} shape {shape}")


@pytest.mark.parametrize("name", WAITING)
def test_gpu_two_graphs_replayed_concurrently(name):
    # Two graphs of each shape, replayed on two streams at once on fresh values, 20 times.
    for shape in ((8, 131072), (200, 65536), (2, 8192)):
        check_two_graphs_replayed(IMPLEMENTATIONS[name], shape, 20, name)


@pytest.mark.parametrize("name", WAITING)
def test_gpu_busy_gpu(name):
    # Every SM busy with another stream's programs when the launch arrives: right, and done
    # soon after the other kernel (a cooperative launch waits for room instead of starting part
    # of its programs).
    check_on_a_busy_gpu(IMPLEMENTATIONS[name], _mixed_inputs(torch.float32, 50),
                        common.num_sms(torch.device("cuda")), name)


@pytest.mark.parametrize("name", WAITING)
def test_gpu_small_gpu(name, monkeypatch):
    # A GPU of 16 SMs (a MIG slice, an older part) and one of 2, emulated: launches are sized
    # for it, rows that would span more steps than its programs take the rung that does not
    # wait, and no call waits long.
    f = IMPLEMENTATIONS[name]
    for sms, x in [(sms, x) for sms in (16, 2) for dtype in (torch.bfloat16, torch.float32)
                   for x in _mixed_inputs(dtype, 60)]:
        monkeypatch.setattr(common, "num_sms", lambda device, sms=sms: sms)
        common.forget()  # (decisions are kept per shape: made again for this GPU size)
        f(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = f(x)
        torch.cuda.synchronize()
        took = time.perf_counter() - t0
        what = f"{name} {sms} SMs {tuple(x.shape)} {x.dtype}"
        assert_softmax(out, x, what)
        assert took < 0.05, f"{what}: {took * 1e3:.1f} ms ({which(x, name)})"


def test_gpu_accuracy_stays_flat_as_rows_grow():
    # float32 rows of 1M to 64M values: relative error of `triton` against float64 within a few
    # roundings (2e-7) at every length, and at most torch's. (H200, 2026-12-01: 3.0e-8, 8.0e-8,
    # 9.1e-8, 7.1e-8; torch's grows with the length.)
    errs = {}
    for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
        x = randn((2, n), torch.float32, n, device="cuda")
        ref = softmax_reference(x)
        rel = lambda y: ((y.double() - ref).norm() / ref.norm()).item()  # noqa: E731
        errs[n] = rel(IMPLEMENTATIONS["triton"](x))
        assert errs[n] <= 2e-7 and errs[n] <= max(1e-7, rel(torch.softmax(x, -1))), \
            (n, errs, which(x))
        del x, ref


def test_gpu_a_wait_that_cannot_end_stops_with_an_error():
    # The lagged kernel launched so that a program waits for partials nobody will publish
    # (one program, rows of 8 chunks): after its deadline (here 1 ms) it traps, and the process
    # gets a CUDA error instead of hanging.
    code = textwrap.dedent("""
        import dataclasses, os, torch
        from phase24.softmax.triton import common, v3_lagged
        x = torch.randn(4, 8 * 2048, device="cuda")
        out = torch.empty_like(x)
        plan = v3_lagged.decide(x, out)
        bad = dataclasses.replace(plan.launches[0], grid=1,
                                  args=plan.launches[0].args[:-1] + (10**6,))
        bad_plan = dataclasses.replace(plan, launches=(bad,))
        try:
            common.launch_rows(lambda *_: bad_plan, x, out)
            torch.cuda.synchronize()
        except Exception as err:
            print("error:", type(err).__name__, err, flush=True)
            os._exit(3)  # (a process whose context has faulted may hang in its teardown)
        print("no error", flush=True)
    """)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 3 and "error:" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert time.perf_counter() - t0 < 50


def test_gpu_second_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU here: the second-device run needs two")
    torch.cuda.set_device(0)
    for name in RUNGS:
        x = randn((200, 65536), torch.bfloat16, 9, device="cuda:1")
        out = IMPLEMENTATIONS[name](x)
        assert out.device == x.device
        assert_softmax(out, x, f"{name} on cuda:1")
