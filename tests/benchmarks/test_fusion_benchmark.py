"""The `fusion` benchmark (benchmarks/fusion.py): `python -m benchmarks --quick --only fusion`
times the fused and the eager expressions, checks every result against float64, and is a
group of the command line."""

from __future__ import annotations

import numpy as np

from benchmarks import cli, fusion
from benchmarks.peers import Peers
from benchmarks.plan import CPU, GPU, QUICK
from benchmarks.results import Results


def test_quick_fusion_measures_fused_and_eager_correctly() -> None:
    results = Results()
    fusion.run(QUICK, results, Peers(np, wanted=False))
    rows = [r for r in results.rows if r.group == "fusion"]
    impls = {(r.case.split(" ")[0], r.impl) for r in rows}
    for what in ("exp(a)*2+b", "sum((a-b)**2)"):
        assert {(what, "pykern fuse"), (what, "pykern eager")} <= impls
    assert all(r.value > 0 and r.unit == "Gelt/s" and r.extra["correct"] for r in rows)
    assert not results.failures


def test_fusion_is_a_group_with_sizes_for_every_plan() -> None:
    assert "fusion" in cli.BENCHMARKS
    assert [n for n, _ in GPU.fusion] == [2**24, 2**26, 2**28]
    assert CPU.fusion and QUICK.fusion
