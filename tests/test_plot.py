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
