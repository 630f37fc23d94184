"""Loss curves as PNG files, for the training examples.

    from plot import save_loss_curve
    save_loss_curve("loss.png", losses, title="digits MLP")

With matplotlib installed (`pip install matplotlib`, pykern's `notebook` extra) the plot is
matplotlib's, drawn off-screen (the Agg backend), with axes, labels and the title. Without it
the curve is drawn with examples/png.py's writer alone: the same line on a white canvas inside
a frame, but no text (there is no font to draw it with).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import write_png  # noqa: E402

WIDTH, HEIGHT, MARGIN = 640, 400, 40
LINE = np.array([31, 119, 180], np.uint8)  # matplotlib's first colour, in both renderings
FRAME = np.array([64, 64, 64], np.uint8)


def save_loss_curve(path: str, losses: Sequence[float], title: str = "training loss",
                    xlabel: str = "step") -> str:
    """Writes the curve of `losses` (one value per step) to the PNG file `path`; returns which
    renderer drew it: "matplotlib", or "png" for the plain fallback without text."""
    values = np.asarray(losses, np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"save_loss_curve: losses must be a non-empty sequence of numbers, "
                         f"got shape {values.shape}")
    try:
        import matplotlib
    except ImportError:
        write_png(path, line_plot(values))
        return "png"
    matplotlib.use("Agg")  # off-screen: examples run on machines without a display
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    ax.plot(np.arange(1, values.size + 1), values, color=LINE / 255)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return "matplotlib"


def line_plot(values: np.ndarray, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """An (height, width, 3) uint8 image of `values` as a line inside a frame, the first value
    at the left edge, the smallest at the bottom: numpy only."""
    rgb = np.full((height, width, 3), 255, np.uint8)
    left, right, top, bottom = MARGIN, width - MARGIN, MARGIN, height - MARGIN
    rgb[top:bottom + 1, [left, right]] = FRAME
    rgb[[top, bottom], left:right + 1] = FRAME
    finite = values[np.isfinite(values)]
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    span = high - low if high > low else 1.0
    xs = left + np.linspace(0, 1, values.size) * (right - left) if values.size > 1 else \
        np.array([(left + right) / 2])
    # NaN and inf (a diverged run) are drawn at the edge of the finite range
    shown = np.clip(np.nan_to_num(values, nan=high, posinf=high, neginf=low), low, high)
    ys = bottom - (shown - low) / span * (bottom - top)
    # each segment sampled at one point per pixel of its longer side, so the line has no gaps
    for x0, y0, x1, y1 in zip(xs[:-1], ys[:-1], xs[1:], ys[1:]):
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 2
        t = np.linspace(0, 1, n)
        px = np.rint(x0 + t * (x1 - x0)).astype(int)
        py = np.rint(y0 + t * (y1 - y0)).astype(int)
        for d in (-1, 0, 1):  # three pixels thick, whichever way the segment runs
            rgb[np.clip(py + d, 0, height - 1), px] = LINE
            rgb[py, np.clip(px + d, 0, width - 1)] = LINE
    if values.size == 1:
        rgb[int(ys[0]) - 1:int(ys[0]) + 2, int(xs[0]) - 1:int(xs[0]) + 2] = LINE
    return rgb
