"""Consecutive launches of a replayed host graph that run on the calling thread, made by one
native call (`pykern.llvm.launch_list`) instead of one Python call each: a recorded training
step of small kernels spent more in the Python around each launch than in the kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pykern.llvm.launch_list import BLOCK, ENTRY, REST, TOTAL, new_records, run_launch_list
from pykern.llvm.pool import RUNNING, LaunchTimedOut, Watched

if TYPE_CHECKING:
    from pykern.jit.host_binding import PreparedLaunch


class LaunchRun:
    """Prepared launches (`HostProgram.prepare`, all on this thread, each decided to run on
    it: `HostProgram.runs_here`) made in order by `run`, under one watch of the timeout."""

    __slots__ = ("launches", "records", "stop")

    def __init__(self, launches: list[PreparedLaunch]) -> None:
        self.launches = launches
        self.records = new_records(len(launches))
        for record, launch in zip(self.records, launches):
            record[ENTRY] = launch.program.entry_address
            record[BLOCK] = launch.address
            record[TOTAL] = launch.total
        self.stop = launches[0].stop  # the thread's stop word, which every block names

    def __len__(self) -> int:
        return len(self.launches)

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
                    launch = self.launches[k]
                    launch.program.finish(launch, int(self.records[k, REST]))
                    k += 1
        except LaunchTimedOut as e:
            raise self.launches[min(k, count - 1)].program._timed_out(e.seconds) from None
