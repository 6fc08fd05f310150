"""Write (or check) the ladders' tables, and the "Measured" lines of every Triton rung, from the
committed results.

Usage: python3 scripts/rung_headers.py [--check]
results/h200/cuda_ladder.md (and .es.md) tabulates every CUDA rung's figures in the committed
benchmark of the whole ladder (results/h200/softmax.json; the rungs' .cu files in
src/phase24/softmax/cuda/ state no figures); each Triton rung
(src/phase24/softmax/triton/v*.py) its figures in the same run, on the rows it is built for, and results/h200/triton_ladder.md tabulates them for the docs. The Spanish pages'
twins of the generated tables (triton_ladder.es.md, softmax_table.es.md, minigpt_speed.es.md) and
softmax_table.md (the README's table, which the pages include) are
written here too, from the same JSON; GEMM's tables (results/h200/gemm/<dtype>_<group>.md and .es.md,
src/phase24/gemm/tables.py) from its run beside them, results/h200/gemm/gemm.json, and those of the
rungs' run (results/h200/gemm/rungs/), and
the pages' includes of them below each GEMM results placeholder (tables.fill_page). This script is the only writer of those lines; tests/test_readme.py runs it with --check, so a header cannot drift
from the committed JSON.
"""

import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "h200"
KERNELS = ROOT / "src" / "phase24" / "softmax" / "cuda"
LADDER = ROOT / "src" / "phase24" / "softmax" / "triton"
RUN = RESULTS / "softmax.json"  # one run of every rung of both ladders
GEMM_RUN = ROOT / "results/h200/gemm/gemm.json"  # GEMM's run (bench gemm): tables.RUN
GEMM_RUNGS = ROOT / "results/h200/gemm/rungs/gemm.json"  # every rung, a few shapes: tables.RUNGS


def cuda_rungs() -> dict:
    """{file: registry name} of each CUDA rung, as its first line names it ("// v7 (cuda-v7, ...")."""
    return {path.name: re.match(r"// v\d+ \((cuda-[\w-]+)", path.read_text())[1]
            for path in sorted(KERNELS.glob("v*.cu"))}


# Triton rung: (file, the bulk row lengths it is built for, what it adds)
TRITON_RUNGS = {
    "triton-naive": ("v0_naive.py", (128, 65536), "one program per row"),
    "triton-v1": ("v1_rows.py", (128, 32768), "several short rows per program"),
    "triton-v2": ("v2_split.py", (65536, 262144), "a long row over many programs, two launches"),
    "triton-v3": ("v3_lagged.py", (65536, 262144), "one launch, one read, programs wait"),
    "triton-v4": ("v4_ring.py", (65536, 262144), "v3's chunks in a shared-memory ring (Gluon)"),
    "triton-v5": ("v5_whole_row.py", (65536, 262144), "the whole row in shared memory (Gluon)"),
    "triton": ("best.py", (128, 262144), "the tuned table's rung for each shape"),
}
MARK = {".py": "# Measured (H200"}
FEW = ((1, 32768), (8, 131072), (64, 32768), (64, 262144))
DTYPES = (("float32", "fp32"), ("bfloat16", "bf16"))


def triton_figures(data: dict, impl: str) -> dict:
    """{dtype tag: (min, max % of copy on the rung's bulk rows, [few-rows us])}."""
    lo, hi = TRITON_RUNGS[impl][1]
    recs = [r for r in data["records"] if r["impl"] == impl]
    out = {}
    for dtype, tag in DTYPES:
        bulk = [r["pct_copy"] for r in recs if r["dtype"] == dtype and r["M"] * r["N"] == 2**28
                and lo <= r["N"] <= hi]
        few = {(r["M"], r["N"]): r["us"] for r in recs if r["dtype"] == dtype}
        out[tag] = (min(bulk), max(bulk), [few.get(s) for s in FEW])
    return out


def _few(us: list) -> str:
    return " / ".join("-" if u is None else f"{u:.1f}" for u in us)


def triton_header(data: dict, impl: str) -> list[str]:
    lo, hi = TRITON_RUNGS[impl][1]
    f = triton_figures(data, impl)
    return [f"# Measured (H200, results/h200/{RUN.name}, copy "
            f"{data['copy_gbps']:.0f} GB/s):",
            f"# bulk rows of {lo}-{hi} values, % of copy: fp32 {f['fp32'][0]:.1f}-{f['fp32'][1]:.1f}, "
            f"bf16 {f['bf16'][0]:.1f}-{f['bf16'][1]:.1f};",
            "# few rows (" + ", ".join(f"{m}x{n}" for m, n in FEW) + "), us:",
            f"# fp32 {_few(f['fp32'][2])}; bf16 {_few(f['bf16'][2])}."]


def ladder_table(data: dict, lang: str = "en") -> str:
    """The Triton ladder's figures (results/h200/triton_ladder.md, .es.md; lab 03 shows them)."""
    from phase24.core.spanish import NBSP, es_number

    en = lang == "en"
    num = (lambda v, d: f"{v:.{d}f}") if en else es_number
    dash = "-" if en else "–"

    def span(lo: float, hi: float) -> str:
        return f"{num(lo, 1)}{dash}{num(hi, 1)}"

    def few(us: list) -> str:
        return " / ".join("-" if u is None else num(u, 1) for u in us)

    # two tables, one question each, narrow enough for a phone: the bulk rows, then the few rows
    bulk = ["| rung | adds | bulk rows, N | float32, % of copy | bfloat16, % of copy |" if en else
            "| peldaño | añade | filas grandes, N | float32, % de la copia | "
            "bfloat16, % de la copia |", "|---|---|---|---|---|"]
    few_rows = ["| rung | few rows, float32, us | few rows, bfloat16, us |" if en else
                "| peldaño | pocas filas, float32, µs | pocas filas, bfloat16, µs |", "|---|---|---|"]
    for impl, (_, (lo, hi), adds) in TRITON_RUNGS.items():
        f = triton_figures(data, impl)
        bulk.append(f"| `{impl}` | {adds if en else ADDS_ES[impl]} | {lo}{dash}{hi} | "
                    f"{span(*f['fp32'][:2])} | {span(*f['bf16'][:2])} |")
        few_rows.append(f"| `{impl}` | {few(f['fp32'][2])} | {few(f['bf16'][2])} |")
    lines = bulk + [""] + few_rows
    if en:
        few_shapes = ", ".join(f"{m}x{n}" for m, n in FEW)
        lines.append(f"\nFew rows: {few_shapes}. {data['gpu']}, copy "
                     f"{data['copy_gbps']:.0f} GB/s.")
    else:
        shapes = ", ".join(f"{m}{NBSP}×{NBSP}{n}" for m, n in FEW)
        lines.append(f"\nPocas filas: {shapes}. {data['gpu']}, copia "
                     f"{data['copy_gbps']:.0f}{NBSP}GB/s.")
    return "\n".join(lines) + "\n"


def cuda_ladder_table(data: dict, lang: str = "en") -> str:
    """Every CUDA rung's figures (results/h200/cuda_ladder.md, .es.md; lab 02 shows it): the bulk
    sweep's % of copy per dtype (lowest-highest, median) and the few-row shapes' us."""
    from phase24.core.spanish import NBSP, es_number

    num = (lambda v, d: f"{v:.{d}f}") if lang == "en" else es_number
    dash = "-" if lang == "en" else "–"

    def figures(impl: str, dtype: str) -> str:
        p = [r["pct_copy"] for r in data["records"] if r["impl"] == impl and r["dtype"] == dtype
             and r["M"] * r["N"] == 2**28]
        return f"{num(min(p), 0)}{dash}{num(max(p), 0)} ({num(statistics.median(p), 0)})"

    def few(impl: str, dtype: str) -> str:
        us = {(r["M"], r["N"]): r["us"] for r in data["records"]
              if r["impl"] == impl and r["dtype"] == dtype}
        return " / ".join("-" if us.get(s) is None else num(us[s], 1) for s in FEW)

    rungs = list(cuda_rungs().items()) + [("(the tuned table's rung per shape)"
                                            if lang == "en" else "(el peldaño de la tabla "
                                            "afinada para cada forma)", "cuda")]
    if lang == "en":
        lines = ["| rung | file | float32, % of copy (median) | bfloat16, % of copy (median) | "
                 "few rows, float32, us | few rows, bfloat16, us |"]
    else:
        lines = ["| peldaño | fichero | float32, % de la copia (mediana) | bfloat16, % de la copia "
                 "(mediana) | pocas filas, float32, µs | pocas filas, bfloat16, µs |"]
    lines.append("|---|---|---|---|---|---|")
    for name, impl in sorted(rungs, key=lambda r: (r[1] == "cuda", r[1] != "cuda-naive",
                                                   int(re.sub(r"\D", "", r[1]) or 0))):
        shown = name if name.startswith("(") else f"`{name}`"
        lines.append(f"| `{impl}` | {shown} | {figures(impl, 'float32')} | "
                     f"{figures(impl, 'bfloat16')} | {few(impl, 'float32')} | {few(impl, 'bfloat16')} |")
    x = "x" if lang == "en" else f"{NBSP}×{NBSP}"
    shapes = ", ".join(f"{m}{x}{n}" for m, n in FEW)
    if lang == "en":
        lines.append(f"\nBulk sweep: N = 128 to 262144, 2^28 elements each (a rung hands rows beyond "
                     f"its reach to v2). Few rows: {shapes}. {data['gpu']}, "
                     f"copy {data['copy_gbps']:.0f} GB/s.")
    else:
        lines.append(f"\nFormas grandes: N de 128 a 262144, 2^28 elementos cada una (un peldaño pasa "
                     f"a v2 las filas que no alcanza). Pocas filas: {shapes}. "
                     f"{data['gpu']}, copia {data['copy_gbps']:.0f}{NBSP}GB/s.")
    return "\n".join(lines) + "\n"


# ---- the Spanish pages' tables: the same figures, localised (µs, decimal comma, Spanish headers)

ADDS_ES = {
    "triton-naive": "un programa por fila",
    "triton-v1": "varias filas cortas por programa",
    "triton-v2": "una fila larga repartida entre muchos programas, dos lanzamientos",
    "triton-v3": "un lanzamiento, una lectura, los programas se esperan",
    "triton-v4": "los trozos de v3 en un anillo de memoria compartida (Gluon)",
    "triton-v5": "la fila entera en memoria compartida (Gluon)",
    "triton": "el peldaño que la tabla afinada indica para cada forma",
}


def minigpt_table_es(d: dict) -> str:
    """`python -m phase24 results --minigpt` (results/h200/minigpt_speed.md) in Spanish."""
    from phase24.core.spanish import NBSP

    c = d["config"]
    lines = ["| motor | tokens/s |", "|---|---|"]
    lines += [f"| {k} | {v:,.0f} |".replace(",", NBSP) for k, v in d["tokens_per_s"].items()]
    lines.append(f"\n{c['n_layer']} capas, anchura {c['n_embd']}, {c['n_head']} cabezas, contexto "
                 f"{c['block_size']}, lote {d['batch_size']}, {d['dtype']}; {d['gpu']}, "
                 f"{d['cpu_count']} núcleos de CPU, torch {d['torch']}.")
    return "\n".join(lines) + "\n"


def tables(run: dict) -> dict:
    """{file: text} of every table made from the committed runs (and the Spanish MiniGPT table):
    softmax's, and GEMM's beside its run (results/h200/gemm/<dtype>_<group>.md, .es.md) once
    that run is committed."""
    from phase24.softmax.tables import markdown_table

    minigpt = json.loads((RESULTS / "minigpt_speed.json").read_text())
    out = {RESULTS / "triton_ladder.md": ladder_table(run),
           RESULTS / "triton_ladder.es.md": ladder_table(run, "es"),
           RESULTS / "cuda_ladder.md": cuda_ladder_table(run),
           RESULTS / "cuda_ladder.es.md": cuda_ladder_table(run, "es"),
           RESULTS / "softmax_table.md": markdown_table(run) + "\n",
           RESULTS / "softmax_table.es.md": markdown_table(run, lang="es") + "\n",
           RESULTS / "minigpt_speed.es.md": minigpt_table_es(minigpt)}
    out.update(gemm_tables(GEMM_RUN))
    out.update(gemm_tables(GEMM_RUNGS))
    return out


def gemm_tables(path: Path) -> dict:
    """{file: text} of GEMM's tables, written beside its run ``path``; none while it is absent."""
    if not path.exists():
        return {}
    from phase24.gemm.tables import table_files

    return {path.parent / name: text
            for name, text in table_files(json.loads(path.read_text())).items()}


def gemm_pages(path: Path, docs: Path = ROOT / "docs", rungs_path: Path = GEMM_RUNGS) -> dict:
    """{page: text} of every page with a GEMM results placeholder, the includes below each made
    from the tables of the run ``path`` and, for rows it lacks, of the rungs' run ``rungs_path``
    (src/phase24/gemm/tables.py, fill_page)."""
    from phase24.gemm.tables import PLACEHOLDER, fill_page

    tables = {p.name: text for p, text in gemm_tables(path).items()}
    rungs = {p.name: text for p, text in gemm_tables(rungs_path).items()}
    out = {}
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        if any(PLACEHOLDER.match(line) for line in text.splitlines()):
            lang = "es" if page.name.endswith(".es.md") else "en"
            out[page] = fill_page(text, lang, tables, rungs)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    run = json.loads(RUN.read_text())
    stale = []
    for table, text in tables(run).items():
        if not table.exists() or table.read_text() != text:
            stale.append(table.name)
            if not check:
                table.write_text(text)
    for page, text in gemm_pages(GEMM_RUN).items():  # the pages' includes of GEMM's tables
        if page.read_text(encoding="utf-8") != text:
            stale.append(page.name)
            if not check:
                page.write_text(text, encoding="utf-8")
    if check and stale:
        print("rung headers differ from the results: " + ", ".join(stale)
              + " (python3 scripts/rung_headers.py rewrites them)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
