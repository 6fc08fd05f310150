"""What each CUDA rung's .cu file compiles, read from the file itself.

A rung's .cu file is the one place its configurations are written: VN_CONFIGS(X) lists them
(VN_CONFIGS_F32 those built for float32 only) and VN_KERNEL(tag, T, params...) names each
kernel (see SOFTMAX_EXPORT in softmax_common.cuh). The launchers and the tests read both here.
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

import torch

from phase24.bridge.nvcc import KERNELS_DIR
from phase24.softmax.args import DTYPE_TAG


@lru_cache(maxsize=None)  # every choice of a launch asks: a directory listing costs ~20-100 us
def source(kind: str) -> str:
    """The file of rung `kind` ('v0' .. 'v10'): softmax_<kind>_<what it adds>.cu."""
    found = sorted(KERNELS_DIR.glob(f"softmax_{kind}_*.cu"))
    if len(found) != 1:
        raise ValueError(f"rung {kind!r}: expected one file softmax_{kind}_*.cu, found {found}")
    return found[0].name


_DEFINE = re.compile(r"^#define (\w+)\(([^)]*)\)(.*)$", re.MULTILINE)
_INCLUDE = re.compile(r'^#include "(softmax_v\w+\.cu)"', re.MULTILINE)


def _macros(file: str) -> dict:
    """{name: (params, body)} of the function-like macros of a rung's file and of the rung files
    it includes."""
    text = (KERNELS_DIR / file).read_text().replace("\\\n", " ")
    found: dict = {}
    for included in _INCLUDE.findall(text):
        found.update(_macros(included))
    found.update({m[1]: ([p.strip() for p in m[2].split(",")], m[3]) for m in _DEFINE.finditer(text)})
    return found


def _expand(text: str, macros: dict) -> str:
    """`text` with the calls of `macros` replaced by their bodies until none is left (enough of
    the C preprocessor for the configuration lists: no argument holds parentheses)."""
    call = re.compile(r"\b(" + "|".join(map(re.escape, macros)) + r")\(([^()]*)\)")

    def body(m: re.Match) -> str:
        params, replacement = macros[m[1]]
        args = dict(zip(params, (a.strip() for a in m[2].split(","))))
        return re.sub(r"\b\w+\b", lambda w: args.get(w[0], w[0]), replacement)

    while (expanded := call.sub(body, text)) != text:
        text = expanded
    return text


@dataclasses.dataclass(frozen=True)
class Compiled:
    """The kernels of one rung's file: the name of each, and the configurations compiled."""

    name: tuple[str, ...]  # the kernel name's pieces: literal text, a parameter or 'tag'
    params: tuple[str, ...]  # the configuration's parameters, in order
    every_dtype: tuple[tuple[int, ...], ...]
    float32_only: tuple[tuple[int, ...], ...]

    def kernel(self, config: tuple, dtype) -> str:
        values = {**dict(zip(self.params, map(str, config))), "tag": DTYPE_TAG[dtype]}
        return "".join(values.get(piece, piece) for piece in self.name)


@lru_cache(maxsize=None)
def compiled(kind: str) -> Compiled:
    """Rung `kind`'s kernels as its file's VN_KERNEL and VN_CONFIGS macros declare them."""
    macros, prefix = _macros(source(kind)), kind.upper()
    params, body = macros[f"{prefix}_KERNEL"]
    name = re.match(r"\s*SOFTMAX_EXPORT\(\s*([\w#]+)", body)[1]

    def listed(which: str) -> tuple:
        if which not in macros:  # v0 .. v2: no configuration, one kernel per dtype
            return ((),) if which.endswith("_CONFIGS") else ()
        return tuple(tuple(int(a) for a in args.split(","))
                     for args in re.findall(r"\bX\(([^()]*)\)", _expand(f"{which}(X)", macros)))

    return Compiled(name=tuple(name.split("##")), params=tuple(p for p in params[2:] if p != "..."),
                    every_dtype=listed(f"{prefix}_CONFIGS"),
                    float32_only=listed(f"{prefix}_CONFIGS_F32"))


def configs(kind: str, dtype) -> tuple:
    """The configurations of rung `kind` compiled for `dtype`."""
    c = compiled(kind)
    return c.every_dtype + (c.float32_only if dtype == torch.float32 else ())


def kernel_name(kind: str, config: tuple, dtype) -> str:
    """The kernel of rung `kind` for `config` and `dtype`, e.g. softmax_v4_g32_k2_bf16."""
    return compiled(kind).kernel(tuple(config), dtype)
