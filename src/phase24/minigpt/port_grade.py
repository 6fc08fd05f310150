"""`minigpt parity --file F`: grade the learner's part of the PyTorch port against the NumPy model.

The file defines `MLP` (an nn.Module made as MLP(cfg), with the checkpoint's parameters c_fc.*
and c_proj.*) and `cross_entropy(logits, targets)` (the mean loss). The rest of the model is the
lab's own torch_model.GPT with the file's MLP in every block. The NumPy model and this one train
side by side in float64, from the same weights on the same batches. At every step the grader
compares, in the order they are computed: each block's MLP (its input, c_fc's output, c_proj's
input, its output), the logits, the loss, the loss's gradient with respect to the logits, every
parameter's gradient (from the last layer back) and every parameter after the AdamW step. The
first tensor out of tolerance, and its step, is the verdict. The tolerances are parity.py's: at
step 1 its step-1 bars (rtol 1e-10, atol 1e-14; the loss within 1e-13), after that, where rounding
differences have grown through the optimiser, its bars for trained parameters (rtol 1e-8,
atol 1e-11; the loss within 1e-12 relative). A mistake shows at step 1.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import data
from . import numpy_model as nm
from .config import TINY, TINY_TRAIN, GPTConfig, TrainConfig
from .parity import CURVE_RTOL, LOSS_ATOL, PARAM_ATOL, PARAM_RTOL, STEP1_ATOL, STEP1_RTOL, compare

# What each compared MLP tensor is, in the learner's terms.
MLP_POINTS = (("input", "the block's LayerNorm, given"), ("c_fc output", "your first Linear"),
              ("c_proj input", "your activation's output"), ("output", "your MLP's output"))


class PortError(Exception):
    """The file cannot be graded, or the learner's code failed: one line says which and where."""


@dataclass
class Verdict:
    ok: bool
    steps: int  # steps asked for
    step: int | None = None  # the step where it diverges (0: before the first step)
    tensor: str | None = None
    detail: str = ""
    worst: float = 0.0  # the largest err/tol seen (<= 1 passes)

    def line(self) -> str:
        if self.ok:
            return (f"PASS: your MLP and cross_entropy match the NumPy model in float64 at all "
                    f"{self.steps} steps (each block's MLP, the logits, the loss, every gradient "
                    f"and parameter; worst err/tol {self.worst:.2g}, 1 passes)")
        where = "before step 1" if self.step == 0 else f"at step {self.step}"
        return f"FAIL {where}, tensor {self.tensor}: {self.detail}"


def load(path: str | Path):
    """The learner's module, or PortError naming what is wrong with the file."""
    path = Path(path)
    if not path.is_file():
        raise PortError(f"no such file: {path}")
    if path.suffix != ".py":
        raise PortError(f"{path}: not a Python file (the port starter is labs/starters/my_port.py)")
    spec = importlib.util.spec_from_file_location(f"phase24_port_{abs(hash(str(path.resolve())))}", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as err:
        raise PortError(f"{path} does not load: {_raised(err, path)}") from None
    import torch

    missing = [n for n in ("MLP", "cross_entropy") if not hasattr(mod, n)]
    if missing:
        raise PortError(f"{path} defines no {' and no '.join(missing)} (the starter names both)")
    if not (isinstance(mod.MLP, type) and issubclass(mod.MLP, torch.nn.Module)):
        raise PortError(f"{path}: MLP is not a torch.nn.Module class")
    if not callable(mod.cross_entropy):
        raise PortError(f"{path}: cross_entropy is not a function")
    return mod


def _raised(err: BaseException, path: Path) -> str:
    """'TypeError: ... (my_port.py:41, in forward)': the error and the last line of the file it
    passed through (the learner's own line, not torch's)."""
    msg = str(err).strip().splitlines()[0] if str(err).strip() else ""
    text = f"{type(err).__name__}: {msg}" if msg else type(err).__name__
    mine = [f for f in traceback.extract_tb(err.__traceback__)
            if Path(f.filename).resolve() == path.resolve()]
    if isinstance(err, SyntaxError) and err.lineno:
        return f"{type(err).__name__}: {err.msg} ({path.name}:{err.lineno})"
    return f"{text} ({path.name}:{mine[-1].lineno}, in {mine[-1].name})" if mine else text


class _Fail(Exception):
    def __init__(self, tensor: str, detail: str):
        super().__init__(detail)
        self.tensor, self.detail = tensor, detail


def _cmp(name, ref, got, rtol, atol, worst: list) -> None:
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got)
    if got.shape != ref.shape:
        raise _Fail(name, f"shape {tuple(got.shape)}, the NumPy model's {tuple(ref.shape)}")
    if got.dtype != np.float64:
        raise _Fail(name, f"dtype {got.dtype}, not float64 (the grader runs in float64)")
    c = compare(name, got, ref, rtol, atol)
    worst[0] = max(worst[0], c.tol_ratio)
    if not c.ok:
        raise _Fail(name, f"max abs err {c.max_abs:.3g}, max rel err {c.max_rel:.3g}, err/tol "
                          f"{c.tol_ratio:.3g} (rtol {rtol:g}, atol {atol:g}; 1 passes)")


def _build(mod, cfg: GPTConfig, params: dict, path: Path):
    """torch_model.GPT with the learner's MLP in every block, loaded with `params`, in float64."""
    import torch

    from .torch_model import GPT

    model = GPT(cfg, params, dtype=torch.float64)
    for i, blk in enumerate(model.transformer.h):
        try:
            blk.mlp = mod.MLP(cfg)
        except Exception as err:
            raise _Fail(f"transformer.h.{i}.mlp", f"MLP(cfg) raised {_raised(err, path)}") from None
    model.to(torch.float64)
    want = {k for k in params if ".mlp." in k}
    have = {k for k, _ in model.named_parameters() if ".mlp." in k}
    if want != have:
        raise _Fail("transformer.h.0.mlp", "its parameters are " + _names(have, cfg) +
                    "; the NumPy model's are " + _names(want, cfg) + " (Linear's weight is (out, in))")
    try:
        model.load_numpy(params)
    except (KeyError, ValueError) as err:
        raise _Fail("transformer.h.0.mlp", str(err).strip("'\"")) from None
    return model


def _names(names: set, cfg: GPTConfig) -> str:
    shapes = nm.param_shapes(cfg)
    first = sorted(n.split(".mlp.", 1)[1] for n in names if n.startswith("transformer.h.0.mlp."))
    if not first:
        return "none"
    return ", ".join(f"{n} {shapes.get('transformer.h.0.mlp.' + n, '')}".strip() for n in first)


def _hooks(model, seen: dict, stage: list) -> None:
    """Capture each block's MLP tensors as they are computed; `stage` names the part running."""
    import torch

    for i, blk in enumerate(model.transformer.h):
        pre = f"transformer.h.{i}.mlp"

        def mlp_in(m, args, pre=pre):
            stage[0] = pre
            seen[pre + " input"] = args[0].detach().clone()

        def mlp_out(m, args, out, pre=pre):
            if not isinstance(out, torch.Tensor) or out.shape != args[0].shape:
                got = f"shape {tuple(out.shape)}" if isinstance(out, torch.Tensor) else type(out).__name__
                raise _Fail(pre + " output", f"{got}; the block adds it to its input, of shape "
                                             f"{tuple(args[0].shape)}")
            seen[pre + " output"] = out.detach().clone()
            stage[0] = "the given model"

        blk.mlp.register_forward_pre_hook(mlp_in)
        blk.mlp.register_forward_hook(mlp_out)
        if isinstance(getattr(blk.mlp, "c_fc", None), torch.nn.Module):
            blk.mlp.c_fc.register_forward_hook(
                lambda m, a, out, pre=pre: seen.__setitem__(pre + " c_fc output", out.detach().clone()))
        if isinstance(getattr(blk.mlp, "c_proj", None), torch.nn.Module):
            blk.mlp.c_proj.register_forward_pre_hook(
                lambda m, a, pre=pre: seen.__setitem__(pre + " c_proj input", a[0].detach().clone()))


def _numpy_mlp(cache, params, pre):
    """The NumPy model's MLP tensors of one block, from its forward cache."""
    _, _, _, c4, c5, c6 = cache
    out, _ = nm.linear(nm.LIB, c6[0], params[pre + ".c_proj.weight"], params.get(pre + ".c_proj.bias"))
    return {"input": c4[0], "c_fc output": c5[0], "c_proj input": c6[0], "output": out}


def grade(path, cfg: GPTConfig = TINY, tc: TrainConfig = TINY_TRAIN, steps: int = 100,
          progress=None) -> Verdict:
    """Train the NumPy model and the learner's port side by side; the first tensor that differs."""
    path = Path(path)
    mod = load(path)
    verdict = Verdict(False, steps)
    worst = [0.0]
    step = 0
    try:
        p0 = nm.init_params(cfg, tc.seed)
        model = _build(mod, cfg, p0, path)
        params = {k: v.copy() for k, v in p0.items()}
        opt_np, opt = nm.AdamW(params, tc), model.configure_optimizer(tc)
        seen, stage = {}, ["the given model"]
        _hooks(model, seen, stage)
        order = list(nm.param_shapes(cfg))
        for step, (x, y) in enumerate(data.batches(data.load_corpus(), tc.batch_size, cfg.block_size,
                                                   steps, tc.data_seed), start=1):
            logits, loss, cache = nm.forward(params, x, cfg, y)
            grads = nm.backward(cache, cfg)
            seen.clear()
            opt.zero_grad(set_to_none=True)
            tlogits, tloss = _learner_step(model, mod, x, y, stage, path)
            tol = (STEP1_RTOL, STEP1_ATOL) if step == 1 else (PARAM_RTOL, PARAM_ATOL)
            for i, c in enumerate(cache[1]):
                pre = f"transformer.h.{i}.mlp"
                for point, ref in _numpy_mlp(c, params, pre).items():
                    if f"{pre} {point}" in seen:
                        _cmp(f"{pre} {point} ({dict(MLP_POINTS)[point]})", ref,
                             seen[f"{pre} {point}"].numpy(), *tol, worst)
            _cmp("logits", logits, tlogits.detach().numpy(), *tol, worst)
            bar = LOSS_ATOL if step == 1 else CURVE_RTOL * abs(float(loss))
            if not abs(float(loss) - tloss.item()) <= bar:
                raise _Fail("loss", f"NumPy {float(loss)!r}, yours {tloss.item() + 0.0!r} "
                                    f"(|d| must be <= {bar:.2g})")
            if tlogits.grad is None:
                raise _Fail("grad logits", "none: your loss does not depend on the logits "
                                           "through autograd (a .detach(), .item() or numpy?)")
            _cmp("grad logits", cache[4], tlogits.grad.numpy(), *tol, worst)
            tparams = dict(model.named_parameters())
            for name in reversed(order):
                g = tparams[name].grad
                if g is None:
                    raise _Fail("grad " + name, "none: the loss does not depend on it (a .detach() "
                                                "or torch.no_grad() in your code?)")
                _cmp("grad " + name, grads[name], g.numpy(), *tol, worst)
            opt_np.step(params, grads)
            opt.step()
            for name in order:
                _cmp(name + " after the AdamW step", params[name], tparams[name].detach().numpy(),
                     PARAM_RTOL, PARAM_ATOL, worst)
            if progress and (step % 10 == 0 or step == steps):
                progress(f"step {step}/{steps}: every tensor within tolerance "
                         f"(worst err/tol so far {worst[0]:.2g})")
    except _Fail as f:
        verdict.step, verdict.tensor, verdict.detail = step, f.tensor, f.detail
        verdict.worst = worst[0]
        return verdict
    verdict.ok, verdict.worst = True, worst[0]
    return verdict


def _learner_step(model, mod, x, y, stage, path):
    """Forward through the model (the learner's MLP inside), the learner's loss, backward."""
    import torch

    stage[0] = "the given model"
    try:
        tlogits, _ = model(torch.from_numpy(x))
    except _Fail:
        raise
    except Exception as err:
        raise _Fail(stage[0], f"raised {_raised(err, path)}") from None
    tlogits.retain_grad()
    try:
        tloss = mod.cross_entropy(tlogits, torch.from_numpy(y))
    except Exception as err:
        raise _Fail("loss", f"cross_entropy raised {_raised(err, path)}") from None
    if not isinstance(tloss, torch.Tensor) or tloss.numel() != 1:
        what = type(tloss).__name__ if not isinstance(tloss, torch.Tensor) else \
            f"a tensor of shape {tuple(tloss.shape)}"
        raise _Fail("loss", f"cross_entropy returned {what}, not one number as a tensor (the mean)")
    if not tloss.requires_grad:
        raise _Fail("loss", "it has no gradient: cross_entropy must compute with torch operations "
                            "on the logits it is given (no .detach(), .item() or numpy)")
    try:
        tloss.reshape(()).backward()
    except Exception as err:
        raise _Fail("backward", f"raised {_raised(err, path)}") from None
    return tlogits, tloss.reshape(())


def main(path, cfg: GPTConfig = TINY, tc: TrainConfig = TINY_TRAIN, steps: int = 100) -> int:
    """The command: a header, a line every 10 steps, the verdict; 0 when it passes."""
    def say(line):
        print(line, flush=True)

    say(f"grading {path}: your MLP and cross_entropy in the lab's PyTorch GPT against the NumPy "
        f"model, float64, {steps} training steps ({cfg.n_layer} layers, width {cfg.n_embd})")
    try:
        v = grade(path, cfg, tc, steps, progress=say)
    except PortError as err:
        say(f"FAIL: {err}")
        return 1
    say(v.line())
    return 0 if v.ok else 1


if __name__ == "__main__":  # python -m phase24.minigpt.port_grade FILE
    raise SystemExit(main(sys.argv[1]))
