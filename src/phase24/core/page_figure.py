"""A figure that a page of the chapter shows: one panel drawn for a phone's column, the same for
every operation. 600 px wide at 100 dpi, so that a 400 px phone shows it at 0.57 of its width even
inside a reveal (a 342 px column; 368 px outside one); 12 pt text is 17 px in the PNG, 9.5 px on
that phone; the legend below the axes, outside the plotted lines."""

from __future__ import annotations

from pathlib import Path

WIDTH_IN, DPI, TEXT_PT = 6.0, 100, 12


def page_axes(title: str, height: float):
    """A one-panel figure ``height`` inches tall, its layout fitted when it is saved."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    ax.set_title(title, fontsize=TEXT_PT)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=TEXT_PT)
    return fig, ax


def save_page(fig, ax, path: Path) -> Path:
    """The legend below the axes (3 columns fit 600 px), then the PNG at its natural size (no
    tight bounding box, which would change the width)."""
    import matplotlib.pyplot as plt

    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=TEXT_PT,
               frameon=False, handlelength=1.8, columnspacing=1.2)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
