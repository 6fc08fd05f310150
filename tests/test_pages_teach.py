"""The pages make the learner write and predict before they tell:

* a theory page defines no kernel but those on THEORY_KERNELS (none of them one a lab asks him to
  write), and none of its code blocks holds three lines of a solution's answer (the lines a
  solution adds to its starter);
* every reveal ("What we measured" / "Lo que medimos") holds a figure for every implementation and
  shape that the `bench` command of its prompt names, in the tables it includes, and never says
  "not in the recorded run".

Each check's planted page is in the tests below it."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "phase-24-cuda-triton"
LABS = sorted((DOCS / "lab").glob("*.md"))
THEORY = sorted((DOCS / "theory").glob("*.md"))

# Kernels a theory page may show whole: none is one a lab's starter asks for (vector_add is lab
# 00's given kernel; the warp and block maxima are the programming model's reductions, which the
# softmax starters extend to a (max, sum) pair; the naive softmax is the lab's v0, which no one
# writes; the RMSNorm kernels teach Triton on another operation).
THEORY_KERNELS = {"vector_add", "warp_max", "block_max", "softmax_naive_sketch",
                  "rms_norm_row_kernel", "rms_norm_rows_kernel"}
DEFINITION = re.compile(r"^\s*(?:extern \"C\"\s+)?(?:__global__|__device__)[^(;]*?\b(\w+)\s*\([^;]*$"
                        r"|^\s*@triton\.jit[^\n]*\n\s*def\s+(\w+)", re.M)
REVEAL = re.compile(r'^\?\?\?\+? note "(What we measured|Lo que medimos|Measured on [^"]+|Medido en '
                    r'[^"]+)"', re.M)
INCLUDE = re.compile(r'^\s*--8<-- "([^"]+)"\s*$', re.M)
NOT_RECORDED = re.compile(r"not in the recorded run|no está en la ejecución|nothing recorded",
                          re.I)


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^\s*```[^\n]*\n(.*?)^\s*```", text, re.M | re.S)


def defined(text: str) -> set[str]:
    return {a or b for block in code_blocks(text) for a, b in DEFINITION.findall(block)}


def _norm(line: str) -> str:
    return " ".join(line.split())


def answer_lines(solution: Path) -> set[str]:
    """The lines a solution adds to its starter, long enough to be an idea, not a brace."""
    starter = ROOT / "labs" / "starters" / solution.name
    new = solution.read_text().splitlines()
    old = starter.read_text().splitlines() if starter.is_file() else []
    added = [ln[2:] for ln in difflib.ndiff(old, new) if ln.startswith("+ ")]
    return {_norm(ln) for ln in added if len(_norm(ln)) >= 16
            and not _norm(ln).startswith(("//", "#", "*", '"'))}


SOLUTION_CODE = sorted(p for p in (ROOT / "labs" / "solutions").glob("my_*")
                       if p.suffix in (".cu", ".py"))


def spoilers(text: str) -> list[str]:
    found = [f"defines {name}, which is not on THEORY_KERNELS"
             for name in sorted(defined(text) - THEORY_KERNELS)]
    blocks = [{_norm(ln) for ln in b.splitlines()} for b in code_blocks(text)]
    for solution in SOLUTION_CODE:
        answer = answer_lines(solution)
        for block in blocks:
            shared = answer & block
            if len(shared) >= 3:
                found.append(f"a code block holds {len(shared)} lines of "
                             f"labs/solutions/{solution.name}'s answer: {sorted(shared)[0]!r}")
    return found


@pytest.mark.parametrize("page", THEORY, ids=lambda p: p.name)
def test_a_theory_page_writes_no_kernel_a_lab_asks_for(page):
    assert spoilers(page.read_text()) == [], page.name


def test_a_planted_kernel_on_a_theory_page_is_caught():
    tiled = ("```cuda\n__global__ void gemm_tiled(const float* A, const float* B, float* C,\n"
             "                           int M, int N, int K) {\n    int x = 0;\n}\n```\n")
    assert spoilers("Prose.\n\n" + tiled) == ["defines gemm_tiled, which is not on THEORY_KERNELS"]
    solution = (ROOT / "labs" / "solutions" / "my_gemm_v2.cu").read_text()
    lines = sorted(answer_lines(ROOT / "labs" / "solutions" / "my_gemm_v2.cu"))[:3]
    assert all(ln in _norm(solution) or ln for ln in lines)
    copied = "```cuda\n" + "\n".join(lines) + "\n```\n"
    assert any("my_gemm_v2.cu's answer" in s for s in spoilers(copied))


# ---- reveals ---------------------------------------------------------------------------------

def expand(spec: str) -> str:
    """The text an include puts on the page: a file, its lines a..b, or its section."""
    path, _, rest = spec.partition(":")
    text = (ROOT / path).read_text(errors="replace")
    if not rest:
        return text
    if re.fullmatch(r"\d+(:\d+)?(,\d+(:\d+)?)*", rest):  # line ranges: "1:3,6:7"
        lines, picked = text.splitlines(), []
        for part in rest.split(","):
            a, _, b = part.partition(":")
            picked += lines[int(a) - 1:int(b or a)]
        return "\n".join(picked)
    m = re.search(rf"--8<-- \[start:{re.escape(rest)}\](.*?)--8<-- \[end:{re.escape(rest)}\]",
                  text, re.S)
    return m[1] if m else ""


def reveals(text: str) -> list[tuple[str, str, int]]:
    """(the prompt: text since the previous heading or reveal, the reveal's text with its
    includes expanded, the line it starts on) for each reveal of a page."""
    found, lines = [], text.splitlines()
    starts = [i for i, ln in enumerate(lines) if REVEAL.match(ln)]
    for i in starts:
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith("    ")):
            j += 1
        body = "\n".join(lines[i + 1:j])
        body = INCLUDE.sub(lambda m: "\n" + expand(m[1]) + "\n", body)  # each table its own
        k = i - 1
        while k > 0 and not lines[k].startswith("#") and k not in starts:
            k -= 1
        found.append(("\n".join(lines[k:i]), body, i + 1))
    return found


def shape_names(shape: str) -> set[str]:
    dims = shape.split("x")
    names = {shape, " × ".join(dims), "×".join(dims), " x ".join(dims),
             "\u00a0×\u00a0".join(dims)}  # the Spanish tables keep a shape on one line
    if len(dims) == 3 and len(set(dims)) == 1:
        names.add(f"{dims[0]}³")
    return names


def tables(text: str) -> list[list[list[str]]]:
    out, rows = [], []
    for ln in text.splitlines() + [""]:
        s = ln.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
        elif rows:
            out.append(rows)
            rows = []
    return out


def figure(body: str, impl: str, shape: str) -> bool:
    """Whether a table of the reveal has a figure (not '-') for ``impl`` at ``shape``, with
    shapes as columns and implementations as rows, or the other way round."""
    names, who = shape_names(shape), {impl, f"`{impl}`"}
    for t in tables(body):
        head = t[0]
        for row in t[1:]:
            for a, b in ((row[0], None), (None, row[0])):
                if a in who:
                    cols = [c for c, h in enumerate(head) if h.strip("*") in names]
                elif b is not None and b.strip("*") in names:
                    cols = [c for c, h in enumerate(head) if h in who]
                else:
                    continue
                if any(c < len(row) and row[c] not in ("", "-", "–") for c in cols):
                    return True
    return False


def missing(prompt: str, body: str) -> list[str]:
    lacks = ["says it is not recorded"] if NOT_RECORDED.search(body) else []
    for cmd in re.findall(r"python -m phase24 bench \S+[^\n]*", prompt):
        shapes = re.search(r"--shapes (\S+)", cmd)
        words = cmd.split()
        impls = words[words.index("--impl") + 1:] if "--impl" in words else []
        impls = impls[:next((i for i, w in enumerate(impls) if w.startswith("--")), len(impls))]
        if not shapes or not impls or "--file" in cmd:
            continue
        for impl in impls:
            for shape in shapes[1].split(","):
                if not figure(body, impl, shape):
                    lacks.append(f"{impl} at {shape}")
    return lacks


@pytest.mark.parametrize("page", LABS, ids=lambda p: p.name)
def test_every_reveal_holds_what_its_prompt_asks(page):
    lacks = [f"line {n}: {', '.join(m)}" for prompt, body, n in reveals(page.read_text())
             if (m := missing(prompt, body))]
    assert lacks == [], page.name


def test_a_reveal_that_lacks_a_shape_is_caught():
    table = "| implementation | 4096³ |\n|---|---:|\n| `cublas` | 51.2 |\n| `cuda-naive` | 0.50 |\n"
    prompt = ("Predict.\n\n```bash\npython -m phase24 bench gemm --impl cublas cuda-naive "
              "--shapes 1024x1024x1024,4096x4096x4096 --dtype float32\n```\n")
    assert missing(prompt, table) == ["cublas at 1024x1024x1024", "cuda-naive at 1024x1024x1024"]
    assert missing(prompt.replace("1024x1024x1024,", ""), table) == []
    assert missing(prompt.replace("1024x1024x1024,", ""), table.replace("0.50", "-")) == \
        ["cuda-naive at 4096x4096x4096"]
    assert missing("", "Not in the recorded run.") == ["says it is not recorded"]
