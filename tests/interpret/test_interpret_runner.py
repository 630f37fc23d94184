"""The schedules that run invocations, and ArrayArg construction from numpy views."""

from __future__ import annotations


import numpy as np
import pytest

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.interpret import ArrayArg
from pykern.interpret.arrays import view_problem
from pykern.interpret.names import SubgroupSite
from pykern.interpret.runner import Launch, run_lockstep, run_sequential, workgroups


def test_workgroups_cover_the_grid_in_launch_order():
    groups = list(workgroups((3, 2, 1), (2, 2, 1)))
    assert [g for g, _ in groups] == [(0, 0, 0), (1, 0, 0)]
    assert groups[1][1][:3] == [(2, 0, 0, 0, 0, 0, 1, 0, 0), (3, 0, 0, 1, 0, 0, 1, 0, 0),
                                (2, 1, 0, 0, 1, 0, 1, 0, 0)]
    assert list(workgroups((0, 5, 1), (4, 1, 1))) == []


def launch(invocation, grid, workgroup, subgroup_size=32, sites=()) -> Launch:
    return Launch(lambda: invocation, grid, workgroup, subgroup_size, sites)


def test_sequential_runs_each_invocation_to_its_end():
    log = []
    run_sequential(launch(lambda *ids: log.append(ids[0]), (5, 1, 1), (2, 1, 1)))
    assert log == [0, 1, 2, 3, 4, 5]  # 5 is past the grid: the body's mask would return


def test_lockstep_runs_a_workgroup_up_to_each_barrier():
    # what a kernel with barriers becomes: `invocation` is a generator, `yield None` a barrier
    log = []

    def invocation(gx, gy, gz, lx, ly, lz, wx, wy, wz):
        log.append(("before", gx))
        yield None
        log.append(("between", gx))
        if lx == 0:
            return  # an ended invocation does not hold the others back
        yield None
        log.append(("after", gx))

    run_lockstep(launch(invocation, (4, 1, 1), (2, 1, 1)))
    assert log == [("before", 0), ("before", 1), ("between", 0), ("between", 1), ("after", 1),
                   ("before", 2), ("before", 3), ("between", 2), ("between", 3), ("after", 3)]


def test_lockstep_answers_subgroup_operations_per_subgroup_and_site():
    sites = (SubgroupSite(ir.SubgroupOp.ADD, dt.i32, ir.UNKNOWN_LOC),
             SubgroupSite(ir.SubgroupOp.MAX, dt.i32, ir.UNKNOWN_LOC))
    got = {}

    def invocation(gx, gy, gz, lx, ly, lz, wx, wy, wz):
        # (site, progress key, argument): the branches' sites are at different keys
        if lx % 4 == 3:
            got[gx] = ("max", (yield (1, (1,), gx)))  # diverged: its own active set
        else:
            got[gx] = ("add", (yield (0, (2,), gx)))

    run_lockstep(launch(invocation, (10, 1, 1), (10, 1, 1), subgroup_size=4, sites=sites))
    # subgroups {0..3}, {4..7}, {8, 9}: lanes 3 and 7 take the other branch
    assert got == {0: ("add", 3), 1: ("add", 3), 2: ("add", 3), 3: ("max", 3),
                   4: ("add", 15), 5: ("add", 15), 6: ("add", 15), 7: ("max", 7),
                   8: ("add", 17), 9: ("add", 17)}


def test_array_arg_of_views():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    arg = ArrayArg.of(base[1:, ::-2])
    assert arg.data.base is not None and np.shares_memory(arg.data, base)
    assert (arg.offset, arg.shape, arg.strides) == (11, (3, 3), (6, -2))
    fortran = np.asfortranarray(base)
    assert ArrayArg.of(fortran).strides == (1, 4)
    # a caller of the backend gets ValueError; a launch checks this first (view_problem)
    with pytest.raises(ValueError, match="whole elements"):
        ArrayArg.of(np.zeros(4, dtype=[("a", np.int32), ("b", np.int16)])["a"])
    with pytest.raises(ValueError, match="contiguous"):
        ArrayArg.of(np.lib.stride_tricks.as_strided(np.zeros(4, np.int32), (2,), (6,)))
    odd = np.zeros(10, np.uint8)[2:10].view(np.int32)  # a buffer of 10 bytes holds 2 int32
    assert (ArrayArg.of(odd).offset, ArrayArg.of(odd).data.size) == (0, 2)


def test_view_problem_says_why_an_array_cannot_be_viewed_in_place():
    """What the JIT layer asks before an interpreted launch, to refuse it with a LaunchError."""
    base = np.zeros((4, 6), np.float32)
    assert all(view_problem(a) is None for a in (base, base[1:, ::-2], np.asfortranarray(base),
                                                  np.zeros(10, np.uint8)[2:10].view(np.int32)))
    field = np.zeros(4, dtype=[("a", np.int32), ("b", np.int16)])["a"]
    assert view_problem(field) == "the array's strides are not whole elements"
    split = np.lib.stride_tricks.as_strided(np.zeros(8, np.int32), (2,), (8,))
    assert view_problem(split) == "the array's memory is not one contiguous block"
