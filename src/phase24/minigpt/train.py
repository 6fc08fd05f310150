"""Training and sampling for either implementation, with a progress bar and checkpoints."""

from __future__ import annotations

import time

import numpy as np

from . import checkpoint, data
from . import numpy_model as nm
from .config import GPTConfig, TrainConfig

DTYPES = {"float64": np.float64, "float32": np.float32}


class Runner:
    """One interface over the two implementations: step(x, y) -> loss, eval_loss, next_logits, state."""

    def __init__(self, impl: str, cfg: GPTConfig, tc: TrainConfig, params: dict, opt_state: dict | None = None,
                 device: str = "cpu", dtype: str = "float64"):
        self.impl, self.cfg, self.tc, self.device = impl, cfg, tc, device
        params = {k: np.asarray(params[k]).astype(DTYPES[dtype]) for k in nm.param_shapes(cfg)}
        if impl == "numpy":
            if device != "cpu":
                raise ValueError("the NumPy model runs on the CPU only")
            self.model = nm.NumpyGPT(cfg, params, tc)
            if opt_state:
                self.model.opt.load_state(opt_state)
        elif impl == "torch":
            import torch

            from . import torch_model as tm

            self.torch = torch
            self.model = tm.GPT(cfg, params, dtype=getattr(torch, dtype)).to(device)
            self.opt = self.model.configure_optimizer(tc)
            if opt_state:
                tm.load_optimizer_state(self.model, self.opt, opt_state)
        else:
            raise ValueError(f"unknown implementation {impl!r} (numpy or torch)")

    def _t(self, a):
        return self.torch.from_numpy(a).to(self.device)

    def step(self, x, y) -> float:
        if self.impl == "numpy":
            return self.model.train_step(x, y)
        self.opt.zero_grad(set_to_none=True)
        _, loss = self.model(self._t(x), self._t(y))
        loss.backward()
        self.opt.step()
        return loss.item()

    def eval_loss(self, batches) -> float:
        out = []
        for x, y in batches:
            if self.impl == "numpy":
                out.append(float(nm.forward(self.model.params, x, self.cfg, y)[1]))
            else:
                with self.torch.no_grad():
                    out.append(self.model(self._t(x), self._t(y))[1].item())
        return float(np.mean(out))

    def next_logits(self, ctx):
        return self.model.next_logits(ctx)

    def sync(self):
        if self.impl == "torch" and self.device.startswith("cuda"):
            self.torch.cuda.synchronize()

    def state(self) -> tuple[dict, dict]:
        if self.impl == "numpy":
            return {k: np.asarray(v) for k, v in self.model.params.items()}, self.model.opt.state()
        from .torch_model import optimizer_state_numpy

        return self.model.numpy_state(), optimizer_state_numpy(self.model, self.opt)


def train(impl="numpy", cfg: GPTConfig | None = None, tc: TrainConfig | None = None, steps=300, device="cpu",
          dtype="float64", init=None, out=None, log_every=50, eval_batches=8, progress=True, console=None,
          corpus=None) -> dict:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    con = console or Console()
    meta = {"step": 0, "losses": []}
    opt_state = None
    if init:
        cfg, params, tc0, opt_state, meta = checkpoint.load(init)
        tc = tc or tc0
    else:
        cfg, tc = cfg or GPTConfig(), tc or TrainConfig()
        params = nm.init_params(cfg, tc.seed)
    tokens = data.load_corpus(corpus)
    train_tok, val_tok = data.split(tokens)
    val = data.batches(val_tok, tc.batch_size, cfg.block_size, eval_batches, seed=12345)
    run = Runner(impl, cfg, tc, params, opt_state, device, dtype)
    start = int(meta.get("step", 0))
    rng = np.random.default_rng([tc.data_seed, start])  # a resumed run draws fresh batches
    con.print(f"minigpt train: impl={impl} device={device} dtype={dtype} params={nm.n_params(params):,} "
              f"config={cfg.to_json()}")
    v0 = run.eval_loss(val)
    con.print(f"step {start}: val loss {v0:.4f}")
    losses = list(meta.get("losses", []))
    t0 = time.perf_counter()
    cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            TextColumn("loss {task.fields[loss]}")]
    with Progress(*cols, console=con, disable=not progress) as bar:
        task = bar.add_task("train", total=steps, loss="-")
        for i in range(steps):
            x, y = data.get_batch(train_tok, tc.batch_size, cfg.block_size, rng)
            loss = run.step(x, y)
            losses.append(loss)
            bar.update(task, advance=1, loss=f"{loss:.4f}")
            step = start + i + 1
            if log_every and (step % log_every == 0 or i == steps - 1):
                bar.console.print(f"step {step}: train loss {loss:.4f} "
                                  f"(mean of last {min(log_every, i + 1)}: {np.mean(losses[-log_every:]):.4f})")
    run.sync()
    dt = time.perf_counter() - t0
    v1 = run.eval_loss(val)
    tps = steps * tc.batch_size * cfg.block_size / dt if steps else 0.0
    con.print(f"step {start + steps}: val loss {v1:.4f} (was {v0:.4f}); {dt:.1f} s, {tps:,.0f} tokens/s")
    meta = {"step": start + steps, "losses": losses, "val_loss": v1, "impl": impl, "dtype": dtype}
    if out:
        p, o = run.state()
        checkpoint.save(out, cfg, p, tc, o, meta)
        con.print(f"checkpoint written: {out}")
    return {"val_start": v0, "val_end": v1, "train_first": losses[start] if len(losses) > start else None,
            "train_last": losses[-1] if losses else None, "seconds": dt, "tokens_per_s": tps, "runner": run}


def sample(ckpt, impl="numpy", prompt="The GPU ", n=300, temperature=0.8, top_k=None, seed=0, device="cpu",
           dtype="float64") -> bytes:
    cfg, params, tc, _, _ = checkpoint.load(ckpt)
    run = Runner(impl, cfg, tc, params, None, device, dtype)
    return data.generate(run.next_logits, prompt.encode("utf-8"), n, cfg.block_size, temperature, top_k, seed)
