"""Timing each launch for a profiler above the runtime (`pk.profile()`).

While `PROFILERS` is not empty, every `Device.launch` (Vulkan or host) goes through
`profiled_launch`: the launch is recorded inside the device's own timer (`device.timer()`:
GPU timestamps on a Vulkan device, the wall time of the launch on the host device, whose
launches finish before they return), and each profiler is told of it with its timer, which it
reads later (reading a GPU timer waits for that launch only). Launches made while a graph
records are run and reported without a timer: a graph's recording holds no timestamps. An
empty list costs each launch one truthiness test.

The runtime knows nothing of kernels: a profiler names launches by their program.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import DeviceError


class LaunchProfiler(Protocol):
    def launched(self, device: Any, program: Any, timer: Any) -> None:
        """`program` was launched on `device`; `timer.elapsed_ns` is its time (None: untimed)."""


PROFILERS: list[LaunchProfiler] = []  # the profilers collecting now, outermost first


class RecordingTimer:
    """For a device without timestamps: the time it took to record the launch."""

    def __enter__(self) -> RecordingTimer:
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed_ns = float(time.perf_counter_ns() - self._start)


def profiled_launch(device: Any, program: Any, launch: Callable[[], None]) -> None:
    """Runs `launch()` (the device's own recording of the launch of `program`) timed, and
    tells every profiler in `PROFILERS` of it."""
    timer: Any = None
    if not device.graph_recording:
        timer = device.timer()
        try:
            timer.__enter__()
        except DeviceError:  # a queue without timestamps (timestampValidBits 0)
            timer = RecordingTimer().__enter__()
    try:
        launch()
    finally:
        if timer is not None:
            timer.__exit__(None, None, None)
    for profiler in list(PROFILERS):
        profiler.launched(device, program, timer)
