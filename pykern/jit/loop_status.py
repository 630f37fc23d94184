"""The host side of loops cut short by the driver: a status buffer per compiled variant, read
when the launches that used it have run, and the `pk.DeviceError` a cut becomes (see
`pykern.spirv.loopcap` for the kernel side)."""

from __future__ import annotations

import linecache
from collections.abc import Sequence
from typing import Any

import numpy as np

from pykern.errors import DeviceError
from pykern.spirv.binding_plan import LOOP_STATUS_BUFFER
from pykern.spirv.loopcap import FIRST_SITE_WORD, LoopSite, status_words


class LoopStatus:
    """The status buffer of one variant whose loops report cuts, on one device.

    Every launch of the variant binds the same buffer; its words only grow (atomic counts), so
    nothing resets it between launches. After a launch, `watch` asks the device to read it
    once the launch's batch has finished (once per batch); a count that grew since the last
    read becomes a `pk.DeviceError`, raised by the wait that finds it (`t.numpy()`, `pk.sync()`,
    the copy back of numpy arguments).
    """

    def __init__(self, device: Any, kernel_name: str, sites: Sequence[LoopSite],
                 slot: int) -> None:
        self.kernel_name = kernel_name
        self.sites = tuple(sites)
        self.slot = slot  # the index of the status buffer among the launch's buffers
        self._device = device
        self._seen = np.zeros(status_words(self.sites), np.uint32)
        # made while a graph records (a variant built on its first launch inside pk.graph()
        # or pk.compile): part of the variant, not of the graph, whose replays must not
        # zero it again
        pause = getattr(device, "pause_graph", None)
        graph = pause() if pause is not None else None
        try:
            self.buffer = device.create_buffer(self._seen.nbytes)
            self.buffer.upload(self._seen)
        finally:
            if graph is not None:
                device.resume_graph(graph)
        self._watched = -1  # the batch serial of the last launch watched

    @staticmethod
    def slot_of(layout: Any) -> int | None:
        """The index of the status buffer's slot in `layout.buffers`, or None."""
        return layout.buffer_index(LOOP_STATUS_BUFFER)

    def watch(self) -> None:
        """Called after each launch that bound the buffer."""
        serial = self.buffer.use_serial  # the batch the launch was recorded into
        if serial != self._watched:
            self._watched = serial
            self._device.after(serial, self._check)

    def _check(self) -> None:
        now = np.empty_like(self._seen)
        self.buffer.read_into(now)
        seen, self._seen = self._seen, now
        info = self._device.info
        error = cut_error(self.kernel_name, info.name, info.limits.loop_iteration_cap,
                          self.sites, seen, now)
        if error is not None:
            raise error


def cut_error(kernel_name: str, device_name: str, cap: int | None,
              sites: Sequence[LoopSite], seen: np.ndarray, now: np.ndarray) -> DeviceError | None:
    """The error to raise when the status buffer went from words `seen` to `now` (the counts
    of cut invocations per site grew), or None."""
    grown = [s for s in range(len(sites)) if now[FIRST_SITE_WORD + s] != seen[FIRST_SITE_WORD + s]]
    if not grown:
        return None
    site = sites[grown[0]]
    count = int(now[FIRST_SITE_WORD + grown[0]] - seen[FIRST_SITE_WORD + grown[0]]) & 0xFFFFFFFF
    limit = f"{cap:,} loop iterations" if cap is not None else "a number of loop iterations"
    others = f" (and {len(grown) - 1} other loops)" if len(grown) > 1 else ""
    text = (f"{site.loc}: kernel '{kernel_name}': {device_name} stops every invocation after "
            f"{limit} in total (all its loops together), and this {site.what} was cut short "
            f"in {count:,} invocation{'s' if count != 1 else ''}{others}: the results of the "
            f"launch are wrong. Give each invocation fewer iterations (more invocations, each "
            f"with a share of the work).")
    line = linecache.getline(site.loc.file, site.loc.line)
    return DeviceError(f"{text}\n    {line.strip()}" if line else text)
