"""MiniGPT in idiomatic PyTorch: nn.Module, autograd, torch.optim.AdamW.

The same model as numpy_model.py, written the way PyTorch code is usually written. Parameter
names and layouts match the NumPy dictionary one to one, so a NumPy checkpoint loads here and
`numpy_state()` writes one NumPy loads. Runs on any device (`model.to("cuda")`).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

from .config import GPTConfig, TrainConfig, decays
from .numpy_model import init_params


# --8<-- [start:attention]
class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)  # q, k, v in one matmul
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hd)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
# --8<-- [end:attention]


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


# --8<-- [start:block]
class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.ln_eps, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.ln_eps, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # pre-LayerNorm residual blocks
        x = x + self.mlp(self.ln_2(x))
        return x
# --8<-- [end:block]


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig, params: dict | None = None, seed: int = 1337,
                 dtype=torch.float64):
        super().__init__()
        self.cfg = cfg
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=nn.LayerNorm(cfg.n_embd, eps=cfg.ln_eps, bias=cfg.bias),
        ))
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.to(dtype)
        # one source of initial weights for both implementations: the seeded NumPy initialiser
        self.load_numpy(params if params is not None else init_params(cfg, seed))

    def forward(self, idx, targets=None):
        B, T = idx.size()
        assert T <= self.cfg.block_size, f"sequence length {T} exceeds block_size {self.cfg.block_size}"
        pos = torch.arange(T, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    # -- checkpoints: plain NumPy arrays with the state_dict names -------------------------
    @torch.no_grad()
    def load_numpy(self, params: dict) -> None:
        sd = self.state_dict()
        missing = set(sd) ^ set(params)
        if missing:
            raise KeyError(f"parameter names differ: {sorted(missing)}")
        for name, t in sd.items():
            src = torch.from_numpy(np.ascontiguousarray(params[name]))
            if tuple(src.shape) != tuple(t.shape):
                raise ValueError(f"{name}: shape {tuple(src.shape)} != {tuple(t.shape)}")
            t.copy_(src.to(t.dtype))

    def numpy_state(self) -> dict:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()}

    def configure_optimizer(self, tc: TrainConfig) -> torch.optim.AdamW:
        named = list(self.named_parameters())
        groups = [
            {"params": [p for n, p in named if decays(n, p.dim())], "weight_decay": tc.weight_decay},
            {"params": [p for n, p in named if not decays(n, p.dim())], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2), eps=tc.eps)

    @torch.no_grad()
    def next_logits(self, ctx: np.ndarray) -> np.ndarray:
        """float64 logits of the last position, for the shared sampler in data.py."""
        dev = next(self.parameters()).device
        logits, _ = self(torch.from_numpy(ctx).to(dev))
        return logits[0, -1].double().cpu().numpy()


def optimizer_state_numpy(model: GPT, opt: torch.optim.AdamW) -> dict:
    """torch AdamW state in the checkpoint's format (opt.t, opt.m.<name>, opt.v.<name>)."""
    out, t = {}, 0
    for name, p in model.named_parameters():
        st = opt.state.get(p, {})
        if st:
            t = int(st["step"])
            out["opt.m." + name] = st["exp_avg"].detach().cpu().numpy().copy()
            out["opt.v." + name] = st["exp_avg_sq"].detach().cpu().numpy().copy()
    out["opt.t"] = np.array(t)
    return out


def load_optimizer_state(model: GPT, opt: torch.optim.AdamW, state: dict) -> None:
    t = int(state["opt.t"])
    if t == 0:
        return
    for name, p in model.named_parameters():
        opt.state[p] = {
            "step": torch.tensor(float(t)),
            "exp_avg": torch.from_numpy(np.array(state["opt.m." + name])).to(p),
            "exp_avg_sq": torch.from_numpy(np.array(state["opt.v." + name])).to(p),
        }
