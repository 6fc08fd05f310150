"""The C++ call path on a GPU: after a shape's first call, `cuda` and `triton` calls are made
from C++ (bridge/fastcall.cpp), and give bit for bit what the Python path gives, into a new
output or the caller's, on every scratch kind (none, fresh, exchange), on a side stream, from
two threads, in a CUDA graph (where the exchange rungs decline and Python takes the call), and
for inputs the C++ side must hand back to Python (strided, another device's, a wrong `out`)."""

from __future__ import annotations

import threading

import pytest
import torch

from phase24.bridge import fastcall
from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.args import SoftmaxArgumentError, entry
from phase24.softmax.cuda import RUNGS as CUDA_RUNGS
from phase24.softmax.cuda import _replayed
from phase24.softmax.triton import RUNGS as TRITON_RUNGS
from softmax_asserts import assert_softmax, randn

pytestmark = pytest.mark.gpu

# (implementation, shape, dtype): the few-row shapes of the benchmark, each scratch kind of the
# Triton ladder (v2: fresh; v3-v5: exchange), and a row of odd length.
CASES = [("cuda", (1, 32768), torch.float32), ("cuda", (64, 262144), torch.bfloat16),
         ("cuda-v10", (8, 131072), torch.bfloat16), ("cuda", (37, 3001), torch.float16),
         ("triton", (1, 32768), torch.float32), ("triton", (8, 131072), torch.bfloat16),
         ("triton", (64, 32768), torch.bfloat16), ("triton-v2", (4, 65536), torch.float32),
         ("triton-v3", (2, 40000), torch.bfloat16), ("triton-v1", (300, 1000), torch.float16)]


@pytest.fixture(scope="module", autouse=True)
def built():
    why = fastcall.build()
    assert not why, f"the C++ call path did not build: {why}"
    assert fastcall.native() is not None, fastcall.status()


def python_only(name):
    """The same implementation with no C++ path: every call through Python."""
    if name in CUDA_RUNGS:
        return entry(name, _replayed(CUDA_RUNGS[name]))
    return entry(name, TRITON_RUNGS[name].softmax_rows)


@pytest.mark.parametrize("name,shape,dtype", CASES, ids=[f"{c[0]}-{c[1][0]}x{c[1][1]}-{c[2]}"
                                                        for c in CASES])
def test_calls_after_the_first_are_made_from_cpp_and_match_python(name, shape, dtype):
    f, slow = IMPLEMENTATIONS[name], python_only(name)
    x = randn(shape, dtype, 1, device="cuda")
    f(x)                                    # the first call decides, in Python
    y = f.fast.call(x, None)
    assert y is not None, f"{name}: the C++ path did not take a decided key"
    for seed in range(2, 5):                # fresh values, through the registry's entry
        x = randn(shape, dtype, seed, device="cuda")
        got, want = f(x), slow(x)
        assert torch.equal(got, want), f"{name} {shape}: C++ and Python paths differ"
        assert_softmax(got, x, name)
    out = torch.full(shape, float("nan"), dtype=dtype, device="cuda")
    assert f.fast.call(x, out) is out and torch.equal(out, slow(x))


@pytest.mark.parametrize("name", ["cuda", "triton"])
def test_what_cpp_does_not_take_goes_to_python(name):
    f = IMPLEMENTATIONS[name]
    x = randn((8, 4096), torch.float32, 7, device="cuda")
    f(x)
    assert f.fast.call(x, None) is not None
    strided = randn((8, 8192), torch.float32, 8, device="cuda")[:, ::2]
    assert f.fast.call(strided, None) is None
    assert_softmax(f(strided), strided, "strided")
    assert f.fast.call(x, torch.empty(8, 4095, device="cuda")) is None
    with pytest.raises(SoftmaxArgumentError, match="out must be"):
        f(x, torch.empty(8, 4095, device="cuda"))
    assert f.fast.call(x.requires_grad_(), None) is None
    with pytest.raises(SoftmaxArgumentError, match="requires a gradient"):
        f(x)
    assert f.fast.call(x.detach().double(), None) is None


@pytest.mark.parametrize("name", ["cuda", "triton"])
def test_side_stream_and_two_threads(name):
    f, shape = IMPLEMENTATIONS[name], (8, 131072)
    f(randn(shape, torch.bfloat16, 0, device="cuda"))
    side = torch.cuda.Stream()
    errors = []

    def work(t):
        try:
            with torch.cuda.stream(side if t else torch.cuda.current_stream()):
                for i in range(30):
                    x = randn(shape, torch.bfloat16, 100 * t + i, device="cuda")
                    y = f(x)
                    torch.cuda.current_stream().synchronize()
                    assert_softmax(y, x, f"thread {t} call {i}")
        except Exception as err:  # reported below, in the test's thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("name", ["triton-v3", "triton", "cuda"])
def test_graph_capture(name):
    f, shape = IMPLEMENTATIONS[name], (2, 40000)
    x = randn(shape, torch.float32, 3, device="cuda")
    f(x)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        f(x)  # warm-up on the capture stream
        stream.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            y = f(x)
    for seed in range(4, 8):
        x.copy_(randn(shape, torch.float32, seed, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        assert_softmax(y, x, f"{name} replay {seed}")
