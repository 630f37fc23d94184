"""Recorded graphs on the host device: the launches and uploads made while a graph records,
kept as a list and run again in order by `replay`.

Launches on the host run to completion as they are made, so while recording each one runs as
usual and is then noted: its program, grid, buffers and a copy of its argument block. The
graph holds the buffers (a temporary that an op let go of keeps its memory, so nothing made
later can share it), and an upload keeps a copy of its bytes. Vulkan-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import GraphError

if TYPE_CHECKING:
    from .host_buffer import HostBuffer
    from .host_device import HostDevice


class HostGraph:
    """The recorded steps of one `pk.graph()` block on the host device."""

    def __init__(self, device: HostDevice) -> None:
        self.device = device
        self.launches = 0
        self.recording = True
        self.released = False
        # (program, grid, buffers, block) for a launch; (None, offset, (buffer,), bytes) for
        # an upload
        self._steps: list[tuple[object, object, tuple, object]] = []
        self._written: set[int] = set()  # ids of buffers a recorded step writes (held below)

    def record_launch(self, program: object, grid: tuple[int, int, int],
                      buffers: Sequence[HostBuffer | None], block: object) -> None:
        """Notes a launch that has just run."""
        held = tuple(buffers)
        self._steps.append((program, grid, held, list(block)))  # type: ignore[call-overload]
        # a program that says which buffers it writes (the host backend's do); else all
        writes = getattr(program, "writes_mask", ())
        for i, buf in enumerate(held):
            if buf is not None and (i >= len(writes) or writes[i]):
                self._written.add(id(buf))
        self.launches += 1

    def record_upload(self, buf: HostBuffer, data: memoryview, offset: int) -> None:
        """Notes an upload of `data` (copied) into `buf` at byte `offset`."""
        self._steps.append((None, offset, (buf,), bytes(data)))
        self._written.add(id(buf))

    def check_read(self, buf: HostBuffer, what: str) -> None:
        """Refuses a host read of a buffer that a recorded step wrote (see graph.py)."""
        if id(buf) in self._written:
            raise GraphError(
                f"{what} inside pk.graph(): it reads a result of the launches being recorded, "
                "and a replay re-runs the kernels, not the Python around them. Read results "
                "after the block (or after g.replay())."
            )

    def end(self) -> None:
        self.recording = False

    def replay(self) -> None:
        """Runs the recorded steps again, in order."""
        for program, grid, buffers, block in self._steps:
            if program is None:
                buffers[0].memory[grid:grid + len(block)] = memoryview(block)  # type: ignore
                continue
            addresses, sizes = [], []
            for buf in buffers:
                if buf is None:
                    addresses.append(0)
                    sizes.append(0)
                elif buf.freed:
                    raise GraphError("a buffer that the graph's launches use was freed: the "
                                     "graph cannot be replayed")
                else:
                    addresses.append(buf.address)
                    sizes.append(buf.nbytes)
            self.device._commands += 1
            program.run(grid, addresses, sizes, list(block),  # type: ignore[attr-defined]
                        self.device.timeout)

    def release(self) -> None:
        """Lets go of the buffers and blocks (their memory is freed as usual)."""
        self.released = True
        self.recording = False
        self._steps.clear()
        self._written.clear()
