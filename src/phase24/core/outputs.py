"""Outputs that show what a kernel did wrong: poisoned (an element left unwritten shows), inside
guard regions (a write past either end shows), inputs saved byte for byte (a write to them
shows)."""

from __future__ import annotations

import torch

GUARD = 65536        # elements of guard region before and after an output
GUARD_VALUE = -3.0   # what they hold: exact in every dtype, and never a probability


def storage_bytes(x: torch.Tensor) -> torch.Tensor:
    """All the bytes of x's storage (a view's gaps included), as a flat uint8 tensor."""
    return torch.empty(0, dtype=torch.uint8, device=x.device).set_(x.untyped_storage())


def guarded(shape, dtype, device, poison: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(buffer, output): a contiguous output of ``shape`` filled with ``poison``, inside a buffer
    whose GUARD elements before and after it hold GUARD_VALUE."""
    numel = 1
    for s in shape:
        numel *= s
    buf = torch.full((GUARD + numel + GUARD,), GUARD_VALUE, dtype=dtype, device=device)
    return buf, buf[GUARD:GUARD + numel].view(shape).fill_(poison)


def outside(buf: torch.Tensor, numel: int) -> str:
    """What was written in the guard regions of ``buf`` ('' when nothing)."""
    before = (buf[:GUARD] != GUARD_VALUE).sum().item()
    after = (buf[GUARD + numel:] != GUARD_VALUE).sum().item()
    wrote = [f"{k} elements {where}" for k, where in ((before, "before its start"),
                                                        (after, "after its end")) if k]
    return ("wrote outside its output: " + " and ".join(wrote)) if wrote else ""


def overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the bytes ``a`` and ``b`` span (from their first element to their last) meet: an
    output that overlaps an input would be read after it was written."""
    if a.numel() == 0 or b.numel() == 0 or a.device != b.device:
        return False

    def span(t):
        last = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))
        return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1
