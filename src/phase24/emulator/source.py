"""The kernel's text as the host compiler needs it, from the preprocessor's output (every macro
expanded, every header in, ``# line "file"`` markers kept, so that errors and debug lines name
the learner's own file and line):

* ``__global__`` dropped, and the names of the kernels it marked kept (not templates: those
  are launched through an extern "C" instance);
* each ``__shared__ T name[...]`` made a static (followed by a guard region) that registers
  itself with the runtime, which poisons and checks it for every block; ``extern __shared__ T name[]`` a pointer to the
  launch's dynamic shared memory;
* inline PTX the emulator knows made a call; anything it cannot run refused, in one line that
  names the construct, the file and the line.
"""

from __future__ import annotations

import dataclasses
import re

# What needs a GPU, by what the preprocessed code of the learner's files says.
NEEDS_GPU = [
    (r"__cluster_dims__|\bthis_cluster\b|\bcluster_group\b", "thread-block clusters"),
    (r"\bwmma::|\bnvcuda::", "warp matrix operations (wmma, the Tensor Cores)"),
    (r"\bCUtensorMap\b", "the Tensor Memory Accelerator (TMA)"),
    (r"\b__pipeline_\w+|\bmemcpy_async\b|\bcuda::barrier\b|\bcuda::pipeline\b",
     "asynchronous copies (cp.async, cuda::pipeline)"),
    (r"\btex[123]D\w*\b|\bsurf[123]D\w*\b|\btexture\s*<", "textures and surfaces"),
    (r"<<<", "a kernel launch from host code (<<<...>>>): the checker launches your kernels"),
    (r"\bcudaMalloc\w*\b|\bcudaMemcpy\w*\b", "host code of the CUDA runtime (cudaMalloc, "
     "cudaMemcpy): the checker launches your kernels"),
]
# PTX instructions with one output and one input that the emulator computes itself.
KNOWN_PTX = {
    "ex2.approx.ftz.f32": "exp2f", "ex2.approx.f32": "exp2f", "lg2.approx.ftz.f32": "log2f",
    "lg2.approx.f32": "log2f", "rcp.approx.ftz.f32": "emu_rcp", "rcp.approx.f32": "emu_rcp",
    "rsqrt.approx.ftz.f32": "rsqrtf", "rsqrt.approx.f32": "rsqrtf",
    "sqrt.approx.ftz.f32": "sqrtf", "tanh.approx.f32": "tanhf",
}


class Refused(ValueError):
    """The file uses what the emulator does not run (the message names it and where)."""


@dataclasses.dataclass
class Kernelised:
    text: str           # ready for the compiler (still with its line markers)
    kernels: list[str]  # the __global__ functions that can be launched by name
    params: dict[str, list[str]]  # each kernel's parameter names, for the emulator's messages
    c_linkage: set[str]  # the kernels declared extern "C" (a GPU finds only those by name)


_MARKER = re.compile(r'^# (\d+) "([^"]*)"(.*)$', re.M)


def _segments(text: str):
    """(start, end, file, first line, is a system header) of each stretch between markers."""
    marks = list(_MARKER.finditer(text))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        yield m.end() + 1, end, m.group(2), int(m.group(1)), " 3" in m.group(3)


def _where(text: str, pos: int) -> str:
    for start, end, file, line, _ in _segments(text):
        if start <= pos < end or (pos >= start and end == len(text)):
            return f"{file.rsplit('/', 1)[-1]}:{line + text.count(chr(10), start, pos)}"
    return "?"


def _user_spans(text: str, own: str):
    """The stretches of code from files that are neither system headers nor the emulator's."""
    for start, end, file, _, system in _segments(text):
        if not system and not file.startswith(own) and not file.startswith("<"):
            yield start, end


def _closing(text: str, open_at: int) -> int:
    """The index of the parenthesis that closes the one at ``open_at`` (strings skipped)."""
    depth, i = 0, open_at
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1) if '"' in text[i + 1:] else len(text)
            while text[i - 1] == "\\":
                i = text.index('"', i + 1)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Refused("unbalanced parentheses in an asm statement")


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start, quote = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"' and (i == 0 or text[i - 1] != "\\"):
            quote = not quote
        elif not quote and c in "([":
            depth += 1
        elif not quote and c in ")]":
            depth -= 1
        elif not quote and depth == 0 and c == sep:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _asm(text: str, m: re.Match) -> str:
    """The call that replaces one asm statement, or Refused naming its instruction."""
    close = _closing(text, m.end() - 1)
    parts = _split_top(text[m.end():close], ":")
    template = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', parts[0]))
    template = re.sub(r"\\[nt]", " ", template).strip()
    op = template.split()[0] if template else ""
    operands = [re.search(r"\((.*)\)", p.strip(), re.S) for p in parts[1:3]]
    if op in KNOWN_PTX and re.fullmatch(r"\S+\s+%0,\s*%1;?", template) and all(operands):
        return f"({operands[0].group(1)}) = {KNOWN_PTX[op]}({operands[1].group(1)})"
    raise Refused(f"inline PTX `{template[:60]}` ({_where(text, m.start())}) is not emulated: "
                  "it needs a GPU")


def _shared(decl: str, extern: bool, where: str) -> str:
    """One __shared__ declaration (the text after the keyword, to its ';') rewritten."""
    out = []
    for i, part in enumerate(_split_top(decl, ",")):
        m = re.fullmatch(r"(.*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)", part.strip(), re.S)
        if not m or (i == 0 and not m.group(1).strip()):
            raise Refused(f"a __shared__ declaration the emulator cannot read ({where})")
        if i == 0:
            kind = m.group(1).strip()
        name, dims = m.group(2), m.group(3).strip()
        if extern:
            plain = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", kind).strip()
            out.append(f"{plain}* const {name} = static_cast<{plain}*>(emu_dynamic_shared());")
        else:
            ndims = dims.count("[")
            strides = ", ".join(f"sizeof({name}{'[0]' * (k + 1)})" for k in range(ndims)) or "0"
            # in a box with a guard region after it, so that an access past its end lands in
            # no variable, and is named out of bounds
            ref = f"(&{name}){dims}" if dims else f"&{name}"
            out.append(f"static struct {{ {kind} v{dims}; char guard[256]; }} emu_box_{name}; "
                       f"{kind} {ref} = emu_box_{name}.v; static const unsigned long emu_strides_{name}"
                       f"[] = {{{strides}}}; static const int emu_registered_{name} = "
                       f'emu_shared_var(&{name}, sizeof({name}), "{name}", {ndims}, '
                       f"emu_strides_{name}); (void)emu_registered_{name};")
    return " ".join(out)


def kernelise(text: str, own: str) -> Kernelised:
    """The preprocessed ``text`` rewritten for the emulator; ``own`` is the emulator's include
    folder (its headers are not the learner's code)."""
    spans = list(_user_spans(text, own))
    for start, end in spans:
        for pattern, what in NEEDS_GPU:
            m = re.compile(pattern).search(text, start, end)
            if m:
                raise Refused(f"{what} ({_where(text, m.start())}): not emulated, it needs a GPU")
    edits = []  # (start, end, replacement), in order
    kernels, params, c_linkage = [], {}, set()
    for start, end in spans:
        for m in re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(").finditer(
                text, start, end):
            edits.append((m.start(), _closing(text, m.end() - 1) + 1, _asm(text, m)))
        for m in re.compile(r"(\bextern\s+)?\b__shared__\b([^;{}]*);").finditer(text, start, end):
            edits.append((m.start(), m.end(),
                          _shared(m.group(2), bool(m.group(1)), _where(text, m.start()))))
        for m in re.compile(r"\b__global__\b").finditer(text, start, end):
            edits.append((m.start(), m.end(), ""))
            name = re.compile(r"[^;{(]*?\b([A-Za-z_]\w*)\s*\(").match(text, m.end())
            before = text[max(text.rfind(";", 0, m.start()), text.rfind("}", 0, m.start())) + 1:
                          m.start()]
            if name and not re.search(r"\btemplate\b", before):
                kernels.append(name.group(1))
                if re.search(r'\bextern\s*"C"', before):
                    c_linkage.add(name.group(1))
                inside = text[name.end():_closing(text, name.end() - 1)]
                params[name.group(1)] = [_param_name(p, i) for i, p in
                                         enumerate(_split_top(inside, ",")) if p.strip()]
    edits.sort()
    pieces, at = [], 0
    for s, e, new in edits:
        if s < at:
            continue
        pieces += [text[at:s], new]
        at = e
    pieces.append(text[at:])
    return Kernelised("".join(pieces), list(dict.fromkeys(kernels)), params, c_linkage)


def _param_name(declaration: str, i: int) -> str:
    m = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", declaration.strip())
    return m.group(1) if m and m.group(1) not in ("void", "int", "float") else f"argument {i}"


def glue(kernels: list[str]) -> str:
    """What each kernel needs to be called from the runtime (see emu.h's emu_invoke)."""
    return "\n".join(
        f'extern "C" void emu_call_{k}(void** a) {{ emu_invoke(&{k}, a); }}\n'
        f'extern "C" int emu_params_{k}(int* kinds, int* sizes) '
        f"{{ return emu_describe(&{k}, kinds, sizes); }}" for k in kernels) + "\n"
