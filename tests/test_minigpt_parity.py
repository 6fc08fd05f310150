"""Idiomatic parity in float64: the NumPy MiniGPT against the PyTorch port (issue 6 tolerances).

Same initial weights, same batches. Step 1: logits and every gradient within rtol 1e-10 /
atol 1e-14 per tensor, |dloss| <= 1e-13. After 100 AdamW steps: every parameter within
rtol 1e-8 / atol 1e-11, loss curve within 1e-12 relative. Greedy and seeded samples identical.
"""

import os

import numpy as np
import pytest

from phase24.minigpt import numpy_model as nm
from phase24.minigpt import parity
from phase24.minigpt.config import GELU_C, TINY, TINY_TRAIN

# To watch these tests fail on a planted error: PHASE24_PLANT_GELU_C=0.0447 pytest tests/test_minigpt_parity.py
PLANT = float(os.environ.get("PHASE24_PLANT_GELU_C", GELU_C))
# The planted mistake: 0.0447 instead of 0.044715, easy to make when copying the formula.
MISTYPED_GELU_C = 0.0447


def plant_gelu_c(mp: pytest.MonkeyPatch, c: float) -> None:
    """Give the NumPy model another GELU constant, for this test only (the PyTorch side keeps F.gelu's)."""
    mp.setattr(nm, "GELU_C", c)


@pytest.fixture(scope="module")
def res():
    with pytest.MonkeyPatch.context() as mp:
        plant_gelu_c(mp, PLANT)
        return parity.run_idiomatic(TINY, TINY_TRAIN, steps=100)


def test_tolerances_are_the_issue_bars():
    assert (parity.STEP1_RTOL, parity.STEP1_ATOL, parity.LOSS_ATOL) == (1e-10, 1e-14, 1e-13)
    assert (parity.PARAM_RTOL, parity.PARAM_ATOL, parity.CURVE_RTOL) == (1e-8, 1e-11, 1e-12)


def test_step1_logits_and_gradients(res):
    names = [c.name for c in res.step1]
    assert names[0] == "logits" and len(names) == 1 + len(res.final)
    bad = [(c.name, c.tol_ratio) for c in res.step1 if not c.ok]
    assert not bad, bad


def test_step1_loss(res):
    assert abs(res.loss1[0] - res.loss1[1]) <= 1e-13


def test_parameters_after_100_steps(res):
    assert res.steps == 100
    bad = [(c.name, c.max_abs, c.tol_ratio) for c in res.final if not c.ok]
    assert not bad, bad


def test_loss_curve(res):
    ln, lt = res.curves
    assert len(ln) == len(lt) == 100
    assert np.max(np.abs(ln - lt) / np.abs(lt)) <= 1e-12
    assert ln[-1] < ln[0] - 1.0  # it trains


def test_sampling_byte_identical(res):
    assert set(res.samples) == {"greedy", "seeded"}
    for kind, (a, b) in res.samples.items():
        assert a == b, kind
        assert len(a) == len(parity.PROMPT) + 80


def test_planted_gelu_constant_fails_the_check(monkeypatch):
    """GELU constant 0.0447 instead of 0.044715 on the NumPy side must make the check fail."""
    plant_gelu_c(monkeypatch, MISTYPED_GELU_C)
    bad = parity.run_idiomatic(TINY, TINY_TRAIN, steps=10)
    assert not bad.ok
    fails = bad.failures()
    assert "step-1 logits" in fails
    assert not bad.loss_ok  # |dloss| is ~5e-10, far above 1e-13
    assert bad.curve_rel > 1e-12
    assert any(f.startswith("step-10 ") for f in fails)


@pytest.mark.parametrize("c, ok", [(0.044715, True), (MISTYPED_GELU_C, False)])
def test_checker_verdict_depends_on_gelu_constant(monkeypatch, c, ok):
    plant_gelu_c(monkeypatch, c)
    assert parity.run_idiomatic(TINY, TINY_TRAIN, steps=3, sample_len=8).ok is ok


def test_planted_constant_does_not_leak():
    """The plant lives only inside its test: the model's constant is the real one afterwards."""
    assert nm.GELU_C == GELU_C == 0.044715
