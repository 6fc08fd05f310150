"""Softmax's benchmark plot (softmax/plot.py), drawn on a CPU from a committed run."""

import json
from pathlib import Path

from phase24.softmax.plot import panels, plot_bench
from phase24.softmax.spec import is_bulk

RUN = Path(__file__).resolve().parents[1] / "results" / "h200" / "softmax.json"


def test_each_ladder_has_its_panel_and_the_entries_meet_torch_and_the_peers():
    impls = ["torch", "cuda-naive", "cuda-v1", "cuda", "triton-naive", "triton", "liger"]
    assert panels(impls) == [("CUDA C ladder", ["cuda-naive", "cuda-v1", "cuda"]),
                             ("Triton ladder", ["triton-naive", "triton"]),
                             ("side by side", ["torch", "liger", "cuda", "triton"])]
    assert panels(["torch"]) == [("side by side", ["torch"])]  # a run of torch alone


def test_the_committed_run_plots(tmp_path):
    png = plot_bench(json.loads(RUN.read_text()), tmp_path / "softmax.png", is_bulk)
    assert "commit" not in plot_title(tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 50_000


def plot_title(tmp_path) -> str:
    """The title the plot of the committed run gets (its GPU and date, no commit)."""
    import matplotlib.pyplot as plt

    from phase24.softmax import plot

    seen = []
    real = plt.Figure.suptitle
    plt.Figure.suptitle = lambda self, text, **kw: seen.append(text) or real(self, text, **kw)
    try:
        plot.plot_bench(json.loads(RUN.read_text()), tmp_path / "again.png", is_bulk)
    finally:
        plt.Figure.suptitle = real
    return seen[0]


def _drawn(monkeypatch, tmp_path, impls, lang):
    """The figure plot_lab draws (captured as it closes it)."""
    import matplotlib.pyplot as plt

    from phase24.softmax import plot

    seen = []
    real = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: seen.append(fig) or real(fig))
    plot.plot_lab(json.loads(RUN.read_text()), tmp_path / f"lab.{lang}.png", is_bulk, impls, "x", lang)
    return seen[0]


def test_a_lab_figure_has_at_most_six_lines_a_panel_and_names_the_gpu_only(monkeypatch, tmp_path):
    from phase24.softmax.plot import LAB_PLOTS, MAX_LINES, plot_lab

    run = json.loads(RUN.read_text())
    for stem, (impls, _) in LAB_PLOTS.items():
        assert len(impls) <= MAX_LINES == 6, stem
        fig = _drawn(monkeypatch, tmp_path, impls, "en")
        title = fig._suptitle.get_text()
        assert run["gpu"] in title and run["date"][:10] not in title and run["commit"] not in title
        for ax in fig.axes:
            rungs = [line for line in ax.get_lines() if not line.get_label().startswith("copy")]
            assert len(rungs) <= MAX_LINES, (stem, ax.get_title())
            assert ax.xaxis.label.get_fontsize() >= 11  # readable at page width (tests of the site: 0.55 scale)
    try:
        plot_lab(run, tmp_path / "seven.png", is_bulk, ["torch"] + LAB_PLOTS["softmax_lab02"][0])
    except ValueError as e:
        assert "at most 6" in str(e)
    else:
        raise AssertionError("a figure of seven lines was drawn")


def test_a_lab_figure_speaks_the_page_language(monkeypatch, tmp_path):
    fig = _drawn(monkeypatch, tmp_path, ["torch", "cuda"], "es")
    texts = [fig._suptitle.get_text()] + [t for ax in fig.axes for t in (ax.get_xlabel(), ax.get_ylabel())]
    texts += [t.get_text() for t in fig.legends[0].get_texts()]
    joined = " ".join(texts)
    assert "softmax en NVIDIA H200" in joined and "longitud de fila" in joined and "copia" in joined
    assert "row length" not in joined and " on " not in joined


def test_every_lab_figure_is_committed_in_both_languages():
    from phase24.softmax.plot import LAB_PLOTS

    for stem in LAB_PLOTS:
        for suffix in ("", ".es"):
            png = RUN.parent / f"{stem}{suffix}.png"
            assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
