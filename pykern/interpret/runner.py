"""Running generated invocations over a launch grid, workgroup by workgroup.

Workgroups run in order (x fastest, then y, then z), each with fresh `pk.shared` arrays (one
call of the generated `workgroup()`); inside a workgroup, invocations are numbered by their
linear local index (x fastest), which also makes the subgroups: lane = index % subgroup size.

- `run_sequential`: kernels that never synchronise. Each invocation runs to its end, in order.
- `run_lockstep`: kernels with barriers or subgroup exchanges, whose `invocation` is a
  generator. All invocations of a workgroup start and run until they stop at a barrier (they
  yield None), at a subgroup operation (they yield `(site, key, *args)`), or at their end.
  Then in each subgroup the invocations waiting at the earliest progress `key` are answered
  together (the active set) and resume; once every live invocation waits at a barrier, all
  resume. So no invocation passes a barrier before the others have reached it, and a subgroup
  operation sees the values of all active invocations of its subgroup.

A progress key orders where invocations are in program order: the positions of the
synchronising loops and device-function calls the invocation is in, each loop with its
iteration, then the site's position (generated code numbers them in the order Python runs
them). Answering the earliest key first makes a subgroup reconverge as on Vulkan devices: the
invocations that took an `if` meet among themselves inside it, and the ones that skipped it
wait at the next operation after it until the others get there; in a loop, the invocations of
one iteration meet, and those that left the loop wait for the rest.

An invocation that has ended no longer takes part in barriers, as on GPUs where an exited
invocation does not hold a barrier back. Invocations past the grid end at the grid mask, except
in kernels with barriers, which have none (`ir.Kernel.masked`): there they run the body too.
Barriers in non-uniform control flow are undefined on Vulkan; this is the lenient reading:
once every live invocation waits at some barrier, all go on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pykern.interpret import subgroups
from pykern.interpret.names import SubgroupSite

Invocation = Callable[..., Any]
Grid = tuple[int, int, int]
Ids = tuple[int, int, int, int, int, int, int, int, int]


@dataclass(frozen=True)
class Launch:
    """One launch: the generated `workgroup` factory, the grid and how to synchronise."""

    workgroup: Callable[[], Invocation]
    grid: Grid
    workgroup_size: Grid
    subgroup_size: int
    subgroup_sites: tuple[SubgroupSite, ...]


def num_groups(grid: Grid, workgroup: Grid) -> Grid:
    """ceil(grid / workgroup) per dimension."""
    groups = (-(-g // w) for g, w in zip(grid, workgroup, strict=True))
    return tuple(groups)  # type: ignore[return-value]


def workgroups(grid: Grid, workgroup: Grid) -> Iterator[tuple[Grid, list[Ids]]]:
    """For each workgroup in launch order: its id and the ids of its invocations in linear
    local order, each as (gid0, gid1, gid2, lid0, lid1, lid2, grp0, grp1, grp2), the arguments
    of `invocation`."""
    wx, wy, wz = workgroup
    locals_ = [(x, y, z) for z in range(wz) for y in range(wy) for x in range(wx)]
    nx, ny, nz = num_groups(grid, workgroup)
    for gz, gy, gx in itertools.product(range(nz), range(ny), range(nx)):
        bx, by, bz = gx * wx, gy * wy, gz * wz
        yield (gx, gy, gz), [(bx + x, by + y, bz + z, x, y, z, gx, gy, gz)
                             for x, y, z in locals_]


def run_sequential(launch: Launch) -> None:
    """Runs every invocation to its end, one after the other."""
    for _, ids in workgroups(launch.grid, launch.workgroup_size):
        invocation = launch.workgroup()
        for args in ids:
            invocation(*args)


def run_lockstep(launch: Launch) -> None:
    """Runs the invocations of each workgroup together, from synchronisation point to
    synchronisation point (see the module docstring)."""
    for _, ids in workgroups(launch.grid, launch.workgroup_size):
        invocation = launch.workgroup()
        Workgroup(launch, [invocation(*args) for args in ids]).run()


class Workgroup:
    """The generators of one workgroup's invocations and where each one waits."""

    def __init__(self, launch: Launch, invocations: list[Iterator[Any]]):
        self.launch = launch
        self.invocations = invocations
        self.waiting: dict[int, tuple | None] = {}  # live invocation -> its request

    def run(self) -> None:
        for k in range(len(self.invocations)):
            self.resume(k, None)
        while self.waiting:
            if not self.answer_subgroups():
                for k in sorted(self.waiting):  # every live invocation is at a barrier
                    self.resume(k, None)

    def resume(self, k: int, value: object) -> None:
        """Runs invocation `k` (sending it `value`) up to where it waits next, or its end."""
        try:
            self.waiting[k] = self.invocations[k].send(value)
        except StopIteration:
            self.waiting.pop(k, None)

    def answer_subgroups(self) -> bool:
        """Answers, in each subgroup, the invocations waiting at the earliest progress key
        (together); False if no invocation waits at a subgroup operation."""
        size = self.launch.subgroup_size
        groups: dict[int, list[int]] = {}
        for k in sorted(self.waiting):
            request = self.waiting[k]
            if request is not None:
                groups.setdefault(k // size, []).append(k)
        for _, waiting in sorted(groups.items()):
            first = min(self.waiting[k][1] for k in waiting)  # type: ignore[index]
            members = [k for k in waiting if self.waiting[k][1] == first]  # type: ignore[index]
            site = self.waiting[members[0]][0]  # type: ignore[index]
            args = [self.waiting[k][2:] for k in members]  # type: ignore[index]
            results = subgroups.exchange(self.launch.subgroup_sites[site],
                                         [k % size for k in members], args, size)
            for k, result in zip(members, results, strict=True):
                self.resume(k, result)
        return bool(groups)


SCHEDULES: dict[bool, Callable[[Launch], None]] = {
    False: run_sequential,
    True: run_lockstep,
}
