"""GEMM's benchmark plot, made from its JSON: TFLOP/s of every implementation on every shape, a
row per dtype and a column per ladder (CUDA C, Triton), cuBLAS drawn in each as the ceiling."""

from __future__ import annotations

from pathlib import Path

COLORS = ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
          "tab:olive", "tab:cyan", "navy", "goldenrod"]


def plot_bench(result: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = [r for r in result["records"] if r.get("tflops") is not None]
    dtypes = list(dict.fromkeys(r["dtype"] for r in recs)) or ["float32"]
    shapes = list(dict.fromkeys(f"{r['M']}x{r['N']}x{r['K']}" for r in recs))
    impls = list(dict.fromkeys(r["impl"] for r in recs))
    ladders = [(title, [i for i in impls if i.startswith(prefix)])
               for title, prefix in (("CUDA C ladder", "cuda"), ("Triton ladder", "triton"))]
    ladders = [(t, names) for t, names in ladders if names] or [("", [])]
    fig, axes = plt.subplots(len(dtypes), len(ladders), squeeze=False, sharey="row",
                             figsize=(6.5 * len(ladders), 4.2 * len(dtypes)))
    value = {(r["impl"], r["dtype"], f"{r['M']}x{r['N']}x{r['K']}"): r["tflops"] for r in recs}
    for row, dt in enumerate(dtypes):
        for col, (title, names) in enumerate(ladders):
            ax = axes[row][col]
            for k, impl in enumerate(["cublas", *names]):
                ys = [value.get((impl, dt, s)) for s in shapes]
                style = dict(color="black", lw=2.4, ls="--") if impl == "cublas" else \
                    dict(color=COLORS[k % len(COLORS)], lw=1.4 + (impl in ("cuda", "triton")))
                ax.plot(range(len(shapes)), [y if y is not None else float("nan") for y in ys],
                        marker="o", ms=3, label=impl, **style)
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
