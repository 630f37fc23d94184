"""examples/train_mlp.py trains an MLP on the digits to the accuracy it promises, through
autograd, pk.nn and pk.optim on the device."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_digits_mlp_reaches_95_percent():
    pytest.importorskip("sklearn", reason="the example reads scikit-learn's digits")
    done = subprocess.run([sys.executable, "examples/train_mlp.py", "--epochs", "12"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", done.stdout)]
    assert len(losses) >= 2 and losses[-1] < losses[0], done.stdout
    accuracy = float(re.search(r"test accuracy (\d\.\d+)", done.stdout).group(1))
    assert accuracy >= 0.95, done.stdout
