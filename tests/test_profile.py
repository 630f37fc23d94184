"""`pk.profile()`: per-kernel device times of the launches inside a block, with results
unchanged; op replays, nesting, graphs and errors."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.runtime.submit.launch_profile import PROFILERS
from pykern.tensor.core import dispatch


@pk.kernel
def scale_into(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i]


@pk.kernel
def shift_into(b: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = x[i] + b


def rows(prof: pk.Profile) -> dict[str, pk.jit.profile.KernelTime]:
    return {r.name: r for r in prof.stats()}


def test_each_kernel_gets_its_calls_and_times_and_the_table_is_printed(capsys):
    x = pk.arange(256, dtype=pk.f32)
    out, other = pk.empty_like(x), pk.empty_like(x)
    with pk.profile() as prof:
        for k in range(3):
            scale_into[x.size](float(k), x, out)
        shift_into[x.size](1.0, x, other)
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(256))  # the last launch's
    np.testing.assert_array_equal(other.numpy(), np.arange(256) + 1.0)
    got = rows(prof)
    assert (got["scale_into"].calls, got["shift_into"].calls) == (3, 1)
    for r in got.values():
        assert r.total_s > 0 and r.untimed == 0
        assert r.mean_s == pytest.approx(r.total_s / r.calls)
    assert sum(r.share for r in got.values()) == pytest.approx(1.0)
    totals = [r.total_s for r in prof.stats()]
    assert totals == sorted(totals, reverse=True)
    assert prof.total_s == pytest.approx(sum(totals))
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split() == ["kernel", "calls", "total", "mean", "share"]
    assert printed.strip() == prof.table() == str(prof)
    assert any(line.split()[:2] == ["scale_into", "3"] for line in printed.splitlines())
    assert not PROFILERS


def test_ops_replayed_without_their_python_are_profiled_too():
    a, b = pk.ones(64), pk.full(64, 2.0)
    (a * b).numpy()  # the first call captures the op's plan
    plans = [p for p in dispatch._PLANS.values() if isinstance(p, dispatch.Plan)]
    assert plans, "a plan should exist for the op by now"
    with pk.profile(show=False) as prof:
        products = [a * b for _ in range(4)]
    assert all(np.array_equal(p.numpy(), np.full(64, 2.0)) for p in products)
    assert sum(r.calls for r in prof.stats()) == 4
    assert all(r.untimed == 0 and r.total_s > 0 for r in prof.stats())


def test_profiles_nest_the_outer_one_sees_the_inner_launches():
    x = pk.ones(32)
    out = pk.empty_like(x)
    with pk.profile(show=False) as outer:
        scale_into[32](2.0, x, out)
        with pk.profile(show=False) as inner:
            shift_into[32](1.0, x, out)
        assert len(PROFILERS) == 1
    assert set(rows(inner)) == {"shift_into"}
    assert {n: r.calls for n, r in rows(outer).items()} == {"scale_into": 1, "shift_into": 1}
    np.testing.assert_array_equal(out.numpy(), np.full(32, 2.0))


def test_graph_launches_are_counted_untimed_and_a_replay_is_one_timed_row():
    x = pk.ones(16)
    out = pk.empty_like(x)
    with pk.profile(show=False) as prof:
        with pk.graph() as g:
            scale_into[16](3.0, x, out)
            shift_into[16](1.0, out, out)
        g.replay()
        g.replay()
    got = rows(prof)
    assert got["scale_into"].untimed == got["scale_into"].calls == 1
    assert got["scale_into"].total_s == 0.0
    replay = got["pk.graph replay (2 launches)"]
    assert replay.calls == 2 and replay.untimed == 0 and replay.total_s > 0
    np.testing.assert_array_equal(out.numpy(), np.full(16, 4.0))
    assert "1 untimed" in prof.table()


def test_an_error_inside_leaves_no_profiler_and_tensors_intact():
    x = pk.arange(8, dtype=pk.f32)
    out = pk.zeros(8)
    with pytest.raises(pk.LaunchError, match="'x'"):
        with pk.profile(show=False) as prof:
            scale_into[8](2.0, x, out)
            scale_into[8](2.0, np.ones(8, np.int32), out)  # the wrong dtype for 'x'
    assert not PROFILERS
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(8))
    assert rows(prof)["scale_into"].calls == 1
    scale_into[8](1.0, x, out)  # launches work after, unprofiled
    np.testing.assert_array_equal(out.numpy(), np.arange(8))


def test_a_profile_is_read_after_its_block_and_used_once():
    prof = pk.profile(show=False)
    with prof:
        with pytest.raises(RuntimeError, match="still collecting"):
            prof.stats()
    assert prof.stats() == [] and prof.total_s == 0.0
    with pytest.raises(RuntimeError, match="one block"):
        with prof:
            pass
    assert not PROFILERS
