"""The benchmark's files: its JSON, and the plots made from it (never from numbers typed by
hand)."""

from __future__ import annotations

import json
from pathlib import Path

STYLE = {"torch": ("black", "--"), "triton": ("tab:green", "-"), "cuda": ("tab:red", "-"),
         "triton-naive": ("tab:olive", ":"), "cuda-naive": ("tab:gray", ":")}


def plot_bench(result: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from phase24.harness.bench import is_bulk

    bulk = [r for r in result["records"] if is_bulk(r["M"], r["N"])]
    dtypes = sorted({r["dtype"] for r in bulk}, reverse=True)
    impls = list(dict.fromkeys(r["impl"] for r in bulk))
    fig, axes = plt.subplots(1, max(1, len(dtypes)), figsize=(7 * max(1, len(dtypes)), 5),
                             sharey=True, squeeze=False)
    for ax, dt in zip(axes[0], dtypes):
        for impl in impls:
            rows = sorted((r for r in bulk if r["impl"] == impl and r["dtype"] == dt),
                          key=lambda r: r["N"])
            color, ls = STYLE.get(impl, (None, "-"))
            lw = 2.5 if impl in ("cuda", "triton", "torch") else 1.2
            ax.plot([r["N"] for r in rows], [r["gbps"] for r in rows], ls, color=color, lw=lw,
                    marker="o", ms=3, label=impl)
        ax.axhline(result["copy_gbps"], color="tab:blue", lw=1, alpha=0.7,
                   label=f"copy {result['copy_gbps']:.0f} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("N (row length); M = 2^28 / N")
        ax.set_title(f"softmax {dt}, {result['gpu']}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("GB/s (bytes read + written)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"commit {result['commit'][:10]}  {result['date']}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def save(result: dict, folder: Path, stem: str = "softmax") -> tuple[Path, Path]:
    """Write ``result`` as folder/stem.json and its plot as folder/stem.png."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path, plot_bench(result, folder / f"{stem}.png")
