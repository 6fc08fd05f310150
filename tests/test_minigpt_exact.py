"""Exact mode: the same fixed-order primitives on NumPy and on torch give identical bits.

Logits, loss, every gradient and every parameter, at every one of 100 steps, have equal SHA-256
hashes of their bytes, with torch on 1 thread (in process) and on 2 threads (a fresh process).
"""

import numpy as np
import pytest
import torch

from phase24.minigpt import parity
from phase24.minigpt.config import TINY, TINY_TRAIN
from phase24.minigpt.exact import numpy_exact, torch_exact


@pytest.fixture(scope="module")
def ref():
    return parity.run_exact("numpy", TINY, TINY_TRAIN, steps=100)


def _same(a, b):
    assert parity.first_divergence(a, b) is None
    assert a["final"] == b["final"]
    assert a["loss_curve"] == b["loss_curve"]
    assert a["step1"] == b["step1"]
    assert len(a["trace"]) == 100 and len(a["trace"][0]) == 2 + 2 * len(a["final"])


def test_exact_torch_one_thread(ref):
    before = torch.get_num_threads()
    got = parity.run_exact("torch", TINY, TINY_TRAIN, steps=100, threads=1)
    assert torch.get_num_threads() == before
    _same(ref, got)


def test_exact_torch_two_threads(ref):
    _same(ref, parity.run_exact_subprocess(2, TINY, TINY_TRAIN, steps=100))


def test_exact_mode_trains(ref):
    assert ref["losses"][-1] < ref["losses"][0] - 1.0


def test_first_divergence_is_reported(ref):
    other = {**ref, "trace": [list(r) for r in ref["trace"]]}
    other["trace"][41][7] = (other["trace"][41][7][0], "0" * 64)
    assert parity.first_divergence(ref, other) == (42, ref["trace"][41][7][0])


def test_primitives_accurate_and_bit_identical():
    N, T = numpy_exact(), torch_exact()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(50_000) * 20
    cases = {
        "exp": (np.clip(x, -700, 700), np.exp, 4e-16),
        "log": (np.abs(x) + 1e-3, np.log, 6e-16),
        "rsqrt": (np.abs(x) + 1e-9, lambda v: 1 / np.sqrt(v), 6e-16),
        "sqrt": (np.abs(x), np.sqrt, 6e-16),
    }
    for name, (v, ref_fn, rtol) in cases.items():
        a = getattr(N, name)(v)
        b = getattr(T, name)(torch.from_numpy(v)).numpy()
        assert np.array_equal(a.view(np.int64), b.view(np.int64)), name
        r = ref_fn(v)
        assert np.max(np.abs(a - r) / np.maximum(np.abs(r), 1e-300)) <= rtol, name
    t = N.tanh(x / 5)
    assert np.abs(t - np.tanh(x / 5)).max() <= 4e-16
    assert np.array_equal(t, T.tanh(torch.from_numpy(x / 5)).numpy())
    a, b = rng.standard_normal((3, 37, 65)), rng.standard_normal((65, 29))
    m1, m2 = N.matmul(a, b), T.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert np.array_equal(m1.view(np.int64), m2.view(np.int64))
    assert np.abs(m1 - a @ b).max() < 1e-13
