"""The linalg benchmark (benchmarks/linalg.py): `python -m benchmarks --quick --only linalg`
times solve (64 right-hand sides), cholesky and qr on one matrix of two sizes and on a batch,
eigh and svd on one matrix, every pykern result checked by its backward error, with a numpy row
beside each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_linalg_benchmark_times_and_checks_every_case(tmp_path: Path) -> None:
    report = tmp_path / "linalg.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "linalg",
                           "--no-peers", "--json", str(report)], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    data = json.loads(report.read_text())
    assert data["failures"] == []
    rows = {(r["case"], r["impl"]): r["value"] for r in data["rows"] if r["group"] == "linalg"}
    cases = [f"solve {n}x{n} rhs64" for n in (128, 256)] + ["solve 8x8 x100"]
    cases += [f"{op} {n}x{n}" for op in ("cholesky", "qr") for n in (128, 256)]
    cases += [f"{op} 8x8 x100" for op in ("cholesky", "qr")] + ["eigh 128x128", "svd 128x128"]
    for case in cases:
        assert rows[(case, "pykern")] > 0 and rows[(case, "numpy")] > 0, case
