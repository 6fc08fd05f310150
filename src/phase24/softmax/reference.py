"""The float64 reference every implementation is checked against."""

from __future__ import annotations

import torch


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension computed in float64, on the device of ``x``.

    The row maximum is subtracted first, so huge finite values do not overflow; this is the
    same function torch computes, so rows of -inf give NaN and a NaN anywhere in a row makes
    the whole row NaN, exactly as in ``torch.softmax``.
    """
    x64 = x.to(torch.float64)
    m = x64.amax(dim=-1, keepdim=True) if x64.shape[-1] > 0 else x64
    e = torch.exp(x64 - m)
    return e / e.sum(dim=-1, keepdim=True)
