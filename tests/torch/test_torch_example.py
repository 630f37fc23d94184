"""examples/torch_on_pykern.py trains its PyTorch model on "pykern" and prints the same losses
as on the CPU; its --help is whole and states every default."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from example_help import check_help  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "examples/torch_on_pykern.py"


STEPS = ["--steps", "40"]


def run_on_pykern() -> str:
    """The example as a user runs it, in a process of its own."""
    done = subprocess.run([sys.executable, SCRIPT, *STEPS, "--device", "pykern"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_on_the_cpu() -> str:
    """The same program on PyTorch's CPU backend, the reference (in this process: it starts
    no second PyTorch)."""
    main = runpy.run_path(str(ROOT / SCRIPT))["main"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main([*STEPS, "--device", "cpu"])
    return printed.getvalue()


def test_the_example_trains_on_pykern_as_on_the_cpu():
    on_pykern, on_cpu = run_on_pykern(), run_on_the_cpu()
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", on_pykern)]
    assert len(losses) >= 5 and losses[-1] < losses[0] / 2, on_pykern
    cpu_losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", on_cpu)]
    assert losses == pytest.approx(cpu_losses, abs=2e-3), (on_pykern, on_cpu)
    assert "device pykern:0: accuracy" in on_pykern


def test_help():
    check_help(SCRIPT)
