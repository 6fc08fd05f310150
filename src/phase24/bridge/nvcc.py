"""Compile CUDA C to cubins with nvcc, cache them, and keep ptxas's resource report.

A build is cached under ``$PHASE24_CACHE`` (default ``~/.cache/phase24``) by a hash of the
source (with the headers it includes from the kernels folder), the flags, the architecture and
nvcc's version, so a second run loads in milliseconds and a changed file is rebuilt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent.parent / "kernels"

# The chapter's targets: Ampere (sm_80 A100, sm_86 RTX 30xx), Ada (sm_89), Hopper (sm_90a).
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90a")
BASE_FLAGS = ("-O3", "-lineinfo", "-std=c++17", "-Xptxas=-v", "--expt-relaxed-constexpr")


class NvccError(RuntimeError):
    """nvcc is missing or failed; the message carries its output."""


@dataclasses.dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one kernel."""

    name: str
    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int

    @property
    def spills(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes


@dataclasses.dataclass(frozen=True)
class Build:
    source: Path
    arch: str
    cubin: Path
    kernels: dict[str, KernelResources]
    log: str


def gencode(arch: str) -> str:
    """nvcc's target flag: real machine code for exactly this architecture (no JIT'd PTX)."""
    num = arch.removeprefix("sm_")
    return f"-gencode=arch=compute_{num},code=sm_{num}"


@lru_cache(maxsize=1)
def nvcc_path() -> str:
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise NvccError("nvcc was not found: install the CUDA toolkit or set NVCC=/path/to/nvcc")


@lru_cache(maxsize=1)
def nvcc_version() -> str:
    out = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1]


def arch_of_current_gpu() -> str:
    """The cubin architecture for torch's current GPU (sm_90a on Hopper, so wgmma/clusters work)."""
    import torch

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    return arch + "a" if major == 9 else arch


def kernel_source(name: str) -> Path:
    """Path of a .cu file in the package's kernels folder."""
    path = KERNELS_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"no kernel source {path}")
    return path


def _included_headers(source: Path) -> list[Path]:
    found: list[Path] = []
    for inc in re.findall(r'#include\s+"([^"]+)"', source.read_text()):
        for folder in (source.parent, KERNELS_DIR):
            p = folder / inc
            if p.exists() and p not in found:
                found.append(p)
                found.extend(h for h in _included_headers(p) if h not in found)
                break
    return found


def cache_dir() -> Path:
    root = Path(os.environ.get("PHASE24_CACHE", Path.home() / ".cache" / "phase24"))
    path = root / "cubins"
    path.mkdir(parents=True, exist_ok=True)
    return path


_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def parse_ptxas_report(log: str) -> dict[str, KernelResources]:
    """Turn ``ptxas -v`` output into one KernelResources per kernel."""
    kernels: dict[str, KernelResources] = {}
    current: str | None = None
    stack = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, stack = m.group(1), (0, 0, 0)
        elif current and (m := _STACK.search(line)):
            stack = tuple(int(g) for g in m.groups())  # type: ignore[assignment]
        elif current and (m := _USED.search(line)):
            kernels[current] = KernelResources(
                name=current, registers=int(m.group(1)), shared_bytes=int(m.group(2) or 0),
                stack_bytes=stack[0], spill_store_bytes=stack[1], spill_load_bytes=stack[2])
            current = None
    return kernels


def compile_cu(source: str | Path, arch: str, extra_flags: tuple[str, ...] = ()) -> Build:
    """Compile ``source`` to a cubin for ``arch`` (e.g. 'sm_90a'), using the cache when it can."""
    source = Path(source).resolve()
    if arch not in ARCHS:
        raise NvccError(f"unknown architecture {arch!r}; expected one of {ARCHS}")
    flags = (*BASE_FLAGS, gencode(arch), f"-I{KERNELS_DIR}", *extra_flags)
    h = hashlib.sha256()
    for part in (nvcc_version(), arch, " ".join(flags), source.read_text(),
                 *(p.read_text() for p in _included_headers(source))):
        h.update(part.encode())
        h.update(b"\0")
    key = f"{source.stem}-{arch}-{h.hexdigest()[:16]}"
    cubin, report = cache_dir() / f"{key}.cubin", cache_dir() / f"{key}.log"
    if not (cubin.exists() and report.exists()):
        tmp = cubin.with_suffix(f".tmp{os.getpid()}")
        proc = subprocess.run([nvcc_path(), "-cubin", *flags, "-o", str(tmp), str(source)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise NvccError(f"nvcc failed on {source.name} for {arch}:\n{proc.stderr}{proc.stdout}")
        report.write_text(proc.stderr + proc.stdout)
        os.replace(tmp, cubin)
    log = report.read_text()
    return Build(source, arch, cubin, parse_ptxas_report(log), log)
