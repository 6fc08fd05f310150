"""An emulated library and its kernels, launched like bridge's ``Kernel`` on a GPU: CPU tensors
where the kernel takes pointers, NumPy scalars where it takes values.

Each pointer argument is a buffer the runtime checks every access against: the kernel may read
the bytes of the tensor's view (first to last element) and write them when the parameter is
not ``const``; one byte outside is out of bounds, which on the checker's guarded outputs is
the guard region a GPU would silently overwrite.
"""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
import threading
from pathlib import Path

import numpy as np

COUNT, TWO_SCHEDULES = 1, 2
REPORT = 1 << 16


class EmulatorFault(ValueError):
    """What the launch did wrong, in one line: kernel, block, thread, address, source line."""


class _Buffer(ctypes.Structure):
    _fields_ = [("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64), ("wlo", ctypes.c_uint64),
                ("whi", ctypes.c_uint64), ("element", ctypes.c_int), ("name", ctypes.c_char_p)]


class Library:
    """One built .so (emulator/build.py): its kernels by name."""

    def __init__(self, path: Path, file_name: str, found):
        self.path, self.file_name = path, file_name
        self.names, self.params, self.c_linkage = found.kernels, found.params, found.c_linkage
        self.dll = ctypes.CDLL(str(path))
        self.dll.emu_launch.restype = ctypes.c_int
        self._kernels: dict[str, Kernel] = {}

    def kernel(self, name: str) -> Kernel:
        if name not in self.names:
            raise EmulatorFault(f"{self.file_name} has no kernel named {name} (its kernels: "
                                f"{', '.join(self.names) or 'none'})")
        if name not in self._kernels:
            self._kernels[name] = Kernel(self, name)
        return self._kernels[name]

    def exports(self) -> dict[str, tuple[tuple[int, int], ...]]:
        """Each kernel as a cubin's symbol table would name it (a C++ name mangled, its length
        first) -> (offset, size) of each parameter, laid out as CUDA lays out parameters."""
        found = {}
        for name in self.names:
            layout, at = [], 0
            for size in self.kernel(name).sizes:
                at = -(-at // min(size, 8)) * min(size, 8)
                layout.append((at, size))
                at += size
            found[name if name in self.c_linkage else f"_Z{len(name)}{name}"] = tuple(layout)
        return found

    def where(self, pc: int) -> str:
        """'file:line' of an instruction of the library, '' if the debug lines do not say."""
        if pc <= 0:
            return ""
        try:
            said = subprocess.run(["addr2line", "-e", str(self.path), hex(pc - 1)],
                                  capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return "" if said.startswith("??") else said.rsplit("/", 1)[-1].split(" ")[0]


def _dims(v) -> tuple[int, int, int]:
    v = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    return tuple(int(x) for x in v) + (1,) * (3 - len(v))


def _span(t) -> int:
    """Bytes from a tensor view's first element to the end of its last."""
    if t.numel() == 0:
        return 0
    return (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()


class Kernel:
    """One kernel of a Library. ``on()`` and ``launch()`` as bridge's Kernel has them."""

    _lock = threading.Lock()

    def __init__(self, library: Library, name: str):
        self.library, self.name = library, name
        kinds, sizes = (ctypes.c_int * 64)(), (ctypes.c_int * 64)()
        n = getattr(library.dll, f"emu_params_{name}")(kinds, sizes)
        self.kinds, self.sizes = list(kinds[:n]), list(sizes[:n])
        self.call = ctypes.cast(getattr(library.dll, f"emu_call_{name}"), ctypes.c_void_p)
        self.last_counts: dict | None = None
        self.shared_limit = 48 * 1024  # dynamic shared memory a launch may take, as on a GPU

    def set_attribute(self, name: str, value: int) -> None:
        """bridge's Kernel.set_attribute: MAX_DYNAMIC_SHARED_SIZE_BYTES raises the limit (to
        the 227 KB a Hopper block may have at most); the others change nothing emulated."""
        if name == "MAX_DYNAMIC_SHARED_SIZE_BYTES":
            self.shared_limit = int(value)

    @property
    def param_names(self) -> list[str]:
        names = self.library.params.get(self.name, [])
        return [names[i] if i < len(names) else f"argument {i}" for i in range(len(self.kinds))]

    def on(self, device=None) -> Kernel:
        return self

    def _pack(self, args):
        import torch

        if len(args) != len(self.kinds):
            raise EmulatorFault(f"{self.name} takes {len(self.kinds)} arguments, given "
                                f"{len(args)}")
        values, buffers = [], []
        for i, (a, kind, size, name) in enumerate(zip(args, self.kinds, self.sizes,
                                                      self.param_names)):
            if isinstance(a, torch.Tensor):
                if kind == 0 or a.device.type != "cpu":
                    raise EmulatorFault(f"{self.name}: {name} is a tensor on {a.device}: the "
                                        "emulator takes CPU tensors, for pointer parameters")
                lo, span = a.data_ptr(), _span(a)
                wlo, whi = (lo, lo + span) if kind == 2 else (0, 0)
                buffers.append(_Buffer(lo, lo + span, wlo, whi, a.element_size(), name.encode()))
                data = np.uint64(lo).tobytes()
            else:
                data = np.asarray(a).tobytes() if isinstance(a, (np.generic, np.ndarray)) else \
                    None
                if data is None or len(data) != size:
                    raise EmulatorFault(f"{self.name}: {name} takes {size} bytes, given "
                                        f"{type(a).__name__} {a!r} (pass a NumPy scalar)")
            values.append(ctypes.create_string_buffer(data, len(data)))
        return values, buffers

    def launch(self, grid, block, *args, shared_bytes: int = 0, counts: bool = False,
               schedules: int = 2) -> dict | None:
        """Run the kernel over ``grid`` blocks of ``block`` threads; EmulatorFault on the first
        fault. Returns the launch's counts when ``counts`` (see counts.py)."""
        if shared_bytes > self.shared_limit:
            raise EmulatorFault(f"{self.name}: launch failed: too many resources requested for "
                                f"the block: {shared_bytes} bytes of dynamic shared memory, past "
                                f"its limit of {self.shared_limit} (set_attribute raises it)")
        values, buffers = self._pack(args)
        argv = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        table = (_Buffer * max(1, len(buffers)))(*buffers)
        flags = (COUNT if counts else 0) | (TWO_SCHEDULES if schedules > 1 else 0)
        out = ctypes.create_string_buffer(REPORT)
        with self._lock:
            code = self.library.dll.emu_launch(
                self.name.encode(), self.call, argv, (ctypes.c_uint * 3)(*_dims(grid)),
                (ctypes.c_uint * 3)(*_dims(block)), ctypes.c_long(shared_bytes), table,
                len(buffers), flags, out, REPORT)
        report = json.loads(out.value.decode(errors="replace"))
        if code == 2:
            raise EmulatorFault(f"{self.name}: launch failed: {report['launch']}")
        if code == 1:
            where = self.library.where(report["pc"])
            text = re.sub(r"/[^\s:()]*/([^/\s:()]+:\d+)", r"\1", report["fault"])
            raise EmulatorFault(text + (f" ({where})" if where else ""))
        self.last_counts = report
        return report if counts else None
