"""The hand-written backward pass of the NumPy MiniGPT against central finite differences."""

import numpy as np
import pytest

from phase24.minigpt import numpy_model as nm
from phase24.minigpt.config import GPTConfig
from phase24.minigpt.exact import numpy_exact

CFG = GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=8)


def _setup():
    p = nm.init_params(CFG, seed=0)
    rng = np.random.default_rng(1)
    for k in p:  # move biases and gains away from 0 and 1 so every term of the backward matters
        p[k] = p[k] + rng.normal(0.0, 0.1, p[k].shape)
    x = rng.integers(0, CFG.vocab_size, (2, 6))
    y = rng.integers(0, CFG.vocab_size, (2, 6))
    return p, x, y


@pytest.mark.parametrize("ops", [nm.LIB, numpy_exact()], ids=["numpy-lib", "exact"])
def test_backward_matches_finite_differences(ops):
    p, x, y = _setup()
    _, loss, cache = nm.forward(p, x, CFG, y, ops)
    grads = nm.backward(cache, CFG, ops)
    assert list(grads) == list(p)
    rng = np.random.default_rng(2)
    h = 1e-5
    for name, w in p.items():
        flat = w.reshape(-1)
        picks = rng.choice(flat.size, size=min(flat.size, 12), replace=False)
        num = np.empty(len(picks))
        for j, i in enumerate(picks):
            old = flat[i]
            flat[i] = old + h
            lp = nm.forward(p, x, CFG, y, ops)[1]
            flat[i] = old - h
            lm = nm.forward(p, x, CFG, y, ops)[1]
            flat[i] = old
            num[j] = (lp - lm) / (2 * h)
        ana = grads[name].reshape(-1)[picks]
        scale = max(np.abs(grads[name]).max(), 1e-6)
        err = np.abs(num - ana).max() / scale
        assert err < 1e-6, f"{name}: finite-difference error {err:.2e}"


def test_finite_difference_check_catches_a_wrong_backward():
    """The check has teeth: a GELU derivative off by 1% is detected."""
    p, x, y = _setup()
    _, _, cache = nm.forward(p, x, CFG, y)
    orig = nm.gelu_back
    try:
        nm.gelu_back = lambda ops, dy, c: orig(ops, dy, c) * 1.01
        g = nm.backward(cache, CFG)
    finally:
        nm.gelu_back = orig
    name = "transformer.h.0.mlp.c_fc.weight"
    w = p[name].reshape(-1)
    old = w[0]
    w[0] = old + 1e-5
    lp = nm.forward(p, x, CFG, y)[1]
    w[0] = old - 1e-5
    lm = nm.forward(p, x, CFG, y)[1]
    w[0] = old
    num = (lp - lm) / 2e-5
    assert abs(num - g[name].reshape(-1)[0]) / np.abs(g[name]).max() > 1e-6
