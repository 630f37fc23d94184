"""The distributed benchmark (benchmarks/distributed.py): `python -m benchmarks --quick
--only distributed` runs its MPI jobs and reports the all-reduce bandwidth of pykern and
mpi4py and the DDP step at 1, 2 and 3 processes, every result checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")
ROOT = Path(__file__).resolve().parents[2]


def test_quick_distributed_benchmark(tmp_path: Path) -> None:
    report = tmp_path / "distributed.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only",
                           "distributed", "--no-peers", "--json", str(report)], cwd=ROOT,
                          text=True, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    data = json.loads(report.read_text())
    assert data["failures"] == []
    rows = {(r["case"], r["impl"]): r["value"] for r in data["rows"]
            if r["group"] == "distributed"}
    bandwidth = [k for k in rows if k[1] in ("pykern all_reduce (host)",
                                             "mpi4py Allreduce (numpy)")]
    assert len(bandwidth) == 4 and all(rows[k] > 0 for k in bandwidth)
    for n in (1, 2, 3):
        assert rows[("DDP MLP step", f"pykern DDP n={n}")] > 0
