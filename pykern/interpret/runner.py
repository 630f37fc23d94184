"""Running generated invocations over a launch grid, workgroup by workgroup.

Workgroups run in order (x fastest, then y, then z), each with fresh `pk.shared` arrays (one
call of the generated `workgroup()`); inside a workgroup, invocations are numbered by their
linear local index (x fastest), which also makes the subgroups: lane = index % subgroup size.

- `run_sequential`: kernels that never synchronise. Each invocation runs to its end, in order.
- `run_lockstep`: kernels with barriers or subgroup exchanges, whose `invocation` is a
  generator. All invocations of a workgroup start and run until they stop at a barrier (they
  yield None), at a subgroup operation (they yield `(site, *args)`), or at their end. Then the
  subgroup operations are answered, for each subgroup and site the invocations waiting there
  together (the active set), and those invocations resume; once every live invocation waits at
  a barrier, all resume. So no invocation passes a barrier before the others have reached it,
  and a subgroup operation sees the values of all active invocations of its subgroup.

An invocation that has ended no longer takes part in barriers, as on GPUs where an exited
invocation does not hold a barrier back. Invocations past the grid end at the grid mask, except
in kernels with barriers, which have none (`ir.Kernel.masked`): there they run the body too.
Vulkan leaves barriers and subgroup operations in non-uniform control flow undefined; this is
the lenient reading: whoever reaches the same operation together takes part.
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
        """Answers every subgroup operation some invocation waits at; False if none does."""
        size = self.launch.subgroup_size
        groups: dict[tuple[int, int], list[int]] = {}
        for k in sorted(self.waiting):
            request = self.waiting[k]
            if request is not None:
                groups.setdefault((k // size, request[0]), []).append(k)
        for (_, site), members in sorted(groups.items()):
            args = [self.waiting[k][1:] for k in members]  # type: ignore[index]
            results = subgroups.exchange(self.launch.subgroup_sites[site],
                                         [k % size for k in members], args, size)
            for k, result in zip(members, results, strict=True):
                self.resume(k, result)
        return bool(groups)


SCHEDULES: dict[bool, Callable[[Launch], None]] = {
    False: run_sequential,
    True: run_lockstep,
}
