"""benchmarks/f32_gemm_candidates.py, run as the lead runs it (a script from the repository
root): every candidate and today's pk.matmul get a row with a time and an error within the
f32-accumulation bound."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pykern.tensor.gemm import gemm_f32

ROOT = Path(__file__).resolve().parents[2]


def test_every_candidate_is_timed_and_checked():
    done = subprocess.run([sys.executable, "benchmarks/f32_gemm_candidates.py", "--sizes", "72"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()
            if line.split()[:1] == ["72"] and line.split()[1] != "torch"]  # torch: a peer, no check
    names = [row[1] for row in rows]
    assert names == ["pk.matmul"] + [name for name, _ in gemm_f32.candidates()]
    for row in rows:
        assert "WRONG" not in row and "failed:" not in row, row
        assert float(row[-1]) <= 1.0 and float(row[-3]) >= 0.0, row
