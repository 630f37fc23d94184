"""The host benchmark (benchmarks/host.py): `python -m benchmarks --quick --only host` runs
every case on the host device, on lavapipe (where there is one), in numpy and in the CPU peers
that import here (Numba, Taichi), every result correct (no WRONG), with a row per target; a
wrong result is reported WRONG and fails the run; the targets' verdicts."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import pykern as pk
from benchmarks import cli
from benchmarks.host_cases import host_cases
from benchmarks.host_measure import add_row, expected
from benchmarks.host_peers import find_cpu_peers
from benchmarks.host_plan import HOST_QUICK
from benchmarks.host_targets import TARGET_GROUP, TARGETS, check_targets
from benchmarks.results import Results, Row

ROOT = Path(__file__).resolve().parents[2]
ARRAY_CASES = [c.name for c in host_cases()]


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_quick_host_benchmark_runs_every_case_correctly(tmp_path: Path) -> None:
    report = tmp_path / "host.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "host",
                           "--json", str(report)], cwd=ROOT, text=True, capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "WRONG" not in done.stdout and "FAILED" not in done.stdout
    data = json.loads(report.read_text())
    assert data["failures"] == []
    rows = [r for r in data["rows"] if r["group"] == "host"]
    assert rows and all(r["extra"]["status"] == "ok" for r in rows)
    assert all(r["value"] > 0 for r in rows)
    who = {(r["extra"]["case"], r["extra"]["who"]) for r in rows}
    lavapipe = any(i.kind == "cpu" for i in pk.devices())
    devices = ["host", "lavapipe"] if lavapipe else ["host"]
    peers = ["numpy"] + [name for name, module in (("numba", "numba"), ("taichi", "taichi"))
                         if _has(module)]
    for case in host_cases():
        kinds = ["op", "kernel"] if case.name in ("add", "saxpy") else ["op"]
        for device in devices:
            for kind in kinds:
                assert (case.name, f"{device} {kind}") in who
        for peer in peers:
            assert (case.name, peer) in who, (case.name, peer)
    for device in devices:
        assert ("compile", f"{device} cold") in who and ("train", device) in who
    assert {("compile", "host warm"), ("compile", "host warm 1st"), ("train", "numpy")} <= who
    targets = [r for r in data["rows"] if r["group"] == TARGET_GROUP]
    assert len(targets) == (len(TARGETS) if lavapipe else
                            sum(1 for t in TARGETS if not (t.theirs or "").startswith("lava")))
    assert all(isinstance(r["extra"]["met"], bool) for r in targets)
    assert not list((ROOT / "benchmarks").rglob("*.nb[ic]"))  # Numba's cache is not in the tree


def test_a_wrong_result_is_reported_wrong_and_fails_the_run(capsys) -> None:
    case = next(c for c in host_cases() if c.name == "sum rows")
    inputs = case.make((8, 16))
    want = expected(case, inputs)
    timing = (1e-3, 1, None)
    results = Results()
    add_row(results, case, "sum rows 8x16", "pykern host op", "host op", timing,
            want.numpy_bits, want, (8, 16), "wall clock")
    assert results.failures == [] and cli.exit_code(results) == 0
    wrong = want.numpy_bits * np.float32(1.01)
    row = add_row(results, case, "sum rows 8x16", "pykern host op", "host op", timing, wrong,
                  want, (8, 16), "wall clock")
    assert row.extra["status"] == "WRONG" and len(results.failures) == 1
    assert "WRONG" in capsys.readouterr().out and cli.exit_code(results) == 1
    add_row(results, case, "sum rows 8x16", "numba prange", "numba", timing, wrong, want,
            (8, 16), "wall clock")  # a peer's wrong result is noted, not pykern's failure
    assert len(results.failures) == 1 and "numba prange sum rows 8x16 WRONG" in results.notes[-1]


def test_exact_cases_must_give_numpys_bits() -> None:
    case = next(c for c in host_cases() if c.name == "saxpy")
    inputs = case.make((64,))
    want = expected(case, inputs)
    close = want.numpy_bits.copy()
    close[3] = np.nextafter(close[3], np.float32(np.inf))  # one ULP off: within the f32 bound
    results = Results()
    row = add_row(results, case, "saxpy 64", "pykern host kernel", "host kernel",
                  (1e-3, 1, None), close, want, (64,), "wall clock", exact=True)
    assert row.extra["status"] == "WRONG" and row.extra["max_rel_error"] < 1e-6


def test_targets_are_met_or_missed_by_their_ratio() -> None:
    results = Results()

    def row(case: str, who: str, value: float, unit: str = "GB/s",
            higher: bool = True) -> None:
        results.rows.append(Row("host", f"{case} n", f"x {who}", value, unit, higher, "m",
                                {"case": case, "who": who}))

    row("add", "host op", 6.0)
    row("add", "numpy", 10.0)  # 0.6 >= 0.5: met
    row("add", "lavapipe op", 1.0)  # 6 < 10: missed by 1.7x
    row("compile", "host cold", 60.0, "ms", False)  # over 50 ms: missed
    row("train", "host", 10.0, "ms/step", False)
    row("train", "lavapipe", 60.0, "ms/step", False)  # 6x faster: met
    check_targets(results, quick=False)
    verdicts = {(r.case, r.impl): r for r in results.rows if r.group == TARGET_GROUP}
    assert verdicts[("add n", "host op / numpy")].extra["met"] is True
    missed = verdicts[("add n", "host op / lavapipe op")]
    assert missed.extra["met"] is False and "MISS by 1.7x" in missed.method
    assert verdicts[("compile n", "host cold")].extra["met"] is False
    assert verdicts[("train n", "host / lavapipe")].value == 6.0
    assert any("add host kernel/numpy not measured" in n for n in results.notes)


def test_no_peers_leaves_the_cpu_peers_out() -> None:
    peers = find_cpu_peers(Results(), wanted=False, taichi_vulkan=False)
    assert peers.numba is None and peers.taichi is None and peers.versions == {}


def test_the_quick_plan_is_small() -> None:
    assert HOST_QUICK.n <= 2**16 and HOST_QUICK.rows * HOST_QUICK.cols <= 2**16
    assert HOST_QUICK.train_samples is not None and HOST_QUICK.matmul <= 128
