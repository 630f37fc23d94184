"""examples/train_mlp.py trains an MLP on the digits to the accuracy it promises, through
autograd, pk.nn and pk.optim on the device, and `--plot` writes its loss curve as a PNG
(examples/plot.py, with matplotlib and with the numpy-only fallback); its --help is whole and
states every default."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from example_help import check_help

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_digits_mlp_reaches_95_percent(tmp_path):
    pytest.importorskip("sklearn", reason="the example reads scikit-learn's digits")
    curve = tmp_path / "loss.png"
    done = subprocess.run([sys.executable, "examples/train_mlp.py", "--epochs", "12",
                           "--plot", str(curve)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", done.stdout)]
    assert len(losses) >= 2 and losses[-1] < losses[0], done.stdout
    accuracy = float(re.search(r"test accuracy (\d\.\d+)", done.stdout).group(1))
    assert accuracy >= 0.95, done.stdout
    # 1,437 training images in batches of 64: 23 steps an epoch
    assert f"loss curve of {12 * 23} steps written to {curve}" in done.stdout, done.stdout
    assert png_size(curve) == (640, 400)


def decode_rgb_png(path: Path) -> np.ndarray:
    """The pixels of an 8-bit RGB PNG with unfiltered rows, as examples/png.py writes."""
    data = path.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    start = data.index(b"IDAT") + 4
    length = struct.unpack(">I", data[start - 8:start - 4])[0]
    rows = np.frombuffer(zlib.decompress(data[start:start + length]), np.uint8)
    rows = rows.reshape(height, 1 + 3 * width)
    assert not rows[:, 0].any()  # filter type 0 on every row
    return rows[:, 1:].reshape(height, width, 3)


def test_loss_curve_without_matplotlib_is_a_line_through_the_values(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import plot
    finally:
        sys.path.remove(str(ROOT / "examples"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    losses = [2.0, 1.0, 0.5, 0.25, 0.0]
    path = tmp_path / "curve.png"
    assert plot.save_loss_curve(str(path), losses) == "png"
    rgb = decode_rgb_png(path)
    assert rgb.shape == (plot.HEIGHT, plot.WIDTH, 3)
    line = np.all(rgb == plot.LINE, axis=-1)
    left, right = plot.MARGIN, plot.WIDTH - plot.MARGIN
    top, bottom = plot.MARGIN, plot.HEIGHT - plot.MARGIN
    for k, value in enumerate(losses):  # each point lies on the line, scaled into the frame
        x = round(left + k / (len(losses) - 1) * (right - left))
        y = round(bottom - value / 2.0 * (bottom - top))
        assert line[y, x], (k, value)
    assert not line[top + 5, right - 5] and not line[bottom - 5, left + 5]
    with pytest.raises(ValueError, match="non-empty"):
        plot.save_loss_curve(str(path), [])


def test_help_is_whole_and_states_the_defaults():
    check_help("examples/train_mlp.py")
