"""MiniGPT in NumPy: forward pass, hand-written backward pass and AdamW.

The model is a byte-level GPT with pre-LayerNorm blocks:

    x = wte[idx] + wpe[:T]
    for each block:  x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
    logits = ln_f(x) @ lm_head.T

Weights use the PyTorch layout (a Linear weight is (out, in), y = x @ W.T + b) and the PyTorch
names, so a checkpoint is the same dictionary on both sides.

Every function takes an `ops` object for the few primitives whose order of evaluation matters
(matmul, sums, exp, log, tanh, sqrt). `LIB` uses NumPy's own (BLAS matmul, np.sum, np.exp...): the
normal, fast model. `exact.ExactOps` replaces them with fixed-order versions that give the same
bits on NumPy arrays and torch tensors: the same code then runs on both libraries.
"""

from __future__ import annotations

import math

import numpy as np

from .config import GELU_C, GPTConfig, TrainConfig, decays, gelu_k
from .exact import NumpyNS


class LibOps:
    """NumPy's own primitives (library order)."""

    exact = False

    def __init__(self):
        self.ns = NumpyNS()

    def sum(self, x, axis=-1, keepdims=False):
        return x.sum(axis=axis, keepdims=keepdims)

    def mean(self, x, axis=-1, keepdims=False):
        return x.mean(axis=axis, keepdims=keepdims)

    def sum_to_last(self, x):
        return x.reshape(-1, x.shape[-1]).sum(axis=0)

    def matmul(self, a, b):
        return np.matmul(a, b)

    def max_last(self, x):
        return x.max(axis=-1, keepdims=True)

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    tanh = staticmethod(np.tanh)
    sqrt = staticmethod(np.sqrt)

    def rsqrt(self, x):
        return 1.0 / np.sqrt(x)


LIB = LibOps()


# -- parameters ---------------------------------------------------------------------------

def param_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Names and shapes, in the order of the PyTorch module's state_dict."""
    C, V = cfg.n_embd, cfg.vocab_size
    shapes: dict[str, tuple[int, ...]] = {
        "transformer.wte.weight": (V, C),
        "transformer.wpe.weight": (cfg.block_size, C),
    }

    def ln(prefix):
        shapes[prefix + ".weight"] = (C,)
        if cfg.bias:
            shapes[prefix + ".bias"] = (C,)

    def lin(prefix, n_in, n_out):
        shapes[prefix + ".weight"] = (n_out, n_in)
        if cfg.bias:
            shapes[prefix + ".bias"] = (n_out,)

    for i in range(cfg.n_layer):
        h = f"transformer.h.{i}"
        ln(h + ".ln_1")
        lin(h + ".attn.c_attn", C, 3 * C)
        lin(h + ".attn.c_proj", C, C)
        ln(h + ".ln_2")
        lin(h + ".mlp.c_fc", C, 4 * C)
        lin(h + ".mlp.c_proj", 4 * C, C)
    ln("transformer.ln_f")
    shapes["lm_head.weight"] = (V, C)
    return shapes


def init_params(cfg: GPTConfig, seed: int = 1337, dtype=np.float64) -> dict[str, np.ndarray]:
    """GPT-2 style initialisation from a seeded NumPy generator (the one source of initial weights)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith(".bias"):
            p = np.zeros(shape)
        elif ".ln_" in name:
            p = np.ones(shape)
        else:
            std = cfg.init_std
            if name.endswith("c_proj.weight"):  # residual projections, scaled by depth
                std = cfg.init_std / math.sqrt(2 * cfg.n_layer)
            p = rng.normal(0.0, std, size=shape)
        params[name] = p.astype(dtype)
    return params


def n_params(params) -> int:
    return int(sum(int(np.prod(p.shape)) for p in params.values()))


# -- layers: forward returns (out, cache); backward takes (dout, cache) -----------------------

def linear(ops, x, w, b):
    lead = x.shape[:-1]
    y = ops.matmul(x.reshape(-1, x.shape[-1]), ops.ns.swap(w))
    if b is not None:
        y = y + b
    return y.reshape(lead + (w.shape[0],)), (x, w)


def linear_back(ops, dy, cache, has_bias):
    x, w = cache
    dy2 = dy.reshape(-1, dy.shape[-1])
    x2 = x.reshape(-1, x.shape[-1])
    dx = ops.matmul(dy2, w).reshape(x.shape)
    dw = ops.matmul(ops.ns.swap(dy2), x2)
    db = ops.sum(dy2, axis=0) if has_bias else None
    return dx, dw, db


def layernorm(ops, x, w, b, eps):
    mu = ops.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    var = ops.mean(xc * xc, axis=-1, keepdims=True)
    rstd = ops.rsqrt(var + eps)
    xhat = xc * rstd
    y = xhat * w
    if b is not None:
        y = y + b
    return y, (xhat, rstd, w)


def layernorm_back(ops, dy, cache, has_bias):
    xhat, rstd, w = cache
    dxhat = dy * w
    dx = (dxhat - ops.mean(dxhat, axis=-1, keepdims=True)
          - xhat * ops.mean(dxhat * xhat, axis=-1, keepdims=True)) * rstd
    dw = ops.sum_to_last(dy * xhat)
    db = ops.sum_to_last(dy) if has_bias else None
    return dx, dw, db


def gelu(ops, x):
    """tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + c x^3))), c = GELU_C."""
    c = GELU_C
    k = gelu_k()
    u = (x + (x * x * x) * c) * k
    t = ops.tanh(u)
    return x * 0.5 * (1.0 + t), (x, t, c)


def gelu_back(ops, dy, cache):
    x, t, c = cache
    k = gelu_k()
    du = (1.0 + (x * x) * (3.0 * c)) * k
    return dy * (0.5 * (1.0 + t) + (x * 0.5) * (1.0 - t * t) * du)


def softmax_last(ops, z, mask=None):
    m = ops.max_last(z)
    e = ops.exp(z - m)
    if mask is not None:
        e = ops.ns.where(mask, e, 0.0)
    return e / ops.sum(e, axis=-1, keepdims=True)


# --8<-- [start:attention]
def attention(ops, x, p, pre, cfg):
    ns = ops.ns
    B, T, C = x.shape
    H, hd = cfg.n_head, cfg.head_dim
    qkv, c_qkv = linear(ops, x, p[pre + ".c_attn.weight"], p.get(pre + ".c_attn.bias"))
    q, k, v = (ns.permute(qkv[..., i * C:(i + 1) * C].reshape(B, T, H, hd), 0, 2, 1, 3) for i in range(3))
    scale = 1.0 / math.sqrt(hd)
    mask = ns.causal_mask(T) if ns.name == "numpy" else _torch_mask(ns, T, x)
    att = ops.matmul(q, ns.swap(k)) * scale
    att = ns.where(mask, att, -1e30)
    pr = softmax_last(ops, att, mask)
    y = ops.matmul(pr, v)
    y = ns.permute(y, 0, 2, 1, 3).reshape(B, T, C)
    out, c_proj = linear(ops, y, p[pre + ".c_proj.weight"], p.get(pre + ".c_proj.bias"))
    return out, (c_qkv, q, k, v, pr, scale, c_proj)
# --8<-- [end:attention]


def _torch_mask(ns, T, like):
    return ns.causal_mask(T).to(like.device)


def attention_back(ops, dout, cache, cfg, grads, pre):
    ns = ops.ns
    c_qkv, q, k, v, pr, scale, c_proj = cache
    B, H, T, hd = q.shape
    C = H * hd
    dy, grads[pre + ".c_proj.weight"], db = linear_back(ops, dout, c_proj, cfg.bias)
    if cfg.bias:
        grads[pre + ".c_proj.bias"] = db
    dyh = ns.permute(dy.reshape(B, T, H, hd), 0, 2, 1, 3)
    dp = ops.matmul(dyh, ns.swap(v))
    dv = ops.matmul(ns.swap(pr), dyh)
    datt = pr * (dp - ops.sum(dp * pr, axis=-1, keepdims=True)) * scale
    dq = ops.matmul(datt, k)
    dk = ops.matmul(ns.swap(datt), q)
    dqkv = ns.concat([ns.permute(t, 0, 2, 1, 3).reshape(B, T, C) for t in (dq, dk, dv)], axis=-1)
    dx, grads[pre + ".c_attn.weight"], db = linear_back(ops, dqkv, c_qkv, cfg.bias)
    if cfg.bias:
        grads[pre + ".c_attn.bias"] = db
    return dx


def cross_entropy(ops, z, targets):
    """Mean negative log-likelihood of the targets; returns (loss, dloss/dz)."""
    ns = ops.ns
    m = ops.max_last(z)
    zs = z - m
    e = ops.exp(zs)
    s = ops.sum(e, axis=-1, keepdims=True)
    nll = ops.log(s)[..., 0] - ns.gather_last(zs, targets)
    n = int(np.prod(tuple(targets.shape)))
    loss = ops.sum(nll.reshape(-1), axis=0) / n
    dz = (e / s - ns.one_hot(targets, z.shape[-1], z)) / n
    return loss, dz


# -- the model ----------------------------------------------------------------------------

def forward(params, idx, cfg: GPTConfig, targets=None, ops=LIB):
    """Returns (logits, loss or None, cache for backward)."""
    p = params
    B, T = idx.shape
    if T > cfg.block_size:
        raise ValueError(f"sequence length {T} exceeds block_size {cfg.block_size}")
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][:T]
    caches = []
    for i in range(cfg.n_layer):
        h = f"transformer.h.{i}"
        # --8<-- [start:block]
        a, c1 = layernorm(ops, x, p[h + ".ln_1.weight"], p.get(h + ".ln_1.bias"), cfg.ln_eps)
        a, c2 = attention(ops, a, p, h + ".attn", cfg)
        x = x + a
        m, c3 = layernorm(ops, x, p[h + ".ln_2.weight"], p.get(h + ".ln_2.bias"), cfg.ln_eps)
        m, c4 = linear(ops, m, p[h + ".mlp.c_fc.weight"], p.get(h + ".mlp.c_fc.bias"))
        m, c5 = gelu(ops, m)
        m, c6 = linear(ops, m, p[h + ".mlp.c_proj.weight"], p.get(h + ".mlp.c_proj.bias"))
        x = x + m
        # --8<-- [end:block]
        caches.append((c1, c2, c3, c4, c5, c6))
    xf, cf = layernorm(ops, x, p["transformer.ln_f.weight"], p.get("transformer.ln_f.bias"), cfg.ln_eps)
    logits, ch = linear(ops, xf, p["lm_head.weight"], None)
    loss = dz = None
    if targets is not None:
        loss, dz = cross_entropy(ops, logits, targets)
    return logits, loss, (idx, caches, cf, ch, dz)


def backward(cache, cfg: GPTConfig, ops=LIB):
    """Gradients of the mean loss with respect to every parameter (same names, same order)."""
    idx, caches, cf, ch, dz = cache
    g: dict = {}
    dxf, g["lm_head.weight"], _ = linear_back(ops, dz, ch, False)
    dx, g["transformer.ln_f.weight"], db = layernorm_back(ops, dxf, cf, cfg.bias)
    if cfg.bias:
        g["transformer.ln_f.bias"] = db
    for i in reversed(range(cfg.n_layer)):
        h = f"transformer.h.{i}"
        c1, c2, c3, c4, c5, c6 = caches[i]
        dm, g[h + ".mlp.c_proj.weight"], db = linear_back(ops, dx, c6, cfg.bias)
        if cfg.bias:
            g[h + ".mlp.c_proj.bias"] = db
        dm = gelu_back(ops, dm, c5)
        dm, g[h + ".mlp.c_fc.weight"], db = linear_back(ops, dm, c4, cfg.bias)
        if cfg.bias:
            g[h + ".mlp.c_fc.bias"] = db
        dm, g[h + ".ln_2.weight"], db = layernorm_back(ops, dm, c3, cfg.bias)
        if cfg.bias:
            g[h + ".ln_2.bias"] = db
        dx = dx + dm
        da = attention_back(ops, dx, c2, cfg, g, h + ".attn")
        da, g[h + ".ln_1.weight"], db = layernorm_back(ops, da, c1, cfg.bias)
        if cfg.bias:
            g[h + ".ln_1.bias"] = db
        dx = dx + da
    B, T = idx.shape
    g["transformer.wte.weight"] = embedding_grad(ops, idx, dx, cfg.vocab_size)
    dpos = ops.sum(dx, axis=0)
    if T < cfg.block_size:
        dpos = ops.ns.concat([dpos, ops.ns.zeros((cfg.block_size - T, dpos.shape[-1]), dpos)], axis=0)
    g["transformer.wpe.weight"] = dpos
    return {name: g[name] for name in param_shapes(cfg)}


def embedding_grad(ops, idx, dx, V):
    dx2 = dx.reshape(-1, dx.shape[-1])
    if ops.exact:  # one-hot matmul: the sum over positions in the fixed pairwise order
        oh = ops.ns.one_hot(idx.reshape(-1), V, dx2)
        return ops.matmul(ops.ns.swap(oh), dx2)
    return ops.ns.scatter_rows(idx, dx2, V)


# -- AdamW, as torch.optim.AdamW computes it (decoupled weight decay) -----------------------

class AdamW:
    def __init__(self, params, tc: TrainConfig, ops=LIB):
        self.tc, self.ops, self.t = tc, ops, 0
        self.m = {k: ops.ns.zeros_like(v) for k, v in params.items()}
        self.v = {k: ops.ns.zeros_like(v) for k, v in params.items()}

    def step(self, params, grads):
        tc, ops = self.tc, self.ops
        self.t += 1
        bc1 = 1 - tc.beta1 ** self.t
        bc2 = 1 - tc.beta2 ** self.t
        step_size = tc.lr / bc1
        bc2_sqrt = bc2 ** 0.5
        for name, p in params.items():
            g = grads[name]
            if tc.weight_decay and decays(name, p.ndim):
                p = p * (1 - tc.lr * tc.weight_decay)
            m = self.m[name] + (g - self.m[name]) * (1 - tc.beta1)
            v = self.v[name] * tc.beta2 + (g * g) * (1 - tc.beta2)
            denom = ops.sqrt(v) / bc2_sqrt + tc.eps
            params[name] = p - (m / denom) * step_size
            self.m[name], self.v[name] = m, v

    def state(self) -> dict:
        out = {"opt.t": np.array(self.t)}
        for k in self.m:
            out["opt.m." + k] = self.ops.ns.to_numpy(self.m[k])
            out["opt.v." + k] = self.ops.ns.to_numpy(self.v[k])
        return out

    def load_state(self, state: dict) -> None:
        self.t = int(state["opt.t"])
        for k in self.m:
            self.m[k] = np.array(state["opt.m." + k])
            self.v[k] = np.array(state["opt.v." + k])


class NumpyGPT:
    """Convenience wrapper: parameters + optimizer + one training step."""

    def __init__(self, cfg: GPTConfig, params: dict, tc: TrainConfig | None = None, ops=LIB):
        self.cfg, self.params, self.ops = cfg, params, ops
        self.tc = tc or TrainConfig()
        self.opt = AdamW(params, self.tc, ops)

    def logits(self, idx):
        return forward(self.params, idx, self.cfg, None, self.ops)[0]

    def loss_and_grads(self, idx, targets):
        logits, loss, cache = forward(self.params, idx, self.cfg, targets, self.ops)
        return logits, loss, backward(cache, self.cfg, self.ops)

    def train_step(self, idx, targets):
        logits, loss, grads = self.loss_and_grads(idx, targets)
        self.opt.step(self.params, grads)
        return float(loss)

    def next_logits(self, idx_np):
        """float64 logits of the last position for a (1, T) int64 context."""
        return np.asarray(self.logits(idx_np)[0, -1], dtype=np.float64)
