"""examples/train_gpt.py trains its character-level transformer (loss going down, through
causal attention, layer norm, the MLP and AdamW on the device), prints a generated sample and
writes the loss curve; and once with pk.autocast."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _train(tmp_path: Path, *extra: str) -> tuple[str, list[float], Path]:
    plot = tmp_path / "loss.png"
    done = subprocess.run([sys.executable, "examples/train_gpt.py", "--size", "tiny",
                           "--steps", "40", "--log-every", "10", "--sample", "30",
                           "--chars", "200000", "--plot", str(plot), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    losses = [float(v) for v in re.findall(r"step +\d+ +loss (\d+\.\d+)", done.stdout)]
    return done.stdout, losses, plot


def test_the_char_gpt_learns_and_writes_its_loss_curve(tmp_path):
    out, losses, plot = _train(tmp_path)
    assert len(losses) >= 4 and losses[-1] < losses[0] - 0.5, out  # from ln(96) = 4.56 down
    assert "sample:\ndef " in out
    val = float(re.search(r"validation loss (\d+\.\d+)", out).group(1))
    assert val < losses[0]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("amp", ["bf16"])
def test_mixed_precision_training_learns_too(tmp_path, amp):
    out, losses, _ = _train(tmp_path, "--amp", amp)
    assert losses[-1] < losses[0] - 0.5, out
