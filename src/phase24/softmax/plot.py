"""Softmax's benchmark plot, made from its JSON (never from numbers typed by hand): GB/s against
the row length on the bulk shapes, each ladder rung by rung, then the entries side by side."""

from __future__ import annotations

from pathlib import Path

MAIN = {"torch": ("black", "--"), "cuda": ("tab:red", "-"), "triton": ("tab:green", "-")}


def panels(impls: list[str]) -> list[tuple[str, list[str]]]:
    """(title, implementations) of each column: each ladder rung by rung with its entry, then the
    entries side by side with torch and any peer (Liger-Kernel, QuACK) the run timed."""
    cuda = [i for i in impls if i.startswith("cuda")]
    triton = [i for i in impls if i.startswith("triton")]
    ours = set(cuda) | set(triton)
    return [(title, names) for title, names in (
        ("CUDA C ladder", cuda), ("Triton ladder", triton),
        ("side by side", [i for i in impls if i not in ours] + [i for i in ("cuda", "triton") if i in impls]),
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
    fig, axes = plt.subplots(len(dtypes), len(cols), figsize=(5.2 * len(cols), 3.6 * len(dtypes) + 1.6),
                             sharex=True, sharey=True, squeeze=False)
    for row, dt in enumerate(dtypes):
        for col, (title, names) in enumerate(cols):
            ax = axes[row][col]
            for impl in names:
                pts = sorted((r["N"], r["gbps"]) for r in bulk if r["impl"] == impl and r["dtype"] == dt)
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
    fig.suptitle(f"softmax on {result['gpu']}, {result['date'][:10]}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
