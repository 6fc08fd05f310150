"""Checkpoints cross between the implementations; the CLI trains, samples and reports."""

import argparse

import numpy as np
import torch

from phase24.minigpt import checkpoint, data
from phase24.minigpt import numpy_model as nm
from phase24.minigpt.cli import add_parser, run
from phase24.minigpt.config import TINY, TINY_TRAIN
from phase24.minigpt.torch_model import GPT, load_optimizer_state, optimizer_state_numpy


def _cli(*argv):
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers(dest="command", required=True))
    return run(ap.parse_args(["minigpt", *argv]))


def test_numpy_checkpoint_roundtrip_through_torch(tmp_path):
    p0 = nm.init_params(TINY, 3)
    g = nm.NumpyGPT(TINY, p0, TINY_TRAIN)
    (x, y), = data.batches(data.load_corpus(), 4, TINY.block_size, 1, 0)
    g.train_step(x, y)
    path = checkpoint.save(tmp_path / "np.npz", TINY, g.params, TINY_TRAIN, g.opt.state(), {"step": 1})
    cfg, params, tc, opt, meta = checkpoint.load(path)
    assert cfg == TINY and tc == TINY_TRAIN and meta == {"step": 1}
    m = GPT(cfg, params)
    o = m.configure_optimizer(tc)
    load_optimizer_state(m, o, opt)
    back = m.numpy_state()
    for k in params:  # exact copies both ways
        assert np.array_equal(back[k], g.params[k])
    st = optimizer_state_numpy(m, o)
    assert int(st["opt.t"]) == 1
    for k in params:
        assert np.array_equal(st["opt.m." + k], opt["opt.m." + k])
    # a second step from the reloaded state agrees with the NumPy model's second step
    g.train_step(x, y)
    o.zero_grad()
    m(torch.from_numpy(x), torch.from_numpy(y))[1].backward()
    o.step()
    after = m.numpy_state()
    for k in params:
        np.testing.assert_allclose(after[k], g.params[k], rtol=1e-10, atol=1e-14)


def test_cli_train_sample_resume(tmp_path, capsys):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert _cli("train", "--preset", "tiny", "--steps", "3", "--out", str(a), "--no-progress") == 0
    assert _cli("train", "--impl", "torch", "--init", str(a), "--steps", "2", "--out", str(b),
                "--no-progress") == 0
    _, _, _, opt, meta = checkpoint.load(b)
    assert meta["step"] == 5 and int(opt["opt.t"]) == 5 and len(meta["losses"]) == 5
    capsys.readouterr()
    for impl in ("numpy", "torch"):
        assert _cli("sample", "--ckpt", str(b), "--impl", impl, "-n", "20", "--temperature", "0") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1] and out[0].startswith("The GPU ")


def test_cli_parity_exit_code_flags_planted_gelu(monkeypatch):
    assert _cli("parity", "--steps", "2", "--no-exact") == 0
    monkeypatch.setattr(nm, "GELU_C", 0.0447)  # the planted mistake, on the NumPy side only
    assert _cli("parity", "--steps", "2", "--no-exact") == 1
