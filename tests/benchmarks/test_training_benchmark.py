"""The training benchmark (benchmarks/training.py): `python -m benchmarks --quick --only
train` trains examples/train_gpt.py's GPT for a few steps in f32 and under pk.autocast, and an
MLP with SGD, each eagerly and `@pk.compile`d; the loss goes down and the compiled losses are
the eager ones (else the run fails), and each eager row carries its phase breakdown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_training_benchmark_reports_both_modes(tmp_path: Path) -> None:
    report = tmp_path / "train.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "train",
                           "--no-peers", "--json", str(report)], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [r for r in json.loads(report.read_text())["rows"] if r["group"] == "train"]
    cases = ["gpt 1x32 ctx32 b8 f32", "gpt 1x32 ctx32 b8 bf16 autocast", "mlp 784-256-10 b64 sgd"]
    assert [(r["case"], r["impl"]) for r in rows] == [
        (case, f"pykern {mode}") for case in cases for mode in ("eager", "compiled")]
    for r in rows:
        assert r["unit"] == "ms/step" and r["value"] > 0
        if r["impl"] == "pykern compiled":
            continue
        extra = r["extra"]
        assert extra["launches"] > 10  # forward, backward and the optimizer's step
        for phase in ("forward", "backward", "step"):
            assert extra[f"{phase} host ms"] > 0 and extra[f"{phase} gpu ms"] > 0
