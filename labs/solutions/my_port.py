"""labs/starters/my_port.py solved: the MLP and the loss of the PyTorch port, as the NumPy model
computes them. `python -m phase24 minigpt parity --file labs/solutions/my_port.py`
passes; tests/test_minigpt_port.py plants one mistake at a time into a copy of it."""

import torch
from torch import nn
from torch.nn import functional as F

from phase24.minigpt.config import GPTConfig


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        # The NumPy model's GELU is the tanh approximation; F.gelu's default is the exact erf one.
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
