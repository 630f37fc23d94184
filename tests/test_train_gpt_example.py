"""examples/train_gpt.py trains its character-level transformer (loss going down, through
causal attention, layer norm, the MLP and AdamW on the device), prints a generated sample and
writes the loss curve; and once with pk.autocast. Its model size follows what the device is
(the tiny one on the host and lavapipe), and its --help is whole and states every default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from example_help import check_help

import pykern as pk

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


def test_the_model_size_follows_what_the_device_is(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    import train_gpt

    for kind in ("host", "cpu"):  # the host device; lavapipe and other Vulkan CPU devices
        assert train_gpt.default_size(kind) == "tiny"
    for kind in ("discrete", "integrated", "virtual"):
        assert train_gpt.default_size(kind) == "large"


@pytest.mark.parametrize("device", ["host", "vulkan"])
def test_a_cpu_device_trains_the_tiny_model_by_default(device):
    if device == "vulkan" and not any(d.kind == "cpu" for d in pk.devices()):
        pytest.skip("no Vulkan CPU device (lavapipe) here")
    done = subprocess.run([sys.executable, "examples/train_gpt.py", "--device", device,
                           "--steps", "1", "--chars", "20000", "--sample", "5", "--plot", ""],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the tiny model, "), done.stdout


def test_help_is_whole_and_states_the_defaults():
    check_help("examples/train_gpt.py")
