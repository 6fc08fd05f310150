"""Softmax's benchmark plots, made from its JSON (never from numbers typed by hand): GB/s against
the row length on the bulk shapes.

* plot_bench: the whole run, each ladder rung by rung, then the entries side by side (the full
  ladder, which the pages link to).
* plot_lab: a figure a lab shows, only that lab's rungs (at most six lines) in one data type: one
  panel drawn for a phone's column (600 px wide, 12 pt text, the legend below the axes), in the
  page's language. ``python -m phase24.softmax.plot`` draws every lab's figures, one per dtype,
  in English and Spanish (STEM.DTYPE.png, STEM.DTYPE.es.png), from the committed run
  (results/h200/softmax.json) into results/h200/; no GPU is needed.
"""

from __future__ import annotations

from pathlib import Path

from phase24.core.page_figure import TEXT_PT, page_axes, save_page

MAIN = {"torch": ("black", "--"), "cuda": ("tab:red", "-"), "triton": ("tab:green", "-")}


def panels(impls: list[str]) -> list[tuple[str, list[str]]]:
    """(title, implementations) of each column: each ladder rung by rung with its entry, then the
    entries side by side with torch and any peer (Liger-Kernel, QuACK) the run timed."""
    cuda = [i for i in impls if i.startswith("cuda")]
    triton = [i for i in impls if i.startswith("triton")]
    ours = set(cuda) | set(triton)
    return [(title, names) for title, names in (
        ("CUDA C ladder", cuda), ("Triton ladder", triton),
        ("side by side", [i for i in impls if i not in ours]
         + [i for i in ("cuda", "triton") if i in impls]),
    ) if names]


RUNG_COLORS = ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
               "tab:olive", "tab:cyan", "navy", "goldenrod", "teal", "black"]  # no red, no green
PEERS = {"liger": ("tab:purple", ":"), "quack": ("tab:orange", ":")}


def _style(impl: str, names: list[str]) -> dict:
    """The entries and torch stand out (thick), peers dotted, each rung its own colour."""
    if impl in MAIN or impl in PEERS:
        color, ls = MAIN.get(impl) or PEERS[impl]
        return dict(color=color, ls=ls, lw=2.4 if impl in MAIN else 1.8)
    rungs = [n for n in names if n not in MAIN]
    return dict(color=RUNG_COLORS[rungs.index(impl) % len(RUNG_COLORS)], ls="-", lw=1.2)


def plot_bench(result: dict, path: Path, is_bulk) -> Path:
    """GB/s against N on the bulk shapes (``is_bulk(m, n)``): a row per dtype, a column per panel,
    the copy as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    bulk = [r for r in result["records"] if is_bulk(r["M"], r["N"])]
    dtypes = sorted({r["dtype"] for r in bulk}, reverse=True) or ["float32"]
    cols = panels(list(dict.fromkeys(r["impl"] for r in bulk))) or [("", [])]
    fig, axes = plt.subplots(len(dtypes), len(cols), sharex=True, sharey=True, squeeze=False,
                             figsize=(5.2 * len(cols), 3.6 * len(dtypes) + 1.6))
    for row, dt in enumerate(dtypes):
        for col, (title, names) in enumerate(cols):
            ax = axes[row][col]
            for impl in names:
                pts = sorted((r["N"], r["gbps"]) for r in bulk
                             if r["impl"] == impl and r["dtype"] == dt)
                if pts:
                    ax.plot(*zip(*pts), marker="o", ms=2.5, label=impl, **_style(impl, names))
            ax.axhline(result["copy_gbps"], color="tab:blue", lw=1, alpha=0.6,
                       label=f"copy {result['copy_gbps']:.0f} GB/s")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{title}, {dt}", fontsize=10)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel("GB/s (bytes read + written)")
            if row == len(dtypes) - 1:
                ax.set_xlabel("N (row length); M = 2^28 / N")
                ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.suptitle(f"softmax on {result['gpu']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# The figures the labs show: (file stem, the implementations, what the title says it shows).
LAB_PLOTS = {
    "softmax_lab02": (["cuda-naive", "cuda-v1", "cuda-v2", "cuda-v3", "cuda-v4", "cuda-v6"],
                      {"en": "lab 02's rungs", "es": "los peldaños del laboratorio 02"}),
    "softmax_lab03": (["torch", "cuda", "triton-naive", "triton-v1", "triton-v2", "triton"],
                      {"en": "lab 03's Triton rungs beside cuda and torch",
                       "es": "los peldaños Triton del laboratorio 03 junto a cuda y torch"}),
    "softmax_hopper_cuda": (["cuda-v5", "cuda-v7", "cuda-v8", "cuda-v9", "cuda-v10", "cuda"],
                            {"en": "the cluster rungs",
                             "es": "los peldaños con clusters"}),
    "softmax_hopper_triton": (["triton-v2", "triton-v3", "triton-v4", "triton-v5", "triton",
                               "cuda"],
                              {"en": "the Triton rungs for long rows",
                               "es": "los peldaños Triton para filas largas"}),
}
MAX_LINES = 6
DTYPES = ("float32", "bfloat16")
WORDS = {
    "en": {"on": "on", "gbps": "GB/s (bytes read + written)", "n": "N (row length), M = 2^28 / N",
           "copy": "copy"},
    "es": {"on": "en", "gbps": "GB/s (bytes leídos + escritos)",
           "n": "N (longitud de fila), M = 2^28 / N", "copy": "copia"},
}
HEIGHT_IN = 4.8  # a lab figure's height (core/page_figure.py: its width and text)


def _n_label(n: float, _pos=None) -> str:
    """128, 256, 512, 1K ... 256K: plain numbers, as large as the tick's text (no exponents)."""
    return f"{n / 1024:.0f}K" if n >= 1024 else f"{n:.0f}"


def plot_lab(result: dict, path: Path, is_bulk, impls: list[str], what: str = "",
             lang: str = "en", dtype: str = "float32") -> Path:
    """GB/s against N on the bulk shapes for a few implementations (at most MAX_LINES) in one
    dtype: one panel, the copy as a line, the legend below; labels in ``lang`` (en or es). The
    title says the GPU and the dtype, never the run's date or commit. The y axis is the same for
    every dtype of a figure (0 to the highest of them), as the side-by-side panels had."""
    if len(impls) > MAX_LINES:
        raise ValueError(f"{len(impls)} lines in one panel; a lab's figure has at most {MAX_LINES}")
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    w = WORDS[lang]
    bulk = [r for r in result["records"] if is_bulk(r["M"], r["N"]) and r["impl"] in impls]
    title = f"softmax {w['on']} {result['gpu']}, {dtype}"
    fig, ax = page_axes(f"{title}:\n{what}" if what else title, HEIGHT_IN)
    for impl in impls:
        pts = sorted((r["N"], r["gbps"]) for r in bulk if r["impl"] == impl and r["dtype"] == dtype)
        if pts:
            ax.plot(*zip(*pts), marker="o", ms=4, label=impl, **_lab_style(impl, impls))
    copy = result["copy_gbps"]
    ax.axhline(copy, color="tab:blue", lw=1.2, alpha=0.6, ls="-.",
               label=f"{w['copy']} {copy:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ns = sorted({r["N"] for r in bulk}) or [128, 262144]
    ax.xaxis.set_major_locator(FixedLocator(ns[::2] if len(ns) > 7 else ns))
    ax.xaxis.set_major_formatter(FuncFormatter(_n_label))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0, 1.05 * max([copy] + [r["gbps"] for r in bulk]))
    ax.set_xlabel(w["n"], fontsize=TEXT_PT)
    ax.set_ylabel(w["gbps"], fontsize=TEXT_PT)
    return save_page(fig, ax, path)


def _lab_style(impl: str, names: list[str]) -> dict:
    if impl in MAIN:
        color, ls = MAIN[impl]
        return dict(color=color, ls=ls, lw=2.6)
    rungs = [n for n in names if n not in MAIN]
    return dict(color=RUNG_COLORS[rungs.index(impl) % len(RUNG_COLORS)], ls="-", lw=1.8)


def lab_png(folder: Path, stem: str, dtype: str, lang: str) -> Path:
    """STEM.DTYPE.png (English) or STEM.DTYPE.es.png (Spanish)."""
    return folder / f"{stem}.{dtype}{'.es' if lang == 'es' else ''}.png"


def plot_labs(result: dict, folder: Path, is_bulk) -> list[Path]:
    """Every lab's figures, one per dtype, in both languages (lab_png names them)."""
    dtypes = [d for d in DTYPES if any(r["dtype"] == d for r in result["records"])]
    return [plot_lab(result, lab_png(folder, stem, dt, lang), is_bulk, impls, what[lang], lang, dt)
            for stem, (impls, what) in LAB_PLOTS.items() for dt in dtypes for lang in ("en", "es")]


if __name__ == "__main__":
    import json

    from phase24.softmax.shapes import is_bulk

    results = Path(__file__).resolve().parents[3] / "results" / "h200"
    for png in plot_labs(json.loads((results / "softmax.json").read_text()), results, is_bulk):
        print(png)
