"""Planted bug: no Triton at all; torch.softmax does the work."""
import torch


def softmax_rows(x2d, out):
    out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))
