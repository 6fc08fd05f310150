"""MiniGPT: a byte-level GPT in NumPy (hand-written backward, AdamW) and its PyTorch port,
with float64 parity checks at two levels (idiomatic tolerances, and bit-exact fixed-order mode).

    python -m phase24 minigpt train|sample|parity|speed ...
"""

from .config import GELU_C, PRESETS, TINY, TINY_TRAIN, GPTConfig, TrainConfig

__all__ = ["GELU_C", "PRESETS", "TINY", "TINY_TRAIN", "GPTConfig", "TrainConfig"]
