"""Model and training configuration shared by the NumPy and PyTorch MiniGPT."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace

GELU_C = 0.044715  # the tanh-GELU constant; the parity tests patch 0.0447 into the NumPy model to show they catch it


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = 256  # byte level: every byte is a token
    block_size: int = 64  # context length
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    bias: bool = True  # biases in Linear and LayerNorm, as in GPT-2
    ln_eps: float = 1e-5
    init_std: float = 0.02

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "GPTConfig":
        return cls(**json.loads(text))


@dataclass(frozen=True)
class TrainConfig:
    batch_size: int = 16
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    weight_decay: float = 0.1  # applied to matrices and embeddings only, as in nanoGPT
    seed: int = 1337  # initial weights
    data_seed: int = 2024  # batch sampling

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "TrainConfig":
        return cls(**json.loads(text))


# A tiny model for tests and the parity report: seconds per 100 steps on 2 CPU cores.
TINY = GPTConfig(block_size=32, n_layer=2, n_head=4, n_embd=32)
TINY_TRAIN = TrainConfig(batch_size=4)

PRESETS = {"tiny": TINY, "small": GPTConfig()}


def decays(name: str, ndim: int) -> bool:
    """Weight decay for 2-D tensors (matrices, embeddings); none for biases and LayerNorm gains."""
    return ndim >= 2


def gelu_k() -> float:
    return math.sqrt(2.0 / math.pi)


__all__ = ["GPTConfig", "TrainConfig", "TINY", "TINY_TRAIN", "PRESETS", "GELU_C", "decays", "replace", "field"]
