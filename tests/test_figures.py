"""Every measured figure in the chapter's prose comes from the committed results.

A figure is a number with a unit (%, us or µs, ms, GB/s, TB/s; both ends of a range such as
94.3-98.7%), in the prose of any page (English and Spanish, decimal comma included), outside code
blocks, included files and link targets. It must equal, at the precision it is written with, a
value of the one benchmark run (results/h200/softmax.json: every record, the same-size copies,
the copy bandwidth; the installed peers' records among them), a summary statistic of that run (per
implementation and dtype over the bulk shapes: lowest, highest, median and geometric mean of the
% of copy; per implementation the geometric mean and lowest speed-up over torch), a GEMM
record's % of cuBLAS in the same run (results/h200/gemm/gemm.json), on the pages listed in
TUNER_RUNS a time of that tuner's run (cuBLAS's and each timed configuration's), a figure of a
recorded Nsight Compute summary (results/h200/profiles/*.json, results/h200/gemm/profiles/*.json),
or of the team's reference measurements (results/h200/reference-measurements.md). The few figures
that come from elsewhere are listed in ELSEWHERE with where they come from, and checked there.

This catches a figure left from an earlier run or typed by hand; it cannot prove that a figure
is quoted for the right shape (small whole percentages match some value by chance).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from functools import lru_cache
from pathlib import Path

import pytest

from test_docs import DOCS, ROOT, prose

RESULTS = ROOT / "results" / "h200"
UNIT = r"(?:%|us\b|µs|ms\b|GB/s|TB/s)"
NUMBER = r"\d+(?:[.,]\d+)?"
FIGURE = re.compile(rf"(?<![\w.,])({NUMBER})(?:\s?[–-]\s?({NUMBER}))?[ \u00a0]?({UNIT})")

# Figures that are not measurements of the committed run: (page, figure as written in English)
# -> a file or folder whose text holds the figure, or the arithmetic that gives it.
ELSEWHERE = {
    ("theory/02-from-naive-to-tiled", "503 µs"): 2**31 / 4.273e12 * 1e6,  # 2^31 B at 4273 GB/s
    ("theory/02-from-naive-to-tiled", "251 µs"): 2**30 / 4.273e12 * 1e6,
    ("theory/00-motivation", "251 µs"): 2**30 / 4.273e12 * 1e6,
    ("solutions/exercises", "2.8 µs"): 12 * 1000003 / 4.273e12 * 1e6,  # lab 00's vector add
    # cuBLAS in the session that profiled v10 (its log), beside the other profiles' cuBLAS
    ("solutions/profiles", "176.22 us"): "results/h200/gemm/profiles/profile-bf16-d9b8292.log",
    ("solutions/profiles", "176.22 µs"): "results/h200/gemm/profiles/profile-bf16-d9b8292.log",
    # the Hopper GEMM answers: v10 at 16 x 4096 x 4096, cuBLAS at 64 x 11008 x 4096 (bfloat16)
    ("solutions/exercises", "21.79 µs"): "results/h200/gemm/gemm.json",
    ("solutions/exercises", "33.8 µs"): "results/h200/gemm/gemm.json",
    # cuBLAS's ncu duration as a share of v11's at 4096^3 (their profiles)
    ("solutions/profiles", "89.3%"): 100 * 175.904 / 196.928,
}

# Pages that quote a tuner's run beside the benchmark's: page -> that run (under results/h200).
TUNER_RUNS = {
    "lab/02-gemm-ladder": "gemm/tune-cuda-v3.json",
    "lab/03-gemm-triton": "gemm/tune-triton-decode-f32.json",
    "solutions/profiles": "gemm/tune-cuda-v3.json",
}


def _numbers(obj) -> list[float]:
    if isinstance(obj, bool):
        return []
    if isinstance(obj, (int, float)):
        return [float(obj)]
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in _numbers(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in _numbers(x)]
    if isinstance(obj, str):  # ncu's own sentences ("... greater than 80.0% of ...")
        return [float(m) for m in re.findall(r"\d+(?:\.\d+)?", obj)]
    return []


def _run_statistics(run: dict) -> list[float]:
    out = []
    recs = run["records"]
    for impl in {r["impl"] for r in recs}:
        mine = [r for r in recs if r["impl"] == impl]
        for dtype in (None, "float32", "bfloat16"):
            p = [r["pct_copy"] for r in mine if r["M"] * r["N"] == 2**28
                 and dtype in (None, r["dtype"])]
            if p:
                out += [min(p), max(p), statistics.median(p), statistics.geometric_mean(p)]
        s = [r["speedup_vs_torch"] for r in mine if r.get("speedup_vs_torch")]
        if s:
            out += [100 * statistics.geometric_mean(s), 100 * min(s)]
    return out


@lru_cache(maxsize=None)
def sources() -> list[float]:
    values = []
    for path in (RESULTS / "softmax.json",):
        run = json.loads(path.read_text())
        values += _numbers(run["records"]) + _numbers(run["copy_same_size"]) + [run["copy_gbps"]]
        values += _run_statistics(run)
    gemm = json.loads((RESULTS / "gemm" / "gemm.json").read_text())["records"]
    values += [100 * r["speedup_vs_cublas"] for r in gemm if r.get("speedup_vs_cublas")]
    for path in sorted(RESULTS.glob("profiles/*.json")) + sorted(
            RESULTS.glob("gemm/profiles/*.json")):
        values += _numbers(json.loads(path.read_text()))
    text = (RESULTS / "reference-measurements.md").read_text()
    values += [float(m) for m in re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))]
    return values


@lru_cache(maxsize=None)
def tuner_times(key: str) -> list[float]:
    """cuBLAS's time and every timed configuration's in the tuner's run page ``key`` quotes."""
    if key not in TUNER_RUNS:
        return []
    shapes = json.loads((RESULTS / TUNER_RUNS[key]).read_text())["shapes"]
    return [x for s in shapes
            for x in [s["cublas_us"]] + [t["us"] for t in s["all"] if t.get("us")]]


def _decimals(written: str) -> int:
    return len(re.split(r"[.,]", written)[1]) if re.search(r"[.,]", written) else 0


def _found(written: str, values: list[float], unit: str = "") -> bool:
    v, d = float(written.replace(",", ".")), _decimals(written)
    scale = 1e-3 if unit == "ms" else 1.0  # the results hold microseconds
    return any(round(x * scale, d) == v for x in values)


def figures(text: str) -> list[tuple[str, str]]:
    """(number as written, unit) of every figure in the prose of a page's text."""
    found = []
    for m in FIGURE.finditer(prose(text)):
        found += [(n, m[3]) for n in (m[1], m[2]) if n]
    return found


def _elsewhere(key: str, written: str, unit: str) -> bool:
    where = ELSEWHERE.get((key, f"{written.replace(',', '.')}{' ' if unit != '%' else ''}{unit}"))
    if where is None:
        return False
    if isinstance(where, float):
        return _found(written, [where])
    path = ROOT / where
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return any(written.replace(",", ".") in f.read_text(errors="ignore") for f in files)


PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_comes_from_the_committed_results(page: Path):
    key = str(page.relative_to(DOCS / "phase-24-cuda-triton")).removesuffix(".md") \
        .removesuffix(".es") if page.is_relative_to(DOCS / "phase-24-cuda-triton") else page.name
    stray = [f"{n} {u}" for n, u in figures(page.read_text(encoding="utf-8"))
             if not _found(n, sources() + tuner_times(key), u) and not _elsewhere(key, n, u)]
    assert not stray, (f"{page.relative_to(ROOT)}: figures found in no committed result: "
                       f"{stray} (quote results/h200/softmax.json, or list the figure's source "
                       "in ELSEWHERE)")


def test_the_check_finds_a_figure_of_an_earlier_run():
    """8.5 us (cuda's GPU time at float32 8 x 131072 in the run of b1d2840) and 4245 GB/s (that
    run's copy) are in no committed result now; 8.4 us and 4273 GB/s (the snapshot's) are."""
    text = "cuda took 8.5 us beside a copy of 4245 GB/s; now 8,4\u00a0µs at 4273 GB/s.\n"
    stray = [f"{n}{u}" for n, u in figures(text) if not _found(n, sources(), u)]
    assert stray == ["8.5us", "4245GB/s"]
    assert math.isclose(ELSEWHERE[("theory/00-motivation", "251 µs")], 251.3, abs_tol=0.05)
    # GEMM: cuda-v10 at 4096^3 in bfloat16 ran at 86.6% of cuBLAS (87.6% in the run before),
    # its profile took 200.6 us; v3's tuner timed its 64 x 32 x 32 tile at 8856.74 us.
    text = "cuda-v10 reached 87.6% of cuBLAS (86.6 % in the run) in 200.7 us (200,6 µs).\n"
    assert [f"{n}{u}" for n, u in figures(text) if not _found(n, sources(), u)] == [
        "87.6%", "200.7us"]
    text = "v3 took 8.87 ms (8,86 ms).\n"  # its tuner timed 8856.74 us; only lab 02 quotes it
    times = sources() + tuner_times("lab/02-gemm-ladder")
    assert [f"{n}{u}" for n, u in figures(text) if not _found(n, times, u)] == ["8.87ms"]
    assert tuner_times("lab/01-gemm-naive") == []


def test_every_figure_listed_elsewhere_is_in_its_source():
    """An ELSEWHERE entry names a file or folder that holds its figure (or the arithmetic that
    gives it): a source that no longer says it fails here, not silently."""
    for (key, figure), where in ELSEWHERE.items():
        number, unit = re.match(rf"({NUMBER})\s?({UNIT})", figure).groups()
        assert _elsewhere(key, number, unit), (key, figure, where)
