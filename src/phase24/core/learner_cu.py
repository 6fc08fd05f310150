"""A learner's CUDA C file, for any operation: what its cubin exports against the operation's
kernel ABI, its launch shape from its ``#define``s, and its check without a GPU.

An operation's ABI (``KernelAbi``) names one ``extern "C"`` kernel per dtype,
``<prefix>_f32``, ``<prefix>_f16`` and ``<prefix>_bf16``, all with the same parameters. Which
kernels a file defines is read from the compiled cubin, not from the source (where a name in a
comment would count): its symbol table lists the entry functions under the names the driver
finds them by (a C++ name without ``extern "C"`` is mangled), and each kernel's ``.nv.info``
section gives the offset and size of every parameter, which must match the ABI.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import struct
from pathlib import Path

import torch

TAGS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


class LearnerCudaError(ValueError):
    """The .cu file compiles but does not follow the lab's ABI: no kernel can be graded."""


@dataclasses.dataclass(frozen=True)
class KernelAbi:
    """The kernels an operation grades: ``<prefix>_<tag>`` for each tag of TAGS, each taking
    parameters at ``params`` ((offset, size) in bytes, in order), written out in ``signature``;
    ``where`` says where a learner reads the ABI."""

    prefix: str
    params: tuple[tuple[int, int], ...]
    signature: str
    where: str

    def names(self) -> list[str]:
        return [f"{self.prefix}_{tag}" for tag in TAGS]


_INT_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
            ast.Div: int.__floordiv__, ast.Mod: int.__mod__}


def defines(source: str, defaults: dict[str, int]) -> dict[str, int]:
    """The value of each ``#define NAME <value>`` of ``source`` named in ``defaults`` (the default
    where the file has none). A value is an integer or an expression of integers and of the
    file's other such defines (``#define THREADS (BM * BN / TM)``), with + - * / % and brackets,
    evaluated as C does for non-negative ints; anything else is refused by name."""
    table = dict(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([^\n]*?)[ \t]*(?://.*)?$",
                            source, re.MULTILINE))

    def value(name: str, seen: tuple[str, ...]) -> int:
        text = table[name]

        def refuse(why: str):
            raise LearnerCudaError(f"#define {name} {text}: {why}")

        def walk(node) -> int:
            if isinstance(node, ast.Constant) and type(node.value) is int:
                return node.value
            if isinstance(node, ast.Name):
                if node.id not in table:
                    refuse(f"{node.id} is not an integer #define of this file")
                if node.id in seen + (name,):
                    refuse(f"{node.id} is defined through itself")
                return value(node.id, seen + (name,))
            if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
                return _INT_OPS[type(node.op)](walk(node.left), walk(node.right))
            refuse("the checker reads a launch shape only from an integer or an expression of "
                   "integer #defines (+ - * / %)")

        try:
            return walk(ast.parse(text, mode="eval").body)
        except (SyntaxError, ZeroDivisionError):
            refuse("not an integer expression")

    return {name: value(name, ()) if name in table else default
            for name, default in defaults.items()}


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

    prefix: str
    kernels: dict[torch.dtype, str]
    problems: list[str]  # kernels with an ABI name that cannot be graded, each with the reason
    missing: list[str]   # ABI names the file does not define at all

    def summary(self) -> str:
        parts = [f"{', '.join(f'{self.prefix}_{t}' for t in TAGS if TAGS[t] in self.kernels)}: "
                 "found, with the ABI's parameters"] if self.kernels else []
        parts += self.problems
        if self.missing:
            parts.append(f"not defined: {', '.join(self.missing)} (those dtypes are not graded)")
        return "; ".join(parts)


def check_abi(kernels: dict, file_name: str, spec: KernelAbi) -> Abi:
    """Compare the kernels a build exports (entry_kernels' form) with the ABI. Raises
    LearnerCudaError when none is usable."""
    good, problems, missing = {}, [], []
    sizes_wanted = ", ".join(str(s) for _, s in spec.params)
    for tag, dtype in TAGS.items():
        want = f"{spec.prefix}_{tag}"
        mangled = [s for s in kernels if s != want and _demangled(s) == want]
        if want in kernels and kernels[want] == spec.params:
            good[dtype] = want
        elif want in kernels:
            sizes = ", ".join(str(s) for _, s in kernels[want])
            problems.append(f"{want} takes parameters of {sizes} bytes; the ABI's are "
                            f"{sizes_wanted} {spec.signature}")
        elif mangled:
            problems.append(f"{want} is not extern \"C\" (its symbol is {mangled[0]}): the checker "
                            f"finds kernels by their C name")
        else:
            missing.append(want)
    if not good:
        names = spec.names()
        others = ", ".join(sorted(kernels)) or "none"
        raise LearnerCudaError(
            f"{file_name}: no kernel can be graded: "
            + ("; ".join(problems) if problems else
               f"it defines no kernel named {', '.join(names[:-1])} or {names[-1]} (its kernels: "
               f"{others})") + f" (see the ABI in {spec.where})")
    return Abi(spec.prefix, good, problems, missing)


# ---- on a GPU -------------------------------------------------------------------------------

def load(path: Path, spec: KernelAbi, headers: tuple[str, ...]) -> tuple[Abi, dict]:
    """(the ABI found in the file's cubin, {dtype: Kernel} of its gradable kernels, each built
    and loaded for this GPU now, not during the first case). The cubin read for the ABI is built
    for sm_80: the names and parameters are the same for every target. Without a GPU, the
    kernels are the emulator's (emulator/), which take CPU tensors."""
    import torch

    if not torch.cuda.is_available():
        return load_emulated(path, spec, headers)
    from phase24.bridge import compile_cu, load_kernel

    abi = check_abi(entry_kernels(compile_cu(path, "sm_80", headers).image), path.name, spec)
    kernels = {dtype: load_kernel(path, name, flags=headers)
               for dtype, name in abi.kernels.items()}
    for kernel in kernels.values():
        kernel.on()
    return abi, kernels


def load_emulated(path: Path, spec: KernelAbi, headers: tuple[str, ...]) -> tuple[Abi, dict]:
    """load()'s answer on a CPU: the file built by the emulator, its kernels checked against the
    ABI as a cubin's are. Where nvcc is installed it compiles the file first, so that what a
    GPU's compiler refuses (and the host compiler would take) is refused here too, in nvcc's
    words, and the ABI is read from its cubin."""
    from phase24.bridge.nvcc import NvccError, compile_cu, nvcc_path
    from phase24.emulator import build

    try:
        nvcc_path()
    except NvccError:
        exports = None
    else:
        exports = entry_kernels(compile_cu(path, "sm_80", headers).image)
    library = build(path, headers)
    abi = check_abi(library.exports() if exports is None else exports, path.name, spec)
    return abi, {dtype: library.kernel(name) for dtype, name in abi.kernels.items()}


def source_text(path: Path) -> str:
    """The file's text as nvcc reads it (bytes that are not UTF-8, a Latin-1 comment, replaced)."""
    return path.read_bytes().decode("utf-8", errors="replace")


def notes(abi: Abi) -> list[tuple[str, bool]]:
    """The checker's note on the ABI found: (text, whether it is a failure)."""
    return [(f"ABI: {abi.summary()}", bool(abi.problems))]
