"""GEMM's generated tables (src/phase24/gemm/tables.py): made from a benchmark JSON, in English and
Spanish, written by scripts/rung_headers.py beside the committed run (results/h200/gemm/), and
included by the pages only by lines that still pick a header, an implementation's row, the
roofline row or the caption. A synthetic run made here stands in for the GPU's."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from test_docs import table_head

from phase24.gemm.tables import (NBSP, group_of, implementations, roofline_tflops, table,
                                 table_files)

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "results" / "h200" / "gemm"
DOCS = ROOT / "docs"


def _record(impl: str, dtype: str, shape: tuple, tflops: float) -> dict:
    m, n, k = shape
    us = 2 * m * n * k / tflops / 1e6
    return {"impl": impl, "dtype": dtype, "M": m, "N": n, "K": k, "us": us, "gbps": 1.0,
            "pct_copy": 1.0, "speedup_vs_cublas": None, "plan": None, "host_us": us,
            "gpu_us": us, "loop_us": us, "tflops": tflops}


def synthetic_run() -> dict:
    """Three shapes (a square, a layer product, a decode shape) in two dtypes; cuda-naive is
    not timed beyond the square, triton-v3 only on the decode shape, as a sweep leaves them."""
    square, layer, decode = (2048, 2048, 2048), (4096, 11008, 4096), (16, 4096, 4096)
    recs = []
    for dtype, peak in (("float32", 50.0), ("bfloat16", 700.0)):
        for impl, share in (("cublas", 1.0), ("triton", 0.96), ("cuda-v7", 0.5),
                            ("cuda-naive", 0.01), ("cuda", 0.5), ("triton-v3", 0.8),
                            ("cuda-v10", 0.6), ("triton-naive", 0.4), ("cuda-v2", 0.125)):
            for shape in (square, layer, decode):
                if impl == "cuda-naive" and shape != square:
                    continue
                if impl == "triton-v3" and shape != decode:
                    continue
                recs.append(_record(impl, dtype, shape, peak * share))
    return {"op": "gemm", "gpu": "NVIDIA H200", "date": "2026-12-03T10:00:00+00:00",
            "commit": "abc1234", "copy_gbps": 4273.0, "baseline": "cublas", "records": recs,
            "refused": ["cuda-naive float32 4096x11008x4096: not in the default sweep"]}


def test_every_dtype_and_group_gets_a_table_in_both_languages():
    files = table_files(synthetic_run())
    assert sorted(files) == sorted(f"{d}_{g}{lang}" for d in ("float32", "bfloat16")
                                   for g in ("squares", "layer", "decode") for lang in (".md", ".es.md"))
    assert group_of(4096, 4096, 4096) == "squares" and group_of(64, 11008, 4096) == "decode"
    assert group_of(4096, 4096, 14336) == "layer" and group_of(1, 1, 1) == "squares"


def test_rows_are_the_ladders_in_order_and_the_same_in_every_table():
    run = synthetic_run()
    order = ["cublas", "cuda-naive", "cuda-v2", "cuda-v7", "cuda-v10", "cuda", "triton-naive",
             "triton-v3", "triton"]
    assert implementations(run) == order
    for name, text in table_files(run).items():
        rows = [line.split("|")[1].strip() for line in text.splitlines()[2:] if line.startswith("|")]
        expected = [f"`{i}`" for i in order]
        if "decode" in name:
            expected.append("memory roofline" if not name.endswith(".es.md") else "*roofline* de memoria")
        assert rows == expected, name


def test_cells_give_tflops_and_the_share_of_cublas():
    text = table(synthetic_run(), "float32", "squares")
    lines = text.splitlines()
    assert lines[0] == "| implementation | 2048³ |"
    assert lines[2] == "| `cublas` | 50.0 |"
    assert lines[3] == "| `cuda-naive` | 0.50 (1.0%) |"
    assert lines[4] == "| `cuda-v2` | 6.25 (12%) |"
    assert "| `triton` | 48.0 (96%) |" in lines
    assert "| `triton-v3` | - |" in lines  # not timed on that shape
    layer = table(synthetic_run(), "bfloat16", "layer").splitlines()
    assert layer[0] == "| implementation | 4096 × 11008 × 4096 |"  # spaces: a phone wraps it
    assert "| `cublas` | 700 |" in layer and "| `cuda-naive` | - |" in layer
    caption = text.strip().splitlines()[-1]
    assert "TF32 off" in caption and caption.endswith(" NVIDIA H200.")
    assert not re.search(r"2026|results/|abc1234", caption)  # no date, file or commit
    assert "TF32" not in table(synthetic_run(), "bfloat16", "squares")


def test_decode_tables_end_with_the_memory_roofline():
    run = synthetic_run()
    roof = roofline_tflops((16, 4096, 4096), "bfloat16", 4273.0)
    # 2 M N K flops over (M K + K N + M N) bytes of 2 at 4273 GB/s
    assert roof == pytest.approx(2 * 16 * 4096 * 4096 * 4273e9 / ((16 * 4096 * 2 + 4096 * 4096) * 2) / 1e12)
    last = [line for line in table(run, "bfloat16", "decode").splitlines() if line.startswith("|")][-1]
    assert last == f"| memory roofline | {roof:.1f} ({100 * roof / 700:.1f}%) |"  # under 10%: a decimal
    assert "4273 GB/s" in table(run, "bfloat16", "decode")


def test_spanish_tables_are_localised():
    for name, text in table_files(synthetic_run()).items():
        if not name.endswith(".es.md"):
            continue
        body = text.split("(results/")[0]
        assert not re.search(r"\d\.\d", body), f"{name}: a decimal point"
        assert " us" not in text and "copy" not in text and "implementation" not in text, name
        assert not re.search(r"\d%", text), f"{name}: % without its space"
    es = table(synthetic_run(), "float32", "squares", "es")
    assert f"| `cuda-naive` | 0,50 (1,0{NBSP}%) |" in es
    assert "| 4096 × 11008 × 4096 |" in table(synthetic_run(), "float32", "layer", "es")


def test_a_group_the_run_lacks_has_no_table():
    run = synthetic_run()
    run["records"] = [r for r in run["records"] if group_of(r["M"], r["N"], r["K"]) != "decode"]
    assert not any("decode" in name for name in table_files(run))
    with pytest.raises(ValueError):
        table(run, "float32", "decode")


def _rung_headers():
    spec = importlib.util.spec_from_file_location("rung_headers", ROOT / "scripts" / "rung_headers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_writes_the_tables_beside_the_run(tmp_path: Path):
    """scripts/rung_headers.py (the writer of every generated table) writes GEMM's beside its run,
    and none while the run is absent."""
    hook = _rung_headers()
    assert hook.gemm_tables(tmp_path / "gemm.json") == {}
    (tmp_path / "gemm.json").write_text(json.dumps(synthetic_run()))
    made = hook.gemm_tables(tmp_path / "gemm.json")
    assert made == {tmp_path / name: text for name, text in
                    table_files(synthetic_run()).items()}
    assert hook.GEMM_RUN == GEMM / "gemm.json" and hook.GEMM_RUNGS == GEMM / "rungs" / "gemm.json"
    from phase24.gemm import tables as gemm_tables  # the pages' includes name the same files
    assert hook.GEMM_RUN == ROOT / gemm_tables.RUN
    assert hook.GEMM_RUNGS == ROOT / gemm_tables.RUNGS / "gemm.json"


@pytest.mark.skipif(not (GEMM / "gemm.json").exists(), reason="results/h200/gemm/gemm.json is not committed yet")
@pytest.mark.parametrize("folder", [GEMM, GEMM / "rungs"], ids=["sweep", "rungs"])
def test_the_committed_tables_are_the_committed_runs(folder):
    run = json.loads((folder / "gemm.json").read_text())
    for name, text in table_files(run).items():
        path = folder / name
        assert path.exists() and path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(ROOT)} differs from the run: python3 scripts/rung_headers.py rewrites it")


INCLUDE = re.compile(r'^[ \t]*-{1,}8<-{1,}[ \t]+"(results/h200/gemm/[^"]+)"', re.M)


def include_problems(page: str, text: str, root: Path = ROOT) -> list[str]:
    """Each line a page includes from GEMM's tables must be a header line, an implementation's
    row, the roofline row or the caption: a table that gains a row cannot shift a reveal onto
    another rung unseen. A page includes its own language's tables."""
    wrong = []
    for spec in INCLUDE.findall(text):
        m = re.match(r"^(results/h200/gemm/(?:rungs/)?\w+?(\.es)?\.md)(?::(.+))?$", spec)
        if not m:
            wrong.append(f"{page}: {spec}: not one of GEMM's tables")
            continue
        if bool(m[2]) != page.endswith(".es.md"):
            wrong.append(f"{page}: {spec}: the other language's table")
        path = root / m[1]
        if not path.exists():
            wrong.append(f"{page}: {spec}: no such table")
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for part in (m[3] or "").split(",") if m[3] else []:
            a, b = (int(x) for x in part.split(":"))
            for n in range(a, b + 1):
                line = lines[n - 1] if n <= len(lines) else ""
                ok = table_head(lines, n) or re.match(r"^\| (`[\w-]+`|memory roofline|"
                                                                   r"\*roofline\* de memoria) \|", line) \
                    or (n == len(lines) and line and not line.startswith("|"))
                if not ok:
                    wrong.append(f"{page}: {spec} line {n}: {line[:60]!r}")
    return wrong


def test_pages_include_gemm_tables_by_rows_that_name_a_rung():
    wrong = []
    for page in sorted(DOCS.rglob("*.md")):
        wrong += include_problems(str(page.relative_to(DOCS)), page.read_text(encoding="utf-8"))
    assert not wrong, "\n".join(wrong)


def test_the_include_check_finds_a_shifted_row(tmp_path: Path):
    folder = tmp_path / "results" / "h200" / "gemm"
    folder.mkdir(parents=True)
    for name, text in table_files(synthetic_run()).items():
        (folder / name).write_text(text)
    good = '--8<-- "results/h200/gemm/float32_squares.md:1:3,6:6"\n--8<-- "results/h200/gemm/float32_squares.md:13:13"\n'
    assert include_problems("lab.md", good, tmp_path) == []
    assert include_problems("lab.md", '--8<-- "results/h200/gemm/float32_squares.md:12:12"\n', tmp_path)
    assert include_problems("lab.md", '--8<-- "results/h200/gemm/float32_squares.es.md"\n', tmp_path)
    assert include_problems("lab.es.md", '--8<-- "results/h200/gemm/float32_squares.es.md:1:3"\n', tmp_path) == []
    assert include_problems("lab.md", '--8<-- "results/h200/gemm/float16_squares.md"\n', tmp_path)


# ---- the pages' includes, made from the placeholders ---------------------------------------------

from phase24.gemm.tables import fill_page, includes, parse_placeholder, read_tables  # noqa: E402


def _tables() -> dict[str, str]:
    return table_files(synthetic_run())


def test_a_placeholder_names_dtype_groups_rows_and_the_roofline():
    assert parse_placeholder("float32 squares, rows cublas cuda-v2") == (
        "float32", ["squares"], ["cublas", "cuda-v2"], False)
    assert parse_placeholder("bfloat16 squares, layer and decode, rows cublas cuda triton "
                             "(decode with the memory roofline)") == (
        "bfloat16", ["squares", "layer", "decode"], ["cublas", "cuda", "triton"], True)
    assert parse_placeholder("float32 decode, rows cublas cuda-v7 and the memory roofline")[3]
    with pytest.raises(ValueError):
        parse_placeholder("float32 squares")


def test_includes_pick_the_rows_asked_for_and_say_what_the_run_lacks():
    made = includes("float32 squares and decode, rows cublas cuda-v2 triton-v1 and the memory roofline",
                    "en", _tables(), "    ")
    text = "\n".join(made)
    lines = table(synthetic_run(), "float32", "decode").splitlines()
    roof = next(i for i, line in enumerate(lines, start=1) if line.startswith("| memory roofline"))
    assert '    --8<-- "results/h200/gemm/float32_squares.md:1:3,5:5"' in made  # header, cublas, cuda-v2
    assert f'    --8<-- "results/h200/gemm/float32_decode.md:1:3,5:5,{roof}:{roof}"' in made
    assert "    Not in the recorded run: `triton-v1`; the command above times what is missing." in made
    es = includes("float32 squares, rows cublas cuda-naive", "es", _tables())
    assert es[1] == '--8<-- "results/h200/gemm/float32_squares.es.md:1:4"'
    assert includes("float32 squares, rows cublas triton-v2", "es", _tables())[-1].startswith(
        "No están en la ejecución registrada: `triton-v2`")
    assert "float32_squares" not in "\n".join(includes("float32 squares, rows cublas triton-v2", "en", _tables()))
    assert includes("float32 squares, rows cublas cuda-v2", "en", {}) == []  # no run: nothing


def test_filling_a_page_is_idempotent_and_keeps_its_prose():
    page = ("Write down your prediction.\n\n??? note \"What we measured\"\n\n"
            "    <!-- results: gemm float32 squares, rows cublas cuda-v2 triton-v2 -->\n\n"
            "    <!-- results: gemm bfloat16 squares, rows cublas triton-v2 -->\n\n"
            "    <!-- results: gemm float32 squares, rows cublas triton-v2 -->\n\n"
            "    Read it against the bar.\n\nNext paragraph.\n")
    once = fill_page(page, "en", _tables())
    assert fill_page(once, "en", _tables()) == once
    assert once.count("Not in the recorded run: `triton-v2`") == 1  # said once for the three
    assert "    Read it against the bar.\n\nNext paragraph.\n" in once
    assert fill_page(once, "en", {}) == page  # without a run, only the placeholders stay


def _rungs_run() -> dict:
    """A rungs' run: every rung at 4096^3 only, cuBLAS its own, another date."""
    shape = (4096, 4096, 4096)
    recs = [_record(impl, "float32", shape, 50.0 * share)
            for impl, share in (("cublas", 1.0), ("cuda-v1", 0.12), ("cuda-v2", 0.16),
                                ("cuda-v4", 0.34), ("cuda", 0.8))]
    return {"op": "gemm", "gpu": "NVIDIA H200", "date": "2026-12-01T10:00:00+00:00",
            "commit": "def5678", "copy_gbps": 4270.0, "baseline": "cublas", "records": recs}


def test_rows_the_sweep_lacks_come_from_the_rungs_run_with_its_own_cublas_and_caption():
    rungs = table_files(_rungs_run())
    made = includes("float32 squares and decode, rows cublas cuda-v2 cuda-v4 cuda-v5", "en",
                    _tables(), "", rungs)
    lines = rungs["float32_squares.md"].splitlines()
    # cuda-v2 from the sweep (it has it); cuda-v4 from the rungs' run, beside that run's cuBLAS
    assert '--8<-- "results/h200/gemm/float32_squares.md:1:3,5:5"' in made
    assert '--8<-- "results/h200/gemm/rungs/float32_squares.md:1:3,6:6"' in made, made
    assert lines[2].startswith("| `cublas`") and lines[5].startswith("| `cuda-v4`")
    assert f'--8<-- "results/h200/gemm/rungs/float32_squares.md:{len(lines)}:{len(lines)}"' in made
    assert not any("rungs/float32_decode" in x for x in made)  # that run has no decode shapes
    # said missing: only what neither run has, once, though cuda-v4 lacks decode shapes
    assert made[-1] == "Not in the recorded run: `cuda-v5`; the command above times what is missing."
    assert includes("float32 squares, rows cublas cuda-v2", "en", _tables(), "", rungs) == \
        includes("float32 squares, rows cublas cuda-v2", "en", _tables())  # the sweep first


@pytest.mark.skipif(not (GEMM / "gemm.json").exists(), reason="results/h200/gemm/gemm.json is not committed yet")
def test_the_pages_includes_are_made_from_their_placeholders():
    """What the pages include below each placeholder is what fill_page makes from the committed
    tables (python3 scripts/rung_headers.py rewrites them)."""
    tables, rungs = read_tables(GEMM), read_tables(GEMM / "rungs")
    assert tables, "results/h200/gemm/ has its run but no tables"
    stale = [str(page.relative_to(DOCS)) for page in sorted(DOCS.rglob("*.md"))
             if (text := page.read_text(encoding="utf-8")) != fill_page(
                 text, "es" if page.name.endswith(".es.md") else "en", tables, rungs)]
    assert not stale, f"GEMM includes out of date on {stale}: python3 scripts/rung_headers.py rewrites them"


def test_the_rungs_run_is_among_the_recorded_runs(tmp_path, monkeypatch):
    """`results gemm --all` and `bench gemm` on a machine with no GPU show a rung from the rungs'
    run (results/<gpu>/gemm/rungs/gemm.json) where the standard sweep does not have it."""
    from phase24.harness import report
    from phase24.harness.ops import get

    (tmp_path / "h200" / "gemm" / "rungs").mkdir(parents=True)
    (tmp_path / "h200" / "gemm" / "gemm.json").write_text(json.dumps(synthetic_run()))
    (tmp_path / "h200" / "gemm" / "rungs" / "gemm.json").write_text(json.dumps(_rungs_run()))
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    runs = report.recorded(get("gemm"))
    assert [p.relative_to(tmp_path).as_posix() for p, _ in runs] == [
        "h200/gemm/gemm.json", "h200/gemm/rungs/gemm.json"]  # newest first


def test_a_group_wider_than_a_phone_is_split_into_tables_of_every_row():
    """Seven decode shapes make three tables of at most three shapes (COLUMNS), each with every
    row and the roofline's, one caption below them; a placeholder includes each table's header
    and the rows asked for, and the caption once."""
    run = synthetic_run()
    shapes7 = [(m, n, 4096) for m in (1, 16, 64) for n in (4096, 11008)] + [(16, 4096, 14336)]
    run["records"] = [r for r in run["records"] if r["M"] > 64] + [
        _record(impl, "float32", s, 10.0) for impl in ("cublas", "cuda", "triton") for s in shapes7]
    text = table(run, "float32", "decode")
    tables = [t for t in text.split("\n\n") if t.startswith("|")]
    assert [t.splitlines()[0].count("×") // 2 for t in tables] == [3, 3, 1]
    rows = [[line.split(" | ")[0] for line in t.splitlines()[2:]] for t in tables]
    assert rows[0] == rows[1] == rows[2] and rows[0][-1] == "| memory roofline", rows
    assert {"| `cublas`", "| `cuda`", "| `triton`"} <= set(rows[0])
    assert text.count("TFLOP/s") == 1 and not text.splitlines()[-1].startswith("|")
    made = includes("float32 decode, rows cublas triton and the memory roofline", "en",
                    {"float32_decode.md": text})
    lines = text.splitlines()
    spans = [m for m in made if m.strip()]
    assert len(spans) == 4 and spans[-1].endswith(f':{len(lines)}:{len(lines)}"'), made
    start = 0
    for spec, t in zip(spans, tables):
        head = lines.index(t.splitlines()[0], start) + 1
        start = head
        picked = [head + 1 + i for i, name in enumerate(rows[0], start=1)
                  if name in ("| `cublas`", "| `triton`", "| memory roofline")]
        want = [head, head + 1] + picked
        got = [n for part in spec.split(":", 1)[1].rstrip('"').split(",")
               for a, b in [part.split(":")] for n in range(int(a), int(b) + 1)]
        assert got == want, (spec, want)
