"""The benchmark plots (softmax/plot.py, gemm/plot.py), drawn on a CPU from the committed runs.

Every plot a page shows is one panel drawn for a phone's column (page_problems): one axes, at most
620 px wide (a 400 px phone shows it at >= 0.55 of its width, scripts/check_site_browser.py's
bar, even in a reveal's 342 px column; the column outside a reveal is 368 px), every text at
least 12 pt (>= 9 px there), the legend outside the axes, at most six lines besides cuBLAS or the
copy, and a title that names the GPU and the dtype, never a date, a commit or a path. The
whole-sweep figures (softmax.png, gemm.png, the rungs' gemm.png) are only linked, never shown.
"""

import json
import re
import struct
from pathlib import Path

import pytest

from phase24.gemm import plot as gemm_plot
from phase24.softmax import plot as softmax_plot
from phase24.softmax.plot import LAB_PLOTS, MAX_LINES, panels, plot_bench
from phase24.softmax.spec import is_bulk

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "h200"
RUN = RESULTS / "softmax.json"
GEMM_RUN = RESULTS / "gemm" / "gemm.json"
GEMM_RUNGS = RESULTS / "gemm" / "rungs" / "gemm.json"
MAX_WIDTH_PX, MIN_TEXT_PT = 620, 12
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
SHOWN = re.compile(r"!\[[^\]]*\]\((?:\.\./)+assets/(results/[^)]+\.png)\)")  # an inline image
LINKED = re.compile(r"(?<!!)\[[^\]]*\]\((?:\.\./)+assets/(results/[^)]+\.png)\)")  # a link to one


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def page_problems(fig, png: Path, run: dict, dtype: str) -> list[str]:
    """What breaks the rules of a page's plot ``fig`` (saved as ``png``) of ``run`` in ``dtype``."""
    from matplotlib.text import Text

    out = []
    if len(fig.axes) != 1:
        out.append(f"{len(fig.axes)} axes, not one panel")
    width, _ = png_size(png)
    if width > MAX_WIDTH_PX:
        out.append(f"{width} px wide (at most {MAX_WIDTH_PX})")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # a closed figure has lost its canvas: lay it out again
    canvas.draw()
    renderer = canvas.get_renderer()
    small = sorted({f"{t.get_text()!r} at {t.get_fontsize()} pt" for t in fig.findobj(Text)
                    if t.get_visible() and t.get_text().strip() and t.get_fontsize() < MIN_TEXT_PT})
    out += [f"text {s}" for s in small[:3]]
    ax = fig.axes[0]
    legends = [*fig.legends, *([ax.get_legend()] if ax.get_legend() else [])]
    if not legends:
        out.append("no legend")
    for legend in legends:
        if legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)):
            out.append("the legend overlaps the axes (it hides the lines)")
        lines = [t.get_text() for t in legend.get_texts()]
        drawn = [t for t in lines if t != "cublas" and not t.startswith(("copy", "copia"))]
        if len(drawn) > MAX_LINES:
            out.append(f"{len(drawn)} lines besides cuBLAS or the copy (at most {MAX_LINES})")
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(),
             *ax.get_yticklabels(), *(t for legend in legends for t in legend.get_texts())]
    page = fig.bbox.padded(1)
    cut = [t.get_text() for t in texts if t.get_text().strip() and not all(
        page.contains(x, y) for x, y in t.get_window_extent(renderer).corners())]
    if cut:
        out.append(f"text cut off at the figure's edge: {cut[:3]}")
    title = " ".join(t.get_text() for t in (ax.title, fig._suptitle) if t is not None)
    if run["gpu"] not in title or dtype not in title:
        out.append(f"the title {title!r} does not name the GPU and the dtype")
    if DATE.search(title) or run["commit"][:7] in title or re.search(r"results/|\.json", title):
        out.append(f"the title {title!r} names a date, a commit or a path")
    return out


def _drawn(monkeypatch, draw):
    """The figures ``draw()`` makes (captured as the plot closes each) and what it returns."""
    import matplotlib.pyplot as plt

    seen = []
    real = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: seen.append(fig) or real(fig))
    return seen, draw()


def test_each_ladder_has_its_panel_and_the_entries_meet_torch_and_the_peers():
    impls = ["torch", "cuda-naive", "cuda-v1", "cuda", "triton-naive", "triton", "liger"]
    assert panels(impls) == [("CUDA C ladder", ["cuda-naive", "cuda-v1", "cuda"]),
                             ("Triton ladder", ["triton-naive", "triton"]),
                             ("side by side", ["torch", "liger", "cuda", "triton"])]
    assert panels(["torch"]) == [("side by side", ["torch"])]  # a run of torch alone


def test_the_whole_sweep_plots_with_no_commit_in_its_title(monkeypatch, tmp_path):
    run = json.loads(RUN.read_text())
    figs, png = _drawn(monkeypatch, lambda: plot_bench(run, tmp_path / "softmax.png", is_bulk))
    assert run["commit"][:7] not in figs[0]._suptitle.get_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 50_000


def test_every_lab_figure_is_one_panel_drawn_for_a_phone(monkeypatch, tmp_path):
    run = json.loads(RUN.read_text())
    figs, pngs = _drawn(monkeypatch, lambda: softmax_plot.plot_labs(run, tmp_path, is_bulk))
    assert len(pngs) == len(LAB_PLOTS) * 2 * 2 == len(figs)  # a PNG per lab, dtype and language
    problems = []
    for fig, png in zip(figs, pngs):
        dtype = png.name.split(".")[1]
        problems += [f"{png.name}: {p}" for p in page_problems(fig, png, run, dtype)]
    assert not problems, "\n".join(problems)


def test_every_gemm_page_figure_is_one_panel_drawn_for_a_phone(monkeypatch, tmp_path):
    run = json.loads(GEMM_RUN.read_text())
    figs, pngs = _drawn(monkeypatch, lambda: gemm_plot.plot_pages(run, tmp_path))
    assert [p.name for p in pngs] == [f"gemm.{dt}.{ladder}.png" for dt in ("float32", "bfloat16")
                                      for ladder in ("cuda", "triton")]
    problems = [f"{png.name}: {p}" for fig, png in zip(figs, pngs)
                for p in page_problems(fig, png, run, png.name.split(".")[1])]
    assert not problems, "\n".join(problems)


def test_the_rules_catch_a_wide_figure_of_two_panels_with_small_text_and_a_dated_title(tmp_path):
    """The planted bugs: what the lab figures were before (two panels side by side, 1000 px, 11 pt
    ticks, the legend on the lines, the date in the title) fails each rule."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = json.loads(RUN.read_text())
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), dpi=100)
    for ax in axes:
        for k in range(7):
            ax.plot([1, 2, 3], [k, k + 1, k + 2], label=f"cuda-v{k}")
        ax.tick_params(labelsize=11)
    axes[0].legend(loc="center")
    axes[0].set_title(f"softmax on {run['gpu']}, {run['date'][:10]}, float32 " + "x" * 120)
    fig.savefig(tmp_path / "bad.png", dpi=100)
    found = " | ".join(page_problems(fig, tmp_path / "bad.png", run, "float32"))
    for what in ("2 axes", "1000 px wide", "at 11.0 pt", "overlaps the axes", "7 lines",
                 "cut off", "names a date"):
        assert what in found, (what, found)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.6, 4.4), dpi=100)
    ax.set_title("softmax", fontsize=12)
    fig.savefig(tmp_path / "bare.png", dpi=100)
    found = " | ".join(page_problems(fig, tmp_path / "bare.png", run, "bfloat16"))
    assert "no legend" in found and "does not name the GPU and the dtype" in found, found
    plt.close(fig)


def test_a_panel_has_at_most_six_lines():
    run = json.loads(RUN.read_text())
    for stem, (impls, _) in LAB_PLOTS.items():
        assert len(impls) <= MAX_LINES == 6, stem
    with pytest.raises(ValueError, match="at most 6"):
        softmax_plot.plot_lab(run, Path("seven.png"), is_bulk,
                              ["torch"] + LAB_PLOTS["softmax_lab02"][0])
    rungs = json.loads(GEMM_RUNGS.read_text())  # every CUDA rung: a figure to link, not to show
    with pytest.raises(ValueError, match="at most 6"):
        gemm_plot.plot_page(rungs, Path("rungs.png"), "bfloat16", "cuda")


def test_a_lab_figure_speaks_the_page_language(monkeypatch, tmp_path):
    run = json.loads(RUN.read_text())
    figs, _ = _drawn(monkeypatch, lambda: softmax_plot.plot_lab(
        run, tmp_path / "lab.es.png", is_bulk, ["torch", "cuda"], "x", "es", "bfloat16"))
    ax = figs[0].axes[0]
    texts = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    texts += [t.get_text() for t in figs[0].legends[0].get_texts()]
    joined = " ".join(texts)
    assert "softmax en NVIDIA H200, bfloat16" in joined and "longitud de fila" in joined
    assert "copia" in joined and "row length" not in joined and " on " not in joined


def _page_images() -> tuple[set[str], set[str]]:
    """The result PNGs the pages show inline, and those they only link to."""
    shown, linked = set(), set()
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        shown |= set(SHOWN.findall(text))
        linked |= set(LINKED.findall(text))
    return shown, linked


def test_every_plot_a_page_shows_is_a_committed_one_panel_figure():
    """Each inline plot is one the page plots draw (one panel, <= 620 px wide); the whole-sweep
    figures are links to open, never inline."""
    run, gemm = json.loads(RUN.read_text()), json.loads(GEMM_RUN.read_text())
    drawn = {f"results/h200/{softmax_plot.lab_png(Path(), stem, dt, lang).name}"
             for stem in LAB_PLOTS for dt in softmax_plot.DTYPES for lang in ("en", "es")}
    drawn |= {f"results/h200/gemm/{gemm_plot.page_png(Path(), dt, ladder).name}"
              for dt in ("float32", "bfloat16") for ladder in ("cuda", "triton")}
    shown, linked = _page_images()
    assert shown and shown <= drawn, sorted(shown - drawn)
    for name in sorted(shown):
        assert png_size(ROOT / name)[0] <= MAX_WIDTH_PX, name
    whole = {"results/h200/softmax.png", "results/h200/gemm/gemm.png",
             "results/h200/gemm/rungs/gemm.png"}
    assert not shown & whole and whole <= linked
    for name in sorted(linked - whole):
        assert name in shown, f"{name}: a link to a plot that no page shows"
    assert run["gpu"] and gemm["gpu"]


def test_every_page_figure_is_committed_at_the_size_the_plot_draws(tmp_path):
    """The committed PNGs are the ones the plots draw from the committed runs (same names, same
    size in pixels; `python -m phase24.softmax.plot` and `python -m phase24.gemm.plot` redraw
    them), and no figure of the multi-panel lab plots is left behind."""
    drawn = softmax_plot.plot_labs(json.loads(RUN.read_text()), tmp_path, is_bulk)
    (tmp_path / "gemm").mkdir()
    drawn += gemm_plot.plot_pages(json.loads(GEMM_RUN.read_text()), tmp_path / "gemm")
    for png in drawn:
        committed = RESULTS / png.relative_to(tmp_path)
        assert committed.is_file() and png_size(committed) == png_size(png), committed
    for stem in LAB_PLOTS:  # the side-by-side figures these replace
        assert not (RESULTS / f"{stem}.png").exists() and not (RESULTS / f"{stem}.es.png").exists()
