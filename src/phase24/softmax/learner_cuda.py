"""Grade a learner's own CUDA C softmax: `phase24 check softmax --file my_softmax.cu`.

The file follows the lab's kernel ABI (see softmax/cuda/export.cuh):

    #define THREADS 256          // threads per block            (default 256)
    #define ROWS_PER_BLOCK 1     // rows each block handles      (default 1)
    extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                           long long x_stride);

The grid has ceil(M / ROWS_PER_BLOCK) blocks. Kernels named softmax_f16 (__half) and
softmax_bf16 (__nv_bfloat16) are graded too when the file defines them.

Which kernels the file defines is read from the compiled cubin, not from the source (where a
name in a comment would count): its symbol table lists the entry functions under the names the
driver finds them by (a C++ name without ``extern "C"`` is mangled), and each kernel's
``.nv.info`` section gives the offset and size of every parameter, which must match the ABI.
"""

from __future__ import annotations

import dataclasses
import math
import re
import struct
from pathlib import Path

import numpy as np
import torch

from phase24.softmax.args import SoftmaxArgumentError, entry

TAGS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
# (offset, size) in bytes of const T* x, T* y, long long M, int N, long long x_stride
ABI_PARAMS = ((0, 8), (8, 8), (16, 8), (24, 4), (32, 8))
ABI_SIGNATURE = "(const T* x, T* y, long long M, int N, long long x_stride)"
# A learner's file may include the ladder's headers (vec16.cuh, reduce.cuh, ...) by name.
LAB_HEADERS = (f"-I{Path(__file__).resolve().parent / 'cuda'}",)


class LearnerCudaError(ValueError):
    """The .cu file compiles but does not follow the lab's ABI: no kernel can be graded."""


def launch_shape(source: str) -> tuple[int, int]:
    def define(name, default):
        m = re.search(rf"^\s*#define\s+{name}\s+(\d+)", source, re.MULTILINE)
        return int(m.group(1)) if m else default

    return define("THREADS", 256), define("ROWS_PER_BLOCK", 1)


# ---- what the cubin exports -----------------------------------------------------------------

def _sections(elf: bytes):
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise LearnerCudaError("the compiled file is not a 64-bit ELF cubin")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * entsize) for i in range(count)]

    def string(table: int, offset: int) -> str:
        start = heads[table][4] + offset
        return elf[start:elf.index(b"\0", start)].decode()

    return [(string(names, h[0]), h) for h in heads], string


def entry_kernels(cubin: Path) -> dict[str, tuple[tuple[int, int], ...]]:
    """Every kernel (__global__ function) of a cubin: its symbol -> ((offset, size), ...) of its
    parameters in order."""
    elf = cubin.read_bytes()
    sections, string = _sections(elf)
    kernels = {}
    for _, h in sections:
        if h[1] != 2:  # SHT_SYMTAB
            continue
        for i in range(h[5] // 24):
            name, info, other, _, _, _ = struct.unpack_from("<IBBHQQ", elf, h[4] + 24 * i)
            if info & 15 == 2 and info >> 4 == 1 and other & 0x10:  # FUNC, GLOBAL, CUDA entry
                kernels[string(h[6], name)] = ()
    for name, h in sections:
        if name.startswith(".nv.info.") and name.removeprefix(".nv.info.") in kernels:
            kernels[name.removeprefix(".nv.info.")] = _params(elf[h[4]:h[4] + h[5]])
    return kernels


def _params(info: bytes) -> tuple[tuple[int, int], ...]:
    """(offset, size) of each parameter, from the EIATTR_KPARAM_INFO records of .nv.info.<k>."""
    found, p = {}, 0
    while p + 4 <= len(info):
        fmt, attr = info[p], info[p + 1]
        if fmt != 4:  # only EIFMT_SVAL records carry a payload (u16 size, then the bytes)
            p += 4
            continue
        (size,) = struct.unpack_from("<H", info, p + 2)
        if attr == 0x17:  # EIATTR_KPARAM_INFO: index u32, ordinal u16, offset u16, flags u32
            _, ordinal, offset, flags = struct.unpack_from("<IHHI", info, p + 4)
            found[ordinal] = (offset, (flags >> 18) & 0x3FFF)
        p += 4 + size
    return tuple(found[i] for i in sorted(found))


def _demangled(symbol: str) -> str | None:
    """The C++ name of a mangled free function (``_Z11softmax_f32PKf...`` -> softmax_f32)."""
    m = re.match(r"_Z(\d+)", symbol)
    return symbol[m.end():m.end() + int(m.group(1))] if m else None


@dataclasses.dataclass
class Abi:
    """What a learner's cubin offers the checker: kernels it can grade, and why others not."""

    kernels: dict[torch.dtype, str]
    problems: list[str]  # kernels with an ABI name that cannot be graded, each with the reason
    missing: list[str]   # ABI names the file does not define at all

    def summary(self) -> str:
        parts = [f"{', '.join(f'softmax_{t}' for t in TAGS if TAGS[t] in self.kernels)}: "
                 "found, with the ABI's parameters"] if self.kernels else []
        parts += self.problems
        if self.missing:
            parts.append(f"not defined: {', '.join(self.missing)} (those dtypes are not graded)")
        return "; ".join(parts)


def check_abi(cubin: Path, file_name: str) -> Abi:
    """Compare the cubin's kernels with the ABI. Raises LearnerCudaError when none is usable."""
    kernels = entry_kernels(cubin)
    good, problems, missing = {}, [], []
    for tag, dtype in TAGS.items():
        want = f"softmax_{tag}"
        mangled = [s for s in kernels if s != want and _demangled(s) == want]
        if want in kernels and kernels[want] == ABI_PARAMS:
            good[dtype] = want
        elif want in kernels:
            sizes = ", ".join(str(s) for _, s in kernels[want])
            problems.append(f"{want} takes parameters of {sizes} bytes; the ABI's are 8, 8, 8, 4, 8 "
                            f"{ABI_SIGNATURE}")
        elif mangled:
            problems.append(f"{want} is not extern \"C\" (its symbol is {mangled[0]}): the checker "
                            f"finds kernels by their C name")
        else:
            missing.append(want)
    if not good:
        others = ", ".join(sorted(kernels)) or "none"
        raise LearnerCudaError(
            f"{file_name}: no kernel can be graded: "
            + ("; ".join(problems) if problems else
               f"it defines no kernel named softmax_f32, softmax_f16 or softmax_bf16 (its kernels: "
               f"{others})") + " (see the ABI in lab 01)")
    return Abi(good, problems, missing)


# ---- on a GPU -------------------------------------------------------------------------------

def load_learner_softmax(path: str | Path):
    """Return a registry-style callable for the learner's kernels, and the dtypes it covers.

    The callable is ``softmax(x, out=None)`` (the checker hands in outputs inside guard regions)
    and its ``abi`` says what was found in the cubin (built for sm_80 to be read: the names and
    parameters are the same for every target)."""
    from phase24.bridge import compile_cu, load_kernel

    path = Path(path)
    abi = check_abi(compile_cu(path, "sm_80", LAB_HEADERS).image, path.name)
    threads, rows_per_block = launch_shape(path.read_bytes().decode("utf-8", errors="replace"))
    kernels = {dtype: load_kernel(path, name, flags=LAB_HEADERS)
               for dtype, name in abi.kernels.items()}
    for kernel in kernels.values():
        kernel.on()  # built and loaded for this GPU now, not during the first case

    def rows(x2d, out):
        if x2d.dtype not in kernels:
            raise SoftmaxArgumentError(f"{path.name} has no kernel for {x2d.dtype}")
        m, n = x2d.shape
        kernels[x2d.dtype].launch(math.ceil(m / rows_per_block), threads, x2d, out,
                                  np.int64(m), np.int32(n), np.int64(x2d.stride(0)))

    softmax = entry(path.name, rows)
    softmax.abi = abi
    return softmax, list(kernels)


# ---- without a GPU --------------------------------------------------------------------------

def compile_only(path: Path) -> int:
    """A .cu without a GPU: compile it, print ptxas's report and check the ABI from the cubin."""
    from phase24.bridge.nvcc import NvccError, compile_cu
    from phase24.core.layout import out, say

    out(f"No GPU here: {path.name} is compiled for sm_80, sm_89 and sm_90a and its kernels are "
        "checked\nagainst the ABI; running it needs an NVIDIA GPU.")
    try:
        builds = [compile_cu(path, arch, LAB_HEADERS) for arch in ("sm_80", "sm_89", "sm_90a")]
        for b in builds:
            for k in b.kernels.values():
                out(f"  {b.arch:<7} {k.name}: {k.registers} registers, {k.shared_bytes} B shared, "
                    f"{k.spills} B spilled")
        abi = check_abi(builds[0].image, path.name)
    except NvccError as err:  # the compiler's own words and lines, as it wrote them
        out(f"FAIL: {err}")
        return 1
    except LearnerCudaError as err:
        say(f"FAIL: {err}")
        return 1
    say(f"ABI: {abi.summary()}")
    if abi.problems:
        out("FAIL: fix the kernels named above; the checker cannot grade them.")
        return 1
    out("Compiled. Running it needs an NVIDIA GPU: skipped here.")
    return 0
