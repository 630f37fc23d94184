"""Which device a process of a data-parallel job takes (pykern/distributed/group.py): the GPUs
by local rank modulo their count, discrete ones first; none without a GPU."""

from __future__ import annotations

from types import SimpleNamespace

from pykern.distributed.group import gpu_for


def _infos(*kinds: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(index=i, kind=k) for i, k in enumerate(kinds)]


def test_gpus_by_local_rank_modulo_their_count():
    infos = _infos("cpu", "discrete", "discrete", "host")
    assert [gpu_for(r, infos) for r in range(5)] == [1, 2, 1, 2, 1]


def test_discrete_before_integrated():
    infos = _infos("integrated", "discrete", "host")
    assert [gpu_for(r, infos) for r in range(3)] == [1, 0, 1]


def test_no_gpu_leaves_the_default_device():
    assert gpu_for(0, _infos("cpu", "host")) is None
