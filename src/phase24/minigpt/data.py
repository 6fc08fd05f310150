"""Byte-level tokenizer, batches from a seeded NumPy generator, and the shared sampler.

Both implementations draw their batches and their random samples from these functions, so
they see the same tokens and make the same random choices.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CORPUS = Path(__file__).with_name("corpus.txt")


def encode(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)


def decode(tokens) -> str:
    return bytes(int(t) for t in tokens).decode("utf-8", errors="replace")


def load_corpus(path: str | Path | None = None) -> np.ndarray:
    return encode(Path(path or CORPUS).read_text(encoding="utf-8"))


def split(tokens: np.ndarray, val_fraction: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    n = int(len(tokens) * (1 - val_fraction))
    return tokens[:n], tokens[n:]


def get_batch(tokens: np.ndarray, batch_size: int, block_size: int, rng: np.random.Generator):
    """Random windows: x = tokens[i:i+T], y = tokens[i+1:i+T+1] (int64 arrays of shape (B, T))."""
    starts = rng.integers(0, len(tokens) - block_size - 1, size=batch_size)
    x = np.stack([tokens[s:s + block_size] for s in starts])
    y = np.stack([tokens[s + 1:s + block_size + 1] for s in starts])
    return x, y


def batches(tokens, batch_size, block_size, n, seed):
    rng = np.random.default_rng(seed)
    return [get_batch(tokens, batch_size, block_size, rng) for _ in range(n)]


def pick_next(logits: np.ndarray, temperature: float, top_k: int | None, rng) -> int:
    """One token from float64 last-position logits: argmax if temperature == 0, else a seeded draw."""
    z = np.asarray(logits, dtype=np.float64)
    if temperature <= 0:
        return int(np.argmax(z))
    z = z / temperature
    if top_k:
        kth = np.sort(z)[-min(top_k, len(z))]
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max())
    c = np.cumsum(p)
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(z) - 1))


def generate(next_logits, prompt: bytes, n_new: int, block_size: int, temperature: float = 0.0,
             top_k: int | None = None, seed: int = 0) -> bytes:
    """Autoregressive sampling; `next_logits(ctx)` maps a (1, T) int64 array to float64 logits."""
    rng = np.random.default_rng(seed)
    toks = list(prompt) or [ord("\n")]
    for _ in range(n_new):
        ctx = np.array([toks[-block_size:]], dtype=np.int64)
        toks.append(pick_next(next_logits(ctx), temperature, top_k, rng))
    return bytes(toks)
