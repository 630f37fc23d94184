"""Recorded graphs on the host device: the launches, uploads and copies made while a graph
records, kept as a list and run again in order by `replay`.

Launches on the host run to completion as they are made, so while recording each one runs as
usual and is then noted: its program, grid, buffers and a copy of its argument block. The
graph holds the buffers (a temporary that an op let go of keeps its memory, so nothing made
later can share it), and an upload keeps a copy of its bytes. Vulkan-free.

A graph may keep a log of what it records (`log`, with where each entry was made: `locate`),
as the Vulkan graph does (runtime/submit/graph.py); here the log is the list of steps itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import GraphError

if TYPE_CHECKING:
    from .host_buffer import HostBuffer
    from .host_device import HostDevice

UPLOAD, COPY = "upload", "copy"  # the program slot of a step that is not a launch


def copy_bytes(src: HostBuffer, src_offset: int, dst: HostBuffer, dst_offset: int,
               nbytes: int) -> None:
    """Copies `nbytes` bytes between two host buffers (overlapping ranges too)."""
    dst.memory[dst_offset:dst_offset + nbytes] = src.memory[src_offset:src_offset + nbytes]


class HostGraph:
    """The recorded steps of one `pk.graph()` block on the host device."""

    def __init__(self, device: HostDevice) -> None:
        self.device = device
        self.launches = 0
        self.recording = True
        self.released = False
        self.locate: Callable[[], object] | None = None
        self.refuse_all_reads = False  # refuse every host read, not only of recorded writes
        self.created: set[int] | None = None  # ids of the buffers made meanwhile, if asked
        # (program, grid, buffers, block, where) for a launch; (UPLOAD, offset, (buffer,),
        # bytes, where) for an upload; (COPY, (src offset, dst offset, nbytes), (src, dst),
        # b"", where) for a copy
        self._steps: list[tuple[object, object, tuple, object, object]] = []
        self._written: set[int] = set()  # ids of buffers a recorded step writes (held below)
        self._held: list[HostBuffer] = []  # every buffer once, for the check at replay
        self._seen: set[int] = set()
        # the steps as replays make them: a launch prepared once where its program can
        # (`prepare`: its block packed with the buffers' addresses), per thread
        self._prepared: list[tuple[object, object]] | None = None
        self._prepared_on = 0
        # what `replay` makes: (step, prepared launch or None), or (None, a run of launches
        # made by one native call); made again while some launch's thread is undecided
        self._plan: list[tuple[object, object]] | None = None
        self._settled = False

    @property
    def log(self) -> list[tuple[object, object, tuple, object, object]]:
        """The steps recorded, in order (see the module docstring)."""
        return self._steps

    def _hold(self, buffers: Sequence[HostBuffer | None]) -> None:
        for buf in buffers:
            if buf is not None and id(buf) not in self._seen:
                self._seen.add(id(buf))
                self._held.append(buf)

    def _where(self) -> object:
        return self.locate() if self.locate is not None else None

    def record_launch(self, program: object, grid: tuple[int, int, int],
                      buffers: Sequence[HostBuffer | None], block: object) -> None:
        """Notes a launch that has just run."""
        held = tuple(buffers)
        self._steps.append((program, grid, held, list(block),  # type: ignore[call-overload]
                            self._where()))
        self._hold(held)
        # a program that says which buffers it writes (the host backend's do); else all
        writes = getattr(program, "writes_mask", ())
        for i, buf in enumerate(held):
            if buf is not None and (i >= len(writes) or writes[i]):
                self._written.add(id(buf))
        self.launches += 1

    def record_upload(self, buf: HostBuffer, data: memoryview, offset: int) -> None:
        """Notes an upload of `data` (copied) into `buf` at byte `offset`."""
        self._steps.append((UPLOAD, offset, (buf,), bytes(data), self._where()))
        self._hold((buf,))
        self._written.add(id(buf))

    def record_copy(self, src: HostBuffer, src_offset: int, dst: HostBuffer, dst_offset: int,
                    nbytes: int) -> None:
        """Notes a copy of `nbytes` bytes between two buffers."""
        self._steps.append((COPY, (src_offset, dst_offset, nbytes), (src, dst), b"",
                            self._where()))
        self._hold((src, dst))
        self._written.add(id(dst))

    def check_read(self, buf: HostBuffer, what: str) -> None:
        """Refuses a host read of a buffer that a recorded step wrote (see graph.py)."""
        if self.refuse_all_reads:
            raise GraphError(f"{what} inside a recorded function: a replay runs the kernels "
                             "again, not the Python that reads values and decides on them")
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
        for buf in self._held:
            if buf._memory is None:  # freed (the property, read per buffer, costs more)
                raise GraphError("a buffer that the graph's launches use was freed: the "
                                 "graph cannot be replayed")
        device = self.device
        timeout = device.timeout
        if self._plan is None or self._prepared_on != threading.get_ident():
            self._make_plan()
        for step, prepared in self._plan:  # type: ignore[union-attr]
            if step is None:  # consecutive launches made by one native call
                device._commands += len(prepared)  # type: ignore[arg-type]
                prepared.run(timeout)  # type: ignore[union-attr]
            elif prepared is not None:
                device._commands += 1
                step[0].run_prepared(prepared, timeout)  # type: ignore[index, union-attr]
            else:
                self._replay_step(step, timeout)
        if not self._settled:
            self._plan = None  # made again once every launch's thread is decided

    def _make_plan(self) -> None:
        """The steps as `replay` makes them, for this thread: each launch prepared once where
        its program can (`prepare`: its block packed with the buffers' addresses), and runs of
        consecutive prepared launches that run on this thread (`runs_here`), with the copies
        between them, grouped into one native call where the program offers it
        (`launch_run`)."""
        if self._prepared is None or self._prepared_on != threading.get_ident():
            self._prepare()
        plan: list[tuple[object, object]] = []
        group: list[tuple[object, object]] = []  # (step, what the run makes of it)
        self._settled = True

        def flush() -> None:
            launches = [item for _, item in group if not isinstance(item, tuple)]
            if launches:
                plan.append((None, launches[0].program.launch_run(  # type: ignore[attr-defined]
                    [item for _, item in group])))
            else:  # copies alone: no program to make them natively
                plan.extend((step, None) for step, _ in group)
            group.clear()

        for step, launch in self._prepared:  # type: ignore[union-attr]
            if step[0] is COPY:  # type: ignore[index]
                # a copy joins the run around it: (destination, source, bytes) addresses
                (src_offset, dst_offset, nbytes), (src, dst) = step[1], step[2]  # type: ignore
                group.append((step, (dst.address + dst_offset, src.address + src_offset,
                                     nbytes)))
                continue
            here = None
            if launch is not None and hasattr(step[0], "launch_run"):  # type: ignore[index]
                here = step[0].runs_here(launch)  # type: ignore[index, union-attr]
                self._settled = self._settled and here is not None
            if here:
                group.append((step, launch))
                continue
            flush()
            plan.append((step, launch))
        flush()
        self._plan = plan

    def _prepare(self) -> None:
        """Each step with its prepared launch (None where it has none), for this thread."""
        prepared = []
        for step in self._steps:
            program, grid, buffers, block, _ = step
            launch = None
            if not isinstance(program, str) and hasattr(program, "prepare"):
                addresses = [0 if b is None else b.address for b in buffers]
                sizes = [0 if b is None else b.nbytes for b in buffers]
                launch = program.prepare(grid, addresses, sizes, block)  # type: ignore
            prepared.append((step, launch))
        self._prepared = prepared
        self._prepared_on = threading.get_ident()

    def _replay_step(self, step: tuple, timeout: float) -> None:
        """An upload, a copy, or a launch without a prepared form (a debug kernel's)."""
        program, grid, buffers, block, _ = step
        if program is UPLOAD:
            buffers[0].memory[grid:grid + len(block)] = memoryview(block)
        elif program is COPY:
            copy_bytes(buffers[0], grid[0], buffers[1], grid[1], grid[2])
        else:
            addresses = [0 if b is None else b.address for b in buffers]
            sizes = [0 if b is None else b.nbytes for b in buffers]
            self.device._commands += 1
            program.run(grid, addresses, sizes, list(block), timeout)

    def release(self) -> None:
        """Lets go of the buffers and blocks (their memory is freed as usual)."""
        self.released = True
        self.recording = False
        self._steps.clear()
        self._written.clear()
        self._held.clear()
        self._seen.clear()
        self._prepared = None
