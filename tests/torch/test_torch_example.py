"""examples/torch_on_pykern.py trains its PyTorch model on "pykern" and prints the same losses
as on the CPU; its --help is whole and states every default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from example_help import check_help  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "examples/torch_on_pykern.py"


def run(device: str) -> str:
    done = subprocess.run([sys.executable, SCRIPT, "--steps", "40", "--device", device],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_example_trains_on_pykern_as_on_the_cpu():
    on_pykern, on_cpu = run("pykern"), run("cpu")
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", on_pykern)]
    assert len(losses) >= 5 and losses[-1] < losses[0] / 2, on_pykern
    cpu_losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", on_cpu)]
    assert losses == pytest.approx(cpu_losses, abs=2e-3), (on_pykern, on_cpu)
    assert "device pykern:0: accuracy" in on_pykern


def test_help():
    check_help(SCRIPT)
