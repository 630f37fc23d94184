"""Consecutive launches of a replayed host graph that run on the calling thread, made by one
native call (`pykern.llvm.launch_list`) instead of one Python call each: a recorded training
step of small kernels spent more in the Python around each launch than in the kernels. The
byte copies recorded between them (`NativeCopy`) are records of the same native call.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Union

from pykern.llvm.launch_list import (BLOCK, ENTRY, REST, TOTAL, copier_address, new_records,
                                     run_launch_list)
from pykern.llvm.pool import RUNNING, LaunchTimedOut, Watched

if TYPE_CHECKING:
    from pykern.jit.host_binding import PreparedLaunch


class NativeCopy:
    """A copy of `nbytes` bytes from address `source` to address `destination` (overlapping
    ranges too), as a record of a launch run: it always runs to its end."""

    __slots__ = ("block", "address")

    def __init__(self, destination: int, source: int, nbytes: int) -> None:
        self.block = (ctypes.c_int64 * 3)(destination, source, nbytes)
        self.address = ctypes.addressof(self.block)


Step = Union["PreparedLaunch", NativeCopy]


class LaunchRun:
    """Prepared launches (`HostProgram.prepare`, all on this thread, each decided to run on
    it: `HostProgram.runs_here`) and copies, made in order by `run`, under one watch of the
    timeout."""

    __slots__ = ("launches", "records", "stop", "kernel_launches")

    def __init__(self, launches: list[Step]) -> None:
        self.launches = launches
        self.records = new_records(len(launches))
        for record, launch in zip(self.records, launches):
            if isinstance(launch, NativeCopy):
                record[ENTRY] = copier_address()
                record[BLOCK] = launch.address
                record[TOTAL] = 1
            else:
                record[ENTRY] = launch.program.entry_address
                record[BLOCK] = launch.address
                record[TOTAL] = launch.total
        self.kernel_launches = sum(not isinstance(launch, NativeCopy) for launch in launches)
        # the thread's stop word, which every launch's block names (a run holds a launch:
        # `HostGraph._make_plan` leaves copies alone as Python steps)
        self.stop = next(launch.stop for launch in launches
                         if not isinstance(launch, NativeCopy))

    def __len__(self) -> int:
        """The kernel launches it makes (the device's command count), copies left out."""
        return self.kernel_launches

    def run(self, timeout: float | None) -> None:
        """Makes the launches; a `DeviceError` naming the kernel that ran past `timeout`
        seconds (counted from the first launch: the run is one submission)."""
        stop, count, k = self.stop, len(self.launches), 0
        stop.word.value = RUNNING
        try:
            with Watched(stop, timeout):
                while True:
                    k = run_launch_list(self.records, k, stop.address)
                    if k >= count or stop.stopped:
                        break
                    # the entry left workgroups (a failed proof): the checked entry runs them
                    # (a copy never stops short)
                    launch = self.launches[k]
                    launch.program.finish(launch, int(self.records[k, REST]))  # type: ignore
                    k += 1
        except LaunchTimedOut as e:
            raise self._launch_at(min(k, count - 1)).program._timed_out(e.seconds) from None

    def _launch_at(self, k: int) -> PreparedLaunch:
        """The launch at or before record `k` (a stop is looked at after copies too, so the
        record it names may be a copy: the kernel before it ran long)."""
        for launch in reversed(self.launches[:k + 1]):
            if not isinstance(launch, NativeCopy):
                return launch
        return next(launch for launch in self.launches  # type: ignore[return-value]
                    if not isinstance(launch, NativeCopy))
