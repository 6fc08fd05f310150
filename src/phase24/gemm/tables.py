"""GEMM's benchmark results as the pages show them, in English or Spanish: for each dtype and each
group of shapes (squares, a transformer layer's products, decode shapes), a table with a row per
implementation and a column per shape, each cell the TFLOP/s and, in brackets, the percentage of
cuBLAS's TFLOP/s on the same shape in the same run.

The tables are made from one benchmark run (``python -m phase24 bench gemm``, whose JSON holds a
record per implementation, dtype and shape with ``impl``, ``dtype``, ``M``, ``N``, ``K``, ``us``
and ``tflops``; cuBLAS is ``cublas``). Every table of a run has the same rows in the same order
(every implementation the run timed, the ladders in order), so a page can include one rung's row
by its line number in any of them; a rung with nothing on a group's shapes shows ``-``. The decode
tables end with the memory roofline: the TFLOP/s a kernel would reach if it moved the operands and
the result once at the copy bandwidth measured in the same run. ``table_files`` names every file;
scripts/rung_headers.py writes them beside the run: results/h200/gemm/ for the standard sweep
(``cublas``, ``cuda`` and the rungs it picks, ``triton``), results/h200/gemm/rungs/ for the rungs'
run (every implementation of both ladders on a few shapes: the ``bench-gemm-rungs`` step of
scripts/gpu-session.sh).
"""

from __future__ import annotations

import re

from phase24.core.spanish import NBSP, es_number

ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
GROUPS = ("squares", "layer", "decode")
# Shape columns a table holds and still fits a 400 px phone's column (a cube's header is short)
COLUMNS = {"squares": 6, "layer": 3, "decode": 3}
DECODE_M = 64  # a shape with M at most this (and not square) is a decode shape
TABLES = "results/h200/gemm"        # the standard sweep's run and its tables
RUNGS = TABLES + "/rungs"           # the rungs' run and its tables
RUN = TABLES + "/gemm.json"

WORDS = {
    "en": dict(impl="implementation", roofline="memory roofline", x=" × ", dash="-",
               num=lambda v, d: f"{v:.{d}f}", pct="{p}%"),
    "es": dict(impl="implementación", roofline="*roofline* de memoria", x=" × ",
               dash="–", num=es_number, pct=f"{{p}}{NBSP}%"),
}

CAPTION = {
    "en": "{what}: TFLOP/s (in brackets, % of cuBLAS's in the same run{tf32}). `-`: not timed (the "
          "JSON's `refused` says why).{roof} {gpu}.",
    "es": "{what}: TFLOP/s (entre paréntesis, % de los de cuBLAS en la misma ejecución{tf32}). `–`: "
          "sin medir (`refused` en el JSON dice por qué).{roof} {gpu}.",
}
WHAT = {
    "en": {"squares": "{dtype}, square products M = N = K",
           "layer": "{dtype}, the products of a transformer layer (4096 tokens)",
           "decode": "{dtype}, decode shapes (M from 1 to 64 against the layer's weights)"},
    "es": {"squares": "{dtype}, productos cuadrados M = N = K",
           "layer": "{dtype}, los productos de una capa de transformer (4096 tokens)",
           "decode": "{dtype}, formas de decodificación (M de 1 a 64 frente a los pesos de la capa)"},
}
TF32 = {"en": ", TF32 off", "es": ", sin TF32"}
ROOF = {
    "en": " Memory roofline: the operands and the result moved once at the copy's {copy} GB/s, "
          "measured in the same run.",
    "es": f" *Roofline* de memoria: los operandos y el resultado movidos una vez a los "
          f"{{copy}}{NBSP}GB/s de la copia, medidos en la misma ejecución.",
}


def group_of(m: int, n: int, k: int) -> str:
    """'squares' (M = N = K), 'decode' (M at most 64) or 'layer' (the rest)."""
    if m == n == k:
        return "squares"
    return "decode" if m <= DECODE_M else "layer"


def impl_order(name: str) -> tuple:
    """cuBLAS first, then the CUDA C ladder (naive, v1, v2, ..., then `cuda`), then the Triton
    ladder the same way, then anything else in name order."""
    for family, prefix in enumerate(("cuda", "triton"), start=1):
        if name == prefix:
            return (family, 2, 0, "")
        m = re.fullmatch(prefix + r"-(naive|v(\d+))", name)
        if m:
            return (family, 1, -1 if m[1] == "naive" else int(m[2]), "")
    return (0, 0, 0, "") if name == "cublas" else (3, 0, 0, name)


def implementations(result: dict) -> list[str]:
    """Every implementation the run timed, in table order."""
    return sorted(dict.fromkeys(r["impl"] for r in result["records"]), key=impl_order)


def shapes(result: dict, dtype: str, group: str) -> list[tuple[int, int, int]]:
    """The group's shapes timed in ``dtype``, in the run's order."""
    return [s for s in dict.fromkeys((r["M"], r["N"], r["K"]) for r in result["records"]
                                     if r["dtype"] == dtype) if group_of(*s) == group]


def tflops(r: dict) -> float:
    return r["tflops"] if r.get("tflops") is not None else 2 * r["M"] * r["N"] * r["K"] / r["us"] / 1e6


def roofline_tflops(shape: tuple[int, int, int], dtype: str, copy_gbps: float) -> float:
    """TFLOP/s of a kernel that moves A, B and C once at ``copy_gbps``."""
    m, n, k = shape
    seconds = (m * k + k * n + m * n) * ELEMENT_BYTES[dtype] / (copy_gbps * 1e9)
    return 2 * m * n * k / seconds / 1e12


def _tf(v: float, lang: str) -> str:
    num = WORDS[lang]["num"]
    return num(v, 0 if v >= 100 else 1 if v >= 10 else 2)


def _pct(p: float, lang: str) -> str:
    w = WORDS[lang]
    return w["pct"].format(p=w["num"](p, 0 if p >= 10 else 1))


def _chunk(result: dict, recs: dict, dtype: str, group: str, cols: list, lang: str) -> str:
    """One table: a row per implementation (and the memory roofline's for decode shapes), a column
    per shape of ``cols``."""
    w = WORDS[lang]
    lines = [f"| {w['impl']} | " + " | ".join(_shape_head(s, lang) for s in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for impl in implementations(result):
        cells = []
        for s in cols:
            r, base = recs.get((impl, s)), recs.get(("cublas", s))
            if r is None:
                cells.append(w["dash"])
            elif impl == "cublas" or base is None:
                cells.append(_tf(tflops(r), lang))
            else:
                cells.append(f"{_tf(tflops(r), lang)} ({_pct(100 * tflops(r) / tflops(base), lang)})")
        lines.append(f"| `{impl}` | " + " | ".join(cells) + " |")
    if group == "decode":
        cells = []
        for s in cols:
            v, base = roofline_tflops(s, dtype, result["copy_gbps"]), recs.get(("cublas", s))
            cells.append(_tf(v, lang) if base is None else
                         f"{_tf(v, lang)} ({_pct(100 * v / tflops(base), lang)})")
        lines.append(f"| {w['roofline']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _shape_head(shape: tuple[int, int, int], lang: str) -> str:
    m, n, k = shape
    return f"{m}³" if m == n == k else WORDS[lang]["x"].join(map(str, shape))


def table(result: dict, dtype: str, group: str, lang: str = "en") -> str:
    """One dtype's table for one group of shapes (module docstring), with its caption (the GPU;
    the page's one note on where its numbers come from names the run). A group with more shapes
    than a phone's column holds (COLUMNS) is written as several tables of consecutive shapes, each
    with every row, one caption below them all."""
    cols = shapes(result, dtype, group)
    if not cols:
        raise ValueError(f"the run has no {group} shapes in {dtype}")
    recs = {(r["impl"], (r["M"], r["N"], r["K"])): r for r in result["records"]
            if r["dtype"] == dtype}
    step = COLUMNS[group]
    chunks = [_chunk(result, recs, dtype, group, cols[i:i + step], lang)
              for i in range(0, len(cols), step)]
    lines = "\n\n".join(chunks).splitlines()
    roof = ROOF[lang].format(copy=f"{result['copy_gbps']:.0f}") if group == "decode" else ""
    what = WHAT[lang][group].format(dtype=dtype)
    lines.append("\n" + CAPTION[lang].format(
        what=what, tf32=TF32[lang] if dtype == "float32" else "", roof=roof,
        gpu=result.get("gpu", "?")))
    return "\n".join(lines) + "\n"


def table_files(result: dict) -> dict[str, str]:
    """{file name: text} of every table of the run: ``<dtype>_<group>.md`` and its Spanish twin
    ``<dtype>_<group>.es.md``, for each dtype and group the run has."""
    out = {}
    for dtype in dict.fromkeys(r["dtype"] for r in result["records"]):
        for group in GROUPS:
            if shapes(result, dtype, group):
                out[f"{dtype}_{group}.md"] = table(result, dtype, group)
                out[f"{dtype}_{group}.es.md"] = table(result, dtype, group, "es")
    return out


# ---- the pages' includes of these tables --------------------------------------------------------
#
# A page asks for rows of the tables with a placeholder, an HTML comment that names the dtype, the
# groups of shapes and the implementations (and, for decode shapes, the memory roofline):
#
#     <!-- results: gemm float32 squares, rows cublas cuda-v1 cuda-v2 -->
#     <!-- results: gemm bfloat16 squares, layer and decode, rows cublas cuda triton (decode with the memory roofline) -->
#
# ``fill_page`` writes below each placeholder the includes that show those rows (the header, the
# rows the run has, the caption), in the page's language, by line number: from the standard
# sweep's tables, and for rows it lacks from the rungs' run's (each table with its own run's cuBLAS
# row and caption); for rows neither run has, one sentence that says so. The placeholder stays,
# so the includes are made again from it whenever the tables change (scripts/rung_headers.py
# does it; tests check it).

PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)<!--\s*results:\s*gemm\s+(?P<spec>.*?)\s*-->[ \t]*$")
SPEC = re.compile(r"^(?P<dtype>\w+)\s+(?P<groups>[\w ,]*?),\s+rows\s+(?P<rows>.*)$")
INCLUDE_LINE = re.compile(r'^[ \t]*--8<-- "results/h200/gemm/[^"]+"[ \t]*$')
MISSING = {"en": "Not in the recorded run: {names}; the command above times what is missing.",
           "es": "No están en la ejecución registrada: {names}; la orden de arriba mide lo que "
                 "falta."}
ROOFLINE_ROW = re.compile(r"^\| (memory roofline|\*roofline\* de memoria) \|")


def parse_placeholder(spec: str) -> tuple[str, list[str], list[str], bool]:
    """(dtype, groups, implementations, with the roofline row) of a placeholder's text."""
    m = SPEC.match(spec)
    if not m:
        raise ValueError(f"not a GEMM results placeholder: {spec!r}")
    groups = [g for g in GROUPS if re.search(rf"\b{g}\b", m["groups"])]
    rows = m["rows"]
    roofline = "memory roofline" in rows
    names = re.findall(r"`?\b((?:cublas|cuda|triton)(?:-[\w]+)?)\b`?", rows.split("(")[0].split(" and ")[0])
    if not groups or not names:
        raise ValueError(f"a GEMM results placeholder names no group or no row: {spec!r}")
    return m["dtype"], groups, names, roofline


def _spans(lines: list[int]) -> str:
    spans: list[list[int]] = []
    for i in sorted(set(lines)):
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ",".join(f"{a}:{b}" for a, b in spans)


def includes(spec: str, lang: str, tables: dict[str, str], indent: str = "",
             rungs: dict[str, str] | None = None) -> list[str]:
    """The lines below a placeholder: for each group, an include of the header and the rows asked
    for that the standard sweep's table has (if it has one besides cuBLAS's), then one of its
    caption; then the same from the rungs' run's table for the rows the first lacked; then, if
    neither run has a row asked for, the sentence that says so. ``tables``, ``rungs``: {file name:
    text} of each run's tables."""
    dtype, groups, names, roofline = parse_placeholder(spec)
    out: list[str] = []
    shown: set[str] = set()
    suffix = ".es.md" if lang == "es" else ".md"
    for group in groups:
        name = f"{dtype}_{group}{suffix}"
        left = list(names)
        for folder, files in ((TABLES, tables), (RUNGS, rungs or {})):
            lines = files.get(name, "").splitlines()
            chunks = _chunks(lines)
            found = [n for n in left if chunks and n in chunks[0][1] and n != "cublas"]
            if not found:
                continue
            for head, rows, roof in chunks:
                wanted = [rows[n] for n in names if n in rows and (n == "cublas" or n in found)]
                if roofline and group == "decode":
                    wanted += roof
                out += ["", f'{indent}--8<-- "{folder}/{name}:{_spans([head, head + 1] + wanted)}"']
            out += ["", f'{indent}--8<-- "{folder}/{name}:{len(lines)}:{len(lines)}"']
            shown.update(found)
            left = [n for n in left if n not in found]
    missing = [n for n in names if n not in shown and n != "cublas"]
    if missing and tables:
        names_md = ", ".join(f"`{n}`" for n in missing)
        out += ["", indent + MISSING[lang].format(names=names_md)]
    return out


def _chunks(lines: list[str]) -> list[tuple[int, dict[str, int], list[int]]]:
    """The tables of a table file: (its header's line number, {implementation: line number},
    [the memory roofline's line number]) each, numbered from 1."""
    out: list[tuple[int, dict[str, int], list[int]]] = []
    for i, line in enumerate(lines, start=1):
        if not line.startswith("|"):
            continue
        if i == 1 or not lines[i - 2].startswith("|"):
            out.append((i, {}, []))
        elif m := re.match(r"^\| `([\w-]+)` \|", line):
            out[-1][1][m[1]] = i
        elif ROOFLINE_ROW.match(line):
            out[-1][2].append(i)
    return out


def _generated(line: str) -> bool:
    s = line.strip()
    return not s or bool(INCLUDE_LINE.match(line)) or any(
        s.startswith(t.split("{")[0]) for t in MISSING.values())


def fill_page(text: str, lang: str, tables: dict[str, str],
              rungs: dict[str, str] | None = None) -> str:
    """``text`` with the lines below each GEMM placeholder made again from ``tables`` (the standard
    sweep's) and ``rungs`` (the rungs' run's)."""
    src = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(src):
        line = src[i]
        m = PLACEHOLDER.match(line)
        out.append(line)
        i += 1
        if not m:
            continue
        while i < len(src) and _generated(src[i]):
            i += 1
        made = includes(m["spec"], lang, tables, m["indent"], rungs)
        before = [x.strip() for x in out[:-1] if x.strip() and not PLACEHOLDER.match(x)]
        if made and made[-1].strip() in before[-1:] and not any(INCLUDE_LINE.match(x) for x in made):
            made = []  # the same sentence as just above, for the placeholder before this one
        out += made
        if i < len(src):
            out.append("")
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def read_tables(folder) -> dict[str, str]:
    """{file name: text} of the tables written in ``folder`` (none before a run is committed)."""
    from pathlib import Path

    folder = Path(folder)
    if not (folder / "gemm.json").exists():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*_*.md"))
            if p.name.split("_")[0] in ELEMENT_BYTES}
