"""The CUDA C rungs in the calling situations a library meets: two host threads on one stream
and on their own streams, several streams at once, CUDA graphs replayed on fresh values, and a
GPU whose every SM is busy with another stream's kernel when the launch arrives."""

from __future__ import annotations

import threading

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.cuda import launchers as ci
from softmax_asserts import (assert_softmax, check_on_a_busy_gpu, check_two_graphs_replayed,
                             randn)

pytestmark = pytest.mark.gpu
CUDA_RUNGS = [name for name in IMPLEMENTATIONS if name.startswith("cuda")]
# Few long rows (the cluster rungs' rows, v8's persistent grid), rows of one block, short rows
# that share blocks (v4/v6 groups), and an odd length.
SHAPES = ((8, 131072), (2, 65536), (300, 4096), (1000, 200), (37, 3001))


def inputs(dtype, seed):
    return [randn(s, dtype, seed + i, device="cuda") for i, s in enumerate(SHAPES)]


def calls(name: str) -> int:
    return 8 if name == "cuda-naive" else 60  # v0 takes ~25 ms on 8 x 131072


@pytest.mark.parametrize("own_streams", [False, True], ids=["one-stream", "own-streams"])
@pytest.mark.parametrize("name", CUDA_RUNGS)
def test_two_host_threads(name, own_streams):
    """Two threads call the rung at once, each with its own inputs of every shape: launches
    interleave (on the default stream, or each thread's own), each output is its own input's."""
    f = IMPLEMENTATIONS[name]
    xs = {t: inputs(torch.bfloat16, 10 * t) for t in range(2)}
    streams = {t: torch.cuda.Stream() if own_streams else torch.cuda.current_stream()
               for t in range(2)}
    outs, errors = {0: [], 1: []}, []
    torch.cuda.synchronize()

    def work(t):
        try:
            with torch.cuda.stream(streams[t]):
                for i in range(calls(name)):
                    outs[t].append((i % len(SHAPES), f(xs[t][i % len(SHAPES)])))
            streams[t].synchronize()
        except Exception as err:  # an exception in a thread would otherwise pass unseen
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(2):
        for shape, out in outs[t][:2 * len(SHAPES)]:  # each shape twice per thread
            assert_softmax(out, xs[t][shape], f"{name} thread {t} {SHAPES[shape]}")


@pytest.mark.parametrize("name", CUDA_RUNGS)
def test_several_streams(name):
    """Four streams run the rung at once, each on its own values, shape after shape."""
    f = IMPLEMENTATIONS[name]
    streams = [torch.cuda.Stream() for _ in range(4)]
    xs = [inputs(torch.float32, 40 + 10 * k) for k in range(len(streams))]
    torch.cuda.synchronize()
    outs = []
    for shape in range(len(SHAPES)):
        for k, s in enumerate(streams):
            with torch.cuda.stream(s):
                outs.append((k, shape, f(xs[k][shape])))
    torch.cuda.synchronize()
    for k, shape, out in outs:
        assert_softmax(out, xs[k][shape], f"{name} stream {k} {SHAPES[shape]}")


@pytest.mark.parametrize("name", CUDA_RUNGS)
def test_two_graphs_replayed_concurrently(name):
    """Two graphs of each shape replayed on two streams at once, each on fresh values copied into
    its captured input (check_two_graphs_replayed)."""
    for shape in SHAPES[:3]:
        check_two_graphs_replayed(IMPLEMENTATIONS[name], shape, 3, name)


@pytest.mark.parametrize("name", CUDA_RUNGS)
def test_a_busy_gpu(name):
    """Every SM busy with another stream's kernel for 50 ms when the launches arrive: they wait
    for room (v8's persistent grid and the clusters included), are right, and end soon after."""
    check_on_a_busy_gpu(IMPLEMENTATIONS[name], inputs(torch.float32, 50), ci.sm_count(), name)
