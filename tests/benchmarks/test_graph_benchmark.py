"""The graph benchmark (benchmarks/graph.py): `python -m benchmarks --quick --only graph` runs
the 100-launch chain eagerly and replayed from a `pk.graph()`, both results correct, with a row
per case for each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_graph_benchmark_measures_eager_and_replayed_chains(tmp_path: Path) -> None:
    report = tmp_path / "graph.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "graph",
                           "--no-peers", "--json", str(report)], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    data = json.loads(report.read_text())
    assert data["failures"] == []
    rows = {(r["case"], r["impl"]): r["value"] for r in data["rows"] if r["group"] == "graph"}
    for case in ("queued", "queued + sync", "host cost"):
        for impl in ("pykern eager ops", "pykern pk.graph replay"):
            assert rows[(case, impl)] > 0, (case, impl)
