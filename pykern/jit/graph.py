"""`pk.graph()`: record the launches of a block once, replay them with one submit.

    x = pk.asarray(first_batch)
    with pk.graph() as g:          # runs the block once, as usual, and records its launches
        y = pk.relu(x @ w) * 2.0
    x[...] = pk.asarray(next_batch)  # new inputs go into the captured tensors
    g.replay()                     # the same launches again, on the same tensors
    y.numpy()                      # waits for the replay, as for any launch

The device records (runtime/submit/graph.py on Vulkan: one command buffer submitted once per replay;
runtime/host/host_graph.py on the host: the list of launches); this module is the user's handle on
it, with the checks that need the current device (docs/performance.md, "Recorded graphs").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.runtime import get_device
from pykern.jit.profile import name_program
from pykern.runtime.errors import GraphError
from pykern.runtime.submit.launch_profile import PROFILERS

__all__ = ["Graph", "GraphError", "graph"]


class Graph:
    """The launches recorded by one `with pk.graph() as g:` block, replayed by `g.replay()`.

    A replay runs the recorded kernels again on the same buffers with the same scalar
    arguments: the Python of the block (its shapes, branches, host-computed scalars) is not
    run again. The graph holds every buffer its launches use until it is deleted."""

    def __init__(self, strict: bool = False, locate: Callable[[], object] | None = None
                 ) -> None:
        """`strict` (for `pk.compile`): every host read inside is refused, not only of what the
        block wrote, and the graph keeps a log of its launches, each with `locate()`."""
        self._device: Any = None
        self._recorded: Any = None
        self._state = "new"  # new -> recording -> ready | failed
        self._strict = strict
        self._locate = locate

    def __enter__(self) -> Graph:
        if self._state != "new":
            raise GraphError("a pk.graph() records one block; make a new one for another")
        device = get_device()
        self._recorded = device.record_graph()
        self._device = device
        if self._strict:
            recorded = self._recorded
            recorded.refuse_all_reads = True
            recorded.locate = self._locate
            recorded.created = set()
            if getattr(recorded, "log", None) is None:
                recorded.log = []
        self._state = "recording"
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._device._end_graph(self._recorded)
        if exc_type is not None:
            # what was recorded is incomplete: let it go, and leave the device as it was
            self._state = "failed"
            self._release()
            return
        self._state = "ready"

    @property
    def launches(self) -> int:
        """How many launches were recorded."""
        return 0 if self._recorded is None else self._recorded.launches

    @property
    def log(self) -> list[tuple]:
        """What a strict graph recorded: (program, grid, buffers, block, where) per launch;
        an upload or copy has "upload" or "copy" in place of the program (see
        runtime/submit/graph.py)."""
        return [] if self._recorded is None else list(self._recorded.log or ())

    @property
    def created(self) -> set[int]:
        """The ids of the buffers made while a strict graph recorded."""
        return set() if self._recorded is None else set(self._recorded.created or ())

    @property
    def device(self) -> Any:
        """The device the graph was recorded on (None before the block)."""
        return self._device

    def replay(self) -> None:
        """Submits the recorded launches again, after everything launched so far, and returns
        at once; reading a result waits for the replay, as for any launch. Raises GraphError
        when the graph's device was closed or is no longer the current device."""
        if self._state != "ready":
            raise GraphError({
                "new": "g.replay() before the graph was recorded (use `with pk.graph() as g:`)",
                "recording": "g.replay() inside the pk.graph() block that records it",
                "failed": "g.replay() of a graph whose block raised an exception",
                "released": "g.replay() of a graph that was released",
            }[self._state])
        device = self._device
        if device.closed:
            raise GraphError(f"the graph was recorded on {device.info.name}, which is closed: "
                             "record it again on the current device")
        if get_device() is not device:
            raise GraphError(f"the graph was recorded on {device.info.name}, which is not the "
                             f"current device any more ({get_device().info.name}): "
                             "pk.set_device back to it, or record the graph again")
        if PROFILERS:  # pk.profile(): the replay is one row, timed as a whole
            self._profiled_replay()
            return
        device._replay_graph(self._recorded)

    def replay_queued(self) -> None:
        """`replay()` left in the device's open batch, for commands that follow it to join
        the same submit (the caller flushes the device); under `pk.profile()` it is
        submitted and timed on its own."""
        if PROFILERS or self._state != "ready" or self._device.closed \
                or get_device() is not self._device:
            self.replay()
            return
        self._device._replay_graph(self._recorded, submit=False)

    def _profiled_replay(self) -> None:
        name_program(self._recorded, f"pk.graph replay ({self.launches} launches)")
        timer = self._device.timer()
        with timer:
            self._device._replay_graph(self._recorded)
        for profiler in list(PROFILERS):
            profiler.launched(self._device, self._recorded, timer)

    def release(self) -> None:
        """Lets go of what the graph holds (also when it is deleted); it cannot be replayed
        after."""
        if self._state in ("ready", "failed"):
            self._state = "released"
            self._release()

    def _release(self) -> None:
        recorded, self._recorded = self._recorded, None
        if recorded is not None and not self._device.closed:
            self._device._release_graph(recorded)

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:  # noqa: BLE001 - interpreter shutdown, or a device already closed
            pass

    def __repr__(self) -> str:
        where = f" on {self._device.info.name}" if self._device is not None else ""
        return f"<pk.Graph {self._state}, {self.launches} launches{where}>"


def graph() -> Graph:
    """A graph to record the launches of a `with` block into, replayed by `g.replay()`:

        with pk.graph() as g:
            loss = train_step(x, y)
        for batch in batches:
            x[...] = pk.asarray(batch.x); y[...] = pk.asarray(batch.y)
            g.replay()
    """
    return Graph()
