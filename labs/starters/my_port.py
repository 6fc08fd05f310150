"""My part of the PyTorch port of MiniGPT: a starter file for the Phase 24 lab.

Grade it with

    python -m phase24 minigpt parity --file labs/starters/my_port.py

(a CPU is enough: about ten seconds; the solution: labs/solutions/my_port.py). The grader puts your two parts into the lab's own PyTorch
GPT (src/phase24/minigpt/torch_model.py: embeddings, attention, LayerNorms, the residual stream,
the LM head and torch.optim.AdamW are given) and trains it side by side with the NumPy model
(src/phase24/minigpt/numpy_model.py), in float64, from the same weights on the same batches. At
each step it compares every tensor in the order they are computed and stops at the first one
that differs, naming it and the step: each block's MLP (its input, c_fc's output, c_proj's input,
its output), the logits, the loss, the loss's gradient, every parameter's gradient and every
parameter after the optimiser's step. It runs this file's code, with your rights.

What the grader expects from this file:

* ``MLP``: an ``nn.Module`` made as ``MLP(cfg)`` (cfg: a GPTConfig; the width is ``cfg.n_embd``,
  biases are on when ``cfg.bias``). Its parameters must be the checkpoint's, so that the NumPy
  model's weights load into it: ``c_fc.weight`` of shape (4 C, C), ``c_fc.bias`` (4 C),
  ``c_proj.weight`` (C, 4 C), ``c_proj.bias`` (C). ``forward(x)`` takes (B, T, C) and returns
  (B, T, C). The NumPy model's MLP is the three lines between ``ln_2`` and the second residual
  add in ``numpy_model.forward``: ``linear``, ``gelu``, ``linear`` (read ``gelu`` closely).
* ``cross_entropy(logits, targets)``: logits (B, T, V) float64, targets (B, T) int64; returns the
  mean over all B*T positions of -log softmax(logits)[target], as a 0-d tensor that autograd can
  differentiate. The NumPy model's is ``numpy_model.cross_entropy``.

Use any torch operation; parity is within about 1e-10 relative, so an approximation that is
close but not the same function fails.
"""

import torch
from torch import nn
from torch.nn import functional as F  # noqa: F401 (for your code)

from phase24.minigpt.config import GPTConfig


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        # TODO 1a: the two Linear layers, named c_fc and c_proj (see the shapes above).
        # Until you do, the MLP has no parameters and the grader says which ones it expects.

    def forward(self, x):
        # TODO 1b: c_fc, the activation the NumPy model uses, c_proj.
        # Until you do, the MLP returns its input unchanged and the grader fails.
        return x


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # TODO 2: the mean negative log-likelihood of the targets (a 0-d tensor).
    # Until you do, the loss is zero and the grader fails.
    return logits.sum() * 0.0
