"""The `ops` benchmark (benchmarks/ops.py): `python -m benchmarks --quick --only ops` runs every
case on the device within a minute and checks each result against float64; a wrong result is
reported as WRONG and fails the run; `--write-docs` replaces only its table; the torch code
path runs with torch's CPU build where it is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pykern as pk
from benchmarks import cli, ops
from benchmarks.ops_case import OpCase, host_random, round_to_bf16, to_pykern
from benchmarks.ops_check import bound_for, compare, relative_error, row_blocks
from benchmarks.ops_docs import END, START, write_docs
from benchmarks.ops_gemm import matmul_case
from benchmarks.ops_plan import QUICK_OPS
from benchmarks.peers import Peers
from benchmarks.plan import QUICK
from benchmarks.results import Results

ROOT = Path(__file__).resolve().parents[2]


def run_benchmarks(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout)


def pykern_rows(data: dict) -> list[dict]:
    return [r for r in data["rows"] if r["impl"] == "pykern"]


def test_quick_ops_runs_every_case_correctly_within_a_minute(tmp_path: Path) -> None:
    report, docs = tmp_path / "ops.json", tmp_path / "performance.md"
    done = run_benchmarks("--quick", "--only", "ops", "--no-peers", "--json", str(report),
                          "--write-docs", str(docs))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["seconds"]["ops"] < 60
    assert data["failures"] == []
    rows = pykern_rows(data)
    assert {r["group"] for r in rows} == set(ops.GROUPS)
    notes = " ".join(data["notes"])
    expected = [c for c in ops.cases(QUICK_OPS) if f"ops: {c.dtype} cases skipped" not in notes]
    assert [(r["group"], r["case"]) for r in rows] == [(c.group, c.case) for c in expected]
    assert {"f16", "f32", "i8"} <= {r["extra"]["dtype"] for r in rows}  # lavapipe has them
    for r in rows:
        assert r["extra"]["status"] == "ok"
        assert r["extra"]["max_rel_error"] <= r["extra"]["bound"]
        assert r["value"] > 0 and r["method"] == "gpu timestamps"
    assert "no torch CUDA device" in notes
    text = docs.read_text()
    assert START in text and END in text and "--quick --only ops" in text
    assert text.count("| matmul |") == sum(1 for r in rows if r["group"] == "matmul")
    for r in rows:  # one line per case, printed with its figure and its error
        assert f"{r['group']:<10} {r['case']:<30} pykern" in done.stdout


def test_write_docs_replaces_only_the_table_between_the_markers(tmp_path: Path) -> None:
    docs = tmp_path / "performance.md"
    docs.write_text(f"# Title\n\nbefore\n\n{START}\nold table\n{END}\n\nafter\n")
    meta = {"command": "python -m benchmarks --only ops", "date": "2026-12-01T15:00:00+00:00",
            "device": {"name": "NVIDIA H200", "driver": "580"}, "ops_peer": "torch 2.13 on cuda"}
    write_docs(docs, "| op | new table |", meta)
    write_docs(docs, "| op | newer table |", meta)
    text = docs.read_text()
    assert text.startswith("# Title\n\nbefore\n\n") and text.endswith(f"{END}\n\nafter\n")
    assert "old table" not in text and "| op | new table |" not in text
    assert "| op | newer table |" in text
    assert "`python -m benchmarks --only ops`, 2026-12-01T15:00:00+00:00" in text
    assert "NVIDIA H200" in text and "torch 2.13 on cuda" in text


def test_write_docs_adds_the_markers_to_a_file_without_them(tmp_path: Path) -> None:
    docs = tmp_path / "performance.md"
    docs.write_text("# Performance\n\ntext\n")
    write_docs(docs, "| table |", {"command": "c", "date": "d"})
    text = docs.read_text()
    assert text.startswith("# Performance\n\ntext\n\n## ")
    assert text.index(START) < text.index("| table |") < text.index(END)


def test_write_docs_needs_the_ops_benchmark() -> None:
    done = run_benchmarks("--only", "memory", "--write-docs", "/nonexistent/performance.md")
    assert done.returncode == 2 and "--write-docs" in done.stderr


def test_a_wrong_result_is_reported_wrong_and_fails_the_run(capsys) -> None:
    right = matmul_case("f32", 32, 8)
    wrong = OpCase(right.group, right.case, right.dtype, right.unit, right.work, right.inputs,
                   lambda t: pk.matmul(t[0], t[1]) * 1.01, None, right.check)
    results = Results()
    peers = Peers(np)
    ops._run_case(QUICK_OPS, results, peers, right)
    assert results.failures == [] and cli.exit_code(results) == 0
    ops._run_case(QUICK_OPS, results, peers, wrong)
    row = results.rows[-1]
    assert row.extra["status"] == "WRONG" and row.extra["max_rel_error"] > 1e-3
    assert len(results.failures) == 1 and "WRONG" in results.failures[0]
    assert "WRONG" in capsys.readouterr().out
    assert cli.exit_code(results) == 1


def test_an_op_that_raises_fails_the_run() -> None:
    right = matmul_case("f32", 16, 8)
    broken = OpCase(right.group, right.case, right.dtype, right.unit, right.work, right.inputs,
                    lambda t: pk.matmul(t[0], t[0][:3]), None, right.check)
    results = Results()
    ops._run_case(QUICK_OPS, results, Peers(np), broken)
    assert results.rows == [] and "FAILED" in results.failures[0]


def test_sampled_matmul_check_compares_the_first_and_last_rows() -> None:
    case = matmul_case("f32", 40, 8)
    host = case.inputs()
    a, b = (to_pykern(x, "f32") for x in host)
    c = pk.matmul(a, b)
    check = case.check(host, c)
    assert check.ok and check.checked == "rows 0-3, 36-39 of 40"
    corrupted = c.numpy()
    corrupted[38, 5] += 1.0  # a wrong element in the last tile is seen
    assert not case.check(host, pk.asarray(corrupted)).ok
    corrupted = c.numpy()
    corrupted[20, 5] += 1.0  # the middle is not sampled: this is what the sample costs
    assert case.check(host, pk.asarray(corrupted)).ok


def test_bounds_and_errors() -> None:
    assert bound_for("f16") == 2.0**-10 and bound_for("bf16") == 2.0**-7
    assert bound_for("f32") == 1e-4 and bound_for("i8") == 0.0 and bound_for("i32") == 0.0
    ref = np.array([1.0, -4.0, 2.0])
    assert relative_error(ref + [0, 0.004, 0], ref) == pytest.approx(1e-3)
    assert np.isnan(relative_error(np.array([1.0, np.nan, 2.0]), ref))
    assert not compare([(np.array([1.0, np.inf, 2.0]), ref)], "f32", "all").ok
    assert compare([(np.array([1, 2], np.int32), np.array([1, 2]))], "i32", "all").ok
    assert not compare([(np.array([1, 3], np.int32), np.array([1, 2]))], "i32", "all").ok
    assert not compare([(ref * (1 + 1e-6), ref)], "f32", "all", exact=True).ok
    assert row_blocks(10, 16) == [slice(0, 10)]
    assert row_blocks(100, 16) == [slice(0, 8), slice(92, 100)]


def test_inputs_are_exact_in_their_dtype() -> None:
    rng = np.random.default_rng(0)
    bf = host_random(rng, (1000,), "bf16")
    assert bf.dtype == np.float32 and np.all(bf.view(np.uint32) & 0xFFFF == 0)
    ties = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-9], np.float32)
    assert round_to_bf16(ties).tolist() == [1.0, 1 + 2.0**-6, 1.0]  # to nearest, ties to even
    assert host_random(rng, (10,), "f16").dtype == np.float16
    ints = host_random(rng, (1000,), "i8")
    assert ints.dtype == np.int8 and ints.min() >= -8 and ints.max() < 8


def test_the_plans_have_ops_sizes() -> None:
    assert QUICK.ops is QUICK_OPS
    assert all(n <= 128 for _, n in QUICK_OPS.matmul)


def test_torch_code_path_runs_with_torch_on_the_cpu(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    report = tmp_path / "ops.json"
    done = run_benchmarks("--quick", "--only", "ops", "--ops-peer-device", "cpu", "--json",
                          str(report))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(report.read_text())
    torch_rows = {(r["group"], r["case"]): r for r in data["rows"] if r["impl"] == "torch cpu"}
    mine = pykern_rows(data)
    assert len(torch_rows) >= len(mine) - 2  # a torch build may lack an op or a dtype
    for r in mine:
        theirs = torch_rows.get((r["group"], r["case"]))
        if theirs is not None:
            assert theirs["method"] == "wall clock"
            assert r["extra"]["ratio"] == pytest.approx(r["value"] / theirs["value"])
            assert theirs["ratio"] == pytest.approx(r["extra"]["ratio"])
    assert data["ops_peer"].startswith("torch ") and data["ops_peer"].endswith(" on cpu")


def test_torch_precision_flags_are_restored() -> None:
    torch = pytest.importorskip("torch")
    from benchmarks.ops_torch import like_for_like

    before = torch.backends.cudnn.benchmark
    with like_for_like(torch) as applied:
        assert torch.backends.cudnn.benchmark is True
        assert applied["torch.backends.cuda.matmul.allow_tf32"] is False
    assert torch.backends.cudnn.benchmark == before
