"""What a ladder's decisions ask of the GPU a tensor is on, the same for every operation: its
multiprocessors, the shared memory a program may opt into, its compute capability and its name;
in Triton's interpreter, or for a tensor off the GPU, the stand-ins below."""

from __future__ import annotations

import functools

import torch

from phase24.core.triton_mode import INTERPRETED

INTERPRETER_SMS = 4  # the "SMs" a launcher sizes grids for in the interpreter


def on_gpu(device: torch.device) -> bool:
    """Whether ``device`` is a GPU that kernels run on (not the interpreter's stand-in)."""
    return not INTERPRETED and device.type == "cuda"


def num_sms(device: torch.device) -> int:
    """Multiprocessors of the device (INTERPRETER_SMS without one)."""
    return _props(_index(device)).multi_processor_count if on_gpu(device) else INTERPRETER_SMS


def smem_optin(device: torch.device, without: int) -> int:
    """Shared memory one program may allocate after opting in, in bytes (``without`` where there
    is no GPU)."""
    if not on_gpu(device):
        return without
    return getattr(_props(_index(device)), "shared_memory_per_block_optin", 48 * 1024)


def capability(device: torch.device) -> tuple[int, int]:
    """(major, minor), or (0, 0) without a GPU."""
    return torch.cuda.get_device_capability(_index(device)) if on_gpu(device) else (0, 0)


def gpu_name(device: torch.device) -> str:
    return _props(_index(device)).name if on_gpu(device) else ""


def _index(device: torch.device) -> int:
    return torch.cuda.current_device() if device.index is None else device.index


@functools.cache
def _props(index: int):
    return torch.cuda.get_device_properties(index)
