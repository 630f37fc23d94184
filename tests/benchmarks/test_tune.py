"""`python -m benchmarks tune` (benchmarks/tune.py): the sweep over the cooperative-matrix
tilings writes a device table that `pk.matmul`'s kernel choice then reads. The tile kernel runs
in the interpreter here (a CPU has no tiles), on the sweep's quick shapes."""

from __future__ import annotations

import json

import pykern as pk
from benchmarks import tune
from benchmarks.cli import main
from pykern.ops import choice
from pykern.tensor.gemm import coop_tiling, gemm_coop


def test_the_sweep_writes_a_table_that_matmul_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(gemm_coop, "INTERPRET", True)
    monkeypatch.setattr(gemm_coop, "offers", lambda info, dtype: True)
    two = (coop_tiling.CANDIDATES[0], coop_tiling.CANDIDATES[-1])
    monkeypatch.setattr(coop_tiling, "CANDIDATES", two)
    monkeypatch.setattr(choice, "TABLES", tmp_path)
    assert main(["tune", "--quick", "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("*.json")
    table = json.loads(path.read_text())
    info = pk.get_device().info
    assert table["match"] == {"vendor_id": info.vendor_id, "device_id": info.device_id}
    chosen = table["ops"]["matmul"]
    assert {chosen["coop_tiling"], chosen["coop_tiling_small"]} <= {t.name for t in two}
    assert set(table["measured"]["f16 TFLOP/s"]) == {t.name for t in two}
    try:
        assert choice.config("matmul", info)["coop_tiling"] == chosen["coop_tiling"]
        assert gemm_coop.tiling_for(info, 4096, 4096, 1, pk.f16).name == chosen["coop_tiling"]
    finally:
        choice.reload_tables()  # the next test reads the repository's tables again


def test_every_table_in_the_repository_names_candidates():
    """The committed tables choose only tilings that exist (and so are tested)."""
    names = {t.name for t in coop_tiling.CANDIDATES}
    for path in choice.TABLES.glob("*.json"):
        table = json.loads(path.read_text())
        values = table["ops"]["matmul"]
        assert {values["coop_tiling"], values["coop_tiling_small"]} <= names, path.name
        assert {"vendor_id", "device_id"} <= set(table["match"]), path.name


def test_a_tiling_must_beat_the_default_by_the_margin():
    default, other = coop_tiling.DEFAULT.name, coop_tiling.CANDIDATES[1].name
    close = {default: [100.0, 50.0], other: [102.0, 51.0]}
    assert tune.fastest(close, 0, 2) == default
    clear = {default: [100.0, 50.0], other: [110.0, 55.0], "wrong": [200.0, None]}
    assert tune.fastest(clear, 0, 2) == other
    assert tune.fastest(clear, 1, 1) == other
