"""GEMM's benchmark plots, made from its JSON (never from numbers typed by hand): TFLOP/s of each
implementation on every shape, cuBLAS drawn beside each ladder as the ceiling.

* plot_bench: the whole run on one figure, a row per dtype and a column per ladder (CUDA C,
  Triton): results/h200/gemm/gemm.png and the rungs' results/h200/gemm/rungs/gemm.png, which the
  pages link to.
* plot_page: a figure a page shows, one ladder in one dtype (at most six lines besides cuBLAS): one
  panel drawn for a phone's column (600 px wide, 12 pt text, the legend below the axes).
  ``python -m phase24.gemm.plot`` draws them (gemm.DTYPE.LADDER.png) from the committed run
  (results/h200/gemm/gemm.json) into results/h200/gemm/; no GPU is needed.
"""

from __future__ import annotations

from pathlib import Path

from phase24.core.page_figure import TEXT_PT, page_axes, save_page

COLORS = ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
          "tab:olive", "tab:cyan", "navy", "goldenrod"]
LADDERS = (("cuda", "CUDA C ladder"), ("triton", "Triton ladder"))
MAX_LINES = 6  # a page's panel, cuBLAS aside
HEIGHT_IN = 6.2  # a page figure's height, room for the shapes' labels (core/page_figure.py)


def _runs(result: dict):
    """(records with a time, dtypes, shapes (MxNxK), implementations,
    {(impl, dtype, shape): TFLOP/s})."""
    recs = [r for r in result["records"] if r.get("tflops") is not None]
    shapes = list(dict.fromkeys(f"{r['M']}x{r['N']}x{r['K']}" for r in recs))
    value = {(r["impl"], r["dtype"], f"{r['M']}x{r['N']}x{r['K']}"): r["tflops"] for r in recs}
    dtypes = list(dict.fromkeys(r["dtype"] for r in recs))
    return recs, dtypes, shapes, list(dict.fromkeys(r["impl"] for r in recs)), value


def _style(impl: str, k: int) -> dict:
    if impl == "cublas":
        return dict(color="black", lw=2.4, ls="--")
    return dict(color=COLORS[k % len(COLORS)], lw=1.4 + (impl in ("cuda", "triton")))


def plot_bench(result: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs, dtypes, shapes, impls, value = _runs(result)
    dtypes = dtypes or ["float32"]
    ladders = [(title, [i for i in impls if i.startswith(prefix)]) for prefix, title in LADDERS]
    ladders = [(t, names) for t, names in ladders if names] or [("", [])]
    fig, axes = plt.subplots(len(dtypes), len(ladders), squeeze=False, sharey="row",
                             figsize=(6.5 * len(ladders), 4.2 * len(dtypes)))
    for row, dt in enumerate(dtypes):
        for col, (title, names) in enumerate(ladders):
            ax = axes[row][col]
            for k, impl in enumerate(["cublas", *names]):
                ys = [value.get((impl, dt, s)) for s in shapes]
                ax.plot(range(len(shapes)), [y if y is not None else float("nan") for y in ys],
                        marker="o", ms=3, label=impl, **_style(impl, k))
            ax.set_title(f"{title}, {dt}", fontsize=11)
            ax.set_xticks(range(len(shapes)), shapes, rotation=70, fontsize=7)
            ax.set_ylabel("TFLOP/s")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle(f"GEMM on {result.get('gpu', '?')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _shape_label(shape: str) -> str:
    """4096³ for a cube, 64×4096×14336 otherwise."""
    m, n, k = shape.split("x")
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def plot_page(result: dict, path: Path, dtype: str, ladder: str) -> Path:
    """TFLOP/s of cuBLAS and of the ``ladder`` ("cuda" or "triton") implementations on every shape
    in one dtype: one panel, the legend below it. The title says the GPU, the dtype and the
    ladder, never the run's date or commit."""
    _, _, shapes, impls, value = _runs(result)
    names = [i for i in impls if i.startswith(ladder) and any(
        (i, dtype, s) in value for s in shapes)]
    if len(names) > MAX_LINES:
        raise ValueError(f"{len(names)} lines besides cuBLAS in one panel; at most {MAX_LINES}")
    title = dict(LADDERS)[ladder]
    fig, ax = page_axes(f"GEMM on {result.get('gpu', '?')}, {dtype}:\n{title}", HEIGHT_IN)
    for k, impl in enumerate(["cublas", *names]):
        ys = [value.get((impl, dtype, s)) for s in shapes]
        ax.plot(range(len(shapes)), [y if y is not None else float("nan") for y in ys],
                marker="o", ms=4, label=impl, **_style(impl, k))
    ax.set_xticks(range(len(shapes)), [_shape_label(s) for s in shapes], rotation=90,
                  fontsize=TEXT_PT)
    ax.set_xlabel("shape M×N×K", fontsize=TEXT_PT)
    ax.set_ylabel("TFLOP/s", fontsize=TEXT_PT)
    ax.set_ylim(bottom=0)
    return save_page(fig, ax, path)


def page_png(folder: Path, dtype: str, ladder: str) -> Path:
    return folder / f"gemm.{dtype}.{ladder}.png"


def plot_pages(result: dict, folder: Path) -> list[Path]:
    """Every page figure of the run: one per dtype and ladder (page_png names them)."""
    _, dtypes, _, impls, _ = _runs(result)
    return [plot_page(result, page_png(folder, dt, ladder), dt, ladder)
            for dt in dtypes for ladder, _ in LADDERS if any(i.startswith(ladder) for i in impls)]


if __name__ == "__main__":
    import json

    folder = Path(__file__).resolve().parents[3] / "results" / "h200" / "gemm"
    for png in plot_pages(json.loads((folder / "gemm.json").read_text()), folder):
        print(png)
