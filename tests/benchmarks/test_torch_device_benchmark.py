"""The `torchdev` benchmark (benchmarks/torch_device.py): `python -m benchmarks --only torchdev`
times a PyTorch GPT training step on the "pykern" device against torch (CUDA where there is
one, else the CPU), from the same weights: equal first losses, falling losses."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from benchmarks import cli, torch_device  # noqa: E402
from benchmarks.peers import find_peers  # noqa: E402
from benchmarks.plan import QUICK  # noqa: E402
from benchmarks.results import Results  # noqa: E402


def test_torchdev_times_both_modes_with_equal_first_losses() -> None:
    assert "torchdev" in cli.BENCHMARKS
    results = Results()
    peers = find_peers(want_taichi=False)
    torch_device.run(QUICK, results, peers)
    assert not results.failures, results.failures
    mine = [r for r in results.rows if r.impl == "pykern (torch device)"]
    assert [r.case.split()[-1] for r in mine] == ["f32", "autocast"]
    assert all(r.value > 0 and r.unit == "ms/step" for r in mine)
    theirs = [r for r in results.rows if r.impl.startswith("torch ")]
    assert len(theirs) == 2 and all(results.ratio(r) for r in theirs)
