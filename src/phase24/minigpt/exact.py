"""Fixed-order primitive operations, written once for NumPy arrays and torch tensors.

Bit-identical results across two libraries need the same sequence of IEEE-754 basic operations
(+ - * /, comparisons, select) on both sides. Library reductions, matmul, exp, log, tanh and sqrt
each choose their own order or approximation, so here they are rebuilt from basic operations:

* every sum is a pairwise halving along one axis (an odd element is folded into the first);
* matmul is broadcast products followed by that sum over k;
* exp: range reduction by ln 2 and a degree-13 Taylor polynomial, scaled by 2**n built from bits;
* log: exponent and mantissa from bits, then the atanh series;
* tanh from exp; 1/sqrt from a bit guess and Newton steps.

No fused multiply-add is used anywhere: each Python operator is one library kernel, one rounding.
The namespace adapters (`NumpyNS`, `TorchNS`) hold the few calls whose spelling differs.
"""

from __future__ import annotations

import math

import numpy as np

# fdlibm's split of ln 2: n * LN2_HI is exact for |n| < 2**20.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LOG2E = 1.4426950408889634
SQRT2 = math.sqrt(2.0)
EXP_COEF = [1.0 / math.factorial(k) for k in range(14)]  # Taylor, degree 13
ATANH_COEF = [1.0 / (2 * j + 1) for j in range(13)]  # 2 atanh(f) = 2 f (1 + f^2/3 + ...)
MANT_MASK = 0x000FFFFFFFFFFFFF
ONE_BITS = 1023 << 52
RSQRT_MAGIC = 0x5FE6EB50C7B537A9
MATMUL_CHUNK = 1 << 22  # elements of the (M, K, N) product tensor per chunk


class NumpyNS:
    """The operations whose spelling differs between NumPy and torch: NumPy side."""

    name = "numpy"

    @staticmethod
    def swap(x):
        return x.swapaxes(-1, -2)

    @staticmethod
    def permute(x, *axes):
        return x.transpose(*axes)

    @staticmethod
    def max_last(x):
        return x.max(axis=-1, keepdims=True)

    @staticmethod
    def where(c, a, b):
        return np.where(c, a, b)

    @staticmethod
    def floor(x):
        return np.floor(x)

    @staticmethod
    def abs(x):
        return np.abs(x)

    @staticmethod
    def f2i(x):
        return x.astype(np.int64)

    @staticmethod
    def i2f(x):
        return x.astype(np.float64)

    @staticmethod
    def bits(x):
        return np.ascontiguousarray(x).view(np.int64)

    @staticmethod
    def from_bits(i):
        return np.ascontiguousarray(i).view(np.float64)

    @staticmethod
    def concat(xs, axis):
        return np.concatenate(xs, axis=axis)

    @staticmethod
    def zeros_like(x):
        return np.zeros_like(x)

    @staticmethod
    def zeros(shape, like):
        return np.zeros(shape, dtype=like.dtype)

    @staticmethod
    def one_hot(y, n, like):
        return (y[..., None] == np.arange(n)).astype(like.dtype)

    @staticmethod
    def gather_last(z, y):
        return np.take_along_axis(z, y[..., None], axis=-1)[..., 0]

    @staticmethod
    def causal_mask(t):
        return np.tril(np.ones((t, t), dtype=bool))

    @staticmethod
    def scatter_rows(idx, dx, n):
        """sum of the rows of dx into n rows by index (library order)."""
        out = np.zeros((n, dx.shape[-1]), dtype=dx.dtype)
        np.add.at(out, idx.reshape(-1), dx.reshape(-1, dx.shape[-1]))
        return out

    @staticmethod
    def asarray(x, like=None):
        return np.asarray(x)

    @staticmethod
    def to_numpy(x):
        return np.asarray(x)


class TorchNS:
    """The same operations for torch tensors (any device)."""

    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch

    @staticmethod
    def swap(x):
        return x.transpose(-1, -2)

    @staticmethod
    def permute(x, *axes):
        return x.permute(*axes)

    @staticmethod
    def max_last(x):
        return x.amax(dim=-1, keepdim=True)

    def where(self, c, a, b):
        return self.torch.where(c, a, b)

    def floor(self, x):
        return self.torch.floor(x)

    def abs(self, x):
        return self.torch.abs(x)

    def f2i(self, x):
        return x.to(self.torch.int64)

    def i2f(self, x):
        return x.to(self.torch.float64)

    def bits(self, x):
        return x.contiguous().view(self.torch.int64)

    def from_bits(self, i):
        return i.contiguous().view(self.torch.float64)

    def concat(self, xs, axis):
        return self.torch.cat(xs, dim=axis)

    def zeros_like(self, x):
        return self.torch.zeros_like(x)

    def zeros(self, shape, like):
        return self.torch.zeros(shape, dtype=like.dtype, device=like.device)

    def one_hot(self, y, n, like):
        return (y[..., None] == self.torch.arange(n, device=y.device)).to(like.dtype)

    def gather_last(self, z, y):
        return self.torch.gather(z, -1, y[..., None])[..., 0]

    def causal_mask(self, t):
        return self.torch.tril(self.torch.ones((t, t), dtype=self.torch.bool))

    def scatter_rows(self, idx, dx, n):
        out = self.torch.zeros((n, dx.shape[-1]), dtype=dx.dtype, device=dx.device)
        out.index_add_(0, idx.reshape(-1), dx.reshape(-1, dx.shape[-1]))
        return out

    def asarray(self, x, like=None):
        t = self.torch.as_tensor(np.asarray(x))
        return t if like is None else t.to(like.device)

    @staticmethod
    def to_numpy(x):
        return x.detach().cpu().numpy()


def _axis_slice(ndim: int, axis: int, start: int, stop: int):
    return (slice(None),) * axis + (slice(start, stop),) + (slice(None),) * (ndim - axis - 1)


class ExactOps:
    """Reductions and transcendental functions in one written-out order, for either namespace."""

    exact = True

    def __init__(self, ns):
        self.ns = ns

    # -- reductions ---------------------------------------------------------------------
    # --8<-- [start:sum]
    def sum(self, x, axis: int = -1, keepdims: bool = False):
        ndim = x.ndim
        axis = axis % ndim
        n = x.shape[axis]
        while n > 1:
            h = n // 2
            y = x[_axis_slice(ndim, axis, 0, h)] + x[_axis_slice(ndim, axis, h, 2 * h)]
            if n % 2:
                first = _axis_slice(ndim, axis, 0, 1)
                y[first] = y[first] + x[_axis_slice(ndim, axis, 2 * h, 2 * h + 1)]
            x, n = y, h
        return x if keepdims else x.reshape(x.shape[:axis] + x.shape[axis + 1:])
    # --8<-- [end:sum]

    def mean(self, x, axis: int = -1, keepdims: bool = False):
        return self.sum(x, axis, keepdims) / x.shape[axis]

    def sum_to_last(self, x):
        """Sum over every axis but the last (bias gradients): one axis at a time, left to right."""
        while x.ndim > 1:
            x = self.sum(x, axis=0)
        return x

    def matmul(self, a, b):
        """(..., M, K) @ (..., K, N): broadcast products, then the pairwise sum over k."""
        m, k = a.shape[-2], a.shape[-1]
        n = b.shape[-1]
        batch = int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) or (1,)))
        rows = max(1, MATMUL_CHUNK // max(1, batch * k * n))
        out = []
        for s in range(0, m, rows):
            prod = a[..., s:s + rows, :, None] * b[..., None, :, :]
            out.append(self.sum(prod, axis=-2))
        return out[0] if len(out) == 1 else self.ns.concat(out, axis=-2)

    def max_last(self, x):
        return self.ns.max_last(x)  # max is exact in any order

    # -- elementary functions -------------------------------------------------------------
    def exp(self, x):
        ns = self.ns
        x = ns.where(x < -708.0, -708.0, x)
        x = ns.where(x > 709.0, 709.0, x)
        n = ns.floor(x * LOG2E + 0.5)
        r = x - n * LN2_HI
        r = r - n * LN2_LO
        p = r * EXP_COEF[13] + EXP_COEF[12]
        for c in EXP_COEF[11::-1]:
            p = p * r + c
        scale = ns.from_bits((ns.f2i(n) + 1023) << 52)
        return p * scale

    def log(self, x):
        """Natural log of positive normal numbers."""
        ns = self.ns
        b = ns.bits(x)
        e = (b >> 52) - 1023
        m = ns.from_bits((b & MANT_MASK) | ONE_BITS)  # mantissa in [1, 2)
        big = m > SQRT2
        m = ns.where(big, m * 0.5, m)
        e = ns.i2f(ns.where(big, e + 1, e))
        f = (m - 1.0) / (m + 1.0)
        f2 = f * f
        p = f2 * ATANH_COEF[12] + ATANH_COEF[11]
        for c in ATANH_COEF[10::-1]:
            p = p * f2 + c
        return (e * LN2_LO + (f * 2.0) * p) + e * LN2_HI

    def tanh(self, x):
        ns = self.ns
        a = ns.abs(x)
        a = ns.where(a > 20.0, 20.0, a)
        t = 1.0 - 2.0 / (self.exp(a * 2.0) + 1.0)
        return ns.where(x < 0, -t, t)

    def rsqrt(self, x):
        """1/sqrt(x) for x >= 0 (finite junk times 0 for x == 0)."""
        ns = self.ns
        y = ns.from_bits(RSQRT_MAGIC - (ns.bits(x) >> 1))
        hx = x * 0.5
        for _ in range(5):
            y = y * (1.5 - (hx * y) * y)
        return y

    def sqrt(self, x):
        return x * self.rsqrt(x)


def numpy_exact() -> ExactOps:
    return ExactOps(NumpyNS())


def torch_exact() -> ExactOps:
    return ExactOps(TorchNS())
