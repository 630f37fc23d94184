"""The `fft` benchmark (benchmarks/fft.py): `python -m benchmarks --quick --only fft` times
every case, checks pykern's results against numpy's float64 transforms, and is a group of the
command line."""

from __future__ import annotations

import numpy as np

from benchmarks import cli, fft
from benchmarks.peers import Peers
from benchmarks.plan import CPU, GPU, QUICK
from benchmarks.results import Results


def test_quick_fft_measures_every_case_correctly() -> None:
    results = Results()
    fft.run(QUICK, results, Peers(np, wanted=False))
    rows = [r for r in results.rows if r.group == "fft" and r.impl == "pykern pk.fft"]
    assert [r.case for r in rows] == [c.name for c in fft.QUICK_CASES]
    assert all(r.value > 0 and r.unit == "us" and r.extra["correct"] for r in rows)
    assert not results.failures


def test_fft_is_a_group_with_cases_for_every_plan() -> None:
    assert "fft" in cli.BENCHMARKS
    assert fft.cases_for(GPU)[0].shape == (2**24,)
    assert fft.cases_for(CPU) and fft.cases_for(QUICK) == fft.QUICK_CASES
