"""Running generated invocations over a launch grid, workgroup by workgroup.

Two schedules, chosen by whether the kernel has barriers:

- `run_sequential`: each invocation runs to its end, in order: workgroups in order (x fastest,
  then y, then z), the invocations of a workgroup in the same order.
- `run_lockstep`: for kernels whose `invocation` is a generator that yields at each barrier.
  All invocations of one workgroup are started, then advanced round by round, each round
  running every live invocation up to its next barrier (or its end), so no invocation passes a
  barrier before all others have reached it. Workgroup-shared memory belongs in this loop: a
  fresh buffer per workgroup, passed to `bind` (one `bind` per workgroup) or to `invocation`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

Invocation = Callable[..., Any]
Grid = tuple[int, int, int]


def num_groups(grid: Grid, workgroup: Grid) -> Grid:
    """ceil(grid / workgroup) per dimension."""
    groups = (-(-g // w) for g, w in zip(grid, workgroup, strict=True))
    return tuple(groups)  # type: ignore[return-value]


def workgroups(grid: Grid, workgroup: Grid) -> Iterator[tuple[Grid, list[tuple[int, ...]]]]:
    """For each workgroup in launch order: its id and the ids of its invocations, each as
    (gid0, gid1, gid2, lid0, lid1, lid2, grp0, grp1, grp2), the arguments of `invocation`."""
    wx, wy, wz = workgroup
    locals_ = [(x, y, z) for z in range(wz) for y in range(wy) for x in range(wx)]
    nx, ny, nz = num_groups(grid, workgroup)
    for gz, gy, gx in itertools.product(range(nz), range(ny), range(nx)):
        bx, by, bz = gx * wx, gy * wy, gz * wz
        yield (gx, gy, gz), [(bx + x, by + y, bz + z, x, y, z, gx, gy, gz)
                             for x, y, z in locals_]


def run_sequential(invocation: Invocation, grid: Grid, workgroup: Grid) -> None:
    """Runs every invocation to its end, one after the other."""
    for _, ids in workgroups(grid, workgroup):
        for args in ids:
            invocation(*args)


def run_lockstep(invocation: Invocation, grid: Grid, workgroup: Grid) -> None:
    """Runs the invocations of each workgroup round by round, a round ending at a barrier
    (`invocation` returns a generator; each `yield` is a barrier).

    An invocation that has ended no longer takes part in later barriers, as on GPUs where an
    exited invocation does not hold a barrier back (Vulkan leaves a barrier outside uniform
    control flow undefined; this is the lenient reading).
    """
    for _, ids in workgroups(grid, workgroup):
        live = [invocation(*args) for args in ids]
        while live:
            live = [g for g in live if _advance(g)]


def _advance(invocation: Iterator[object]) -> bool:
    """Runs one invocation up to its next barrier: True if it stopped at one, False at its end."""
    try:
        next(invocation)
    except StopIteration:
        return False
    return True


SCHEDULES: dict[bool, Callable[[Invocation, Grid, Grid], None]] = {
    False: run_sequential,
    True: run_lockstep,
}
