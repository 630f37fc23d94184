"""The training benchmark (benchmarks/training.py): `python -m benchmarks --quick --only
train` trains examples/train_gpt.py's GPT for a few steps in f32 and under pk.autocast, the
loss goes down (else the run fails), and each row carries its phase breakdown."""

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
    assert [r["case"] for r in rows] == ["gpt tiny f32", "gpt tiny bf16 autocast"]
    for r in rows:
        assert r["unit"] == "ms/step" and r["value"] > 0
        extra = r["extra"]
        assert extra["launches"] > 50  # forward, backward and the optimizer's step
        for phase in ("forward", "backward", "step"):
            assert extra[f"{phase} host ms"] > 0 and extra[f"{phase} gpu ms"] > 0
