"""Launch capture: while an op of the tensor library runs its Python for the first time with a
given signature, the launches it makes are noted here, so that later calls with the same
signature can make them again without that Python (`pykern.tensor.core.dispatch`). A launch of a
variant whose loops report cuts (lavapipe's loop budget) notes the watch it calls after each
launch, and a replay calls it too.

A capture notes, for each launch, the program, grid, argument block and buffers as the device
receives them, and which buffers the op created (`created`, from `pk.empty`); anything a replay
could not repeat — a debug or interpreted launch, a launch whose loop counters are read back,
numpy arguments copied back — marks the capture `unrepeatable`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Capture:
    """The launches of one op call, as the device received them."""

    __slots__ = ("launches", "created", "unrepeatable", "thread")

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.launches: list[tuple[Any, tuple[int, int, int], Any, list, Any]] = []
        self.created: dict[int, Any] = {}  # id(buffer) -> buffer, for the buffers pk.empty made
        self.unrepeatable = False


# The capture in progress, if any. Another thread's launches meanwhile are its own ops, not
# part of the one captured: they are left out (`thread`).
ACTIVE: list[Capture | None] = [None]


def note_launch(program: Any, grid: tuple[int, int, int], block: Any, buffers: list,
                repeatable: bool, watch: Callable[[], None] | None = None) -> None:
    """Called by `Kernel._launch` while a capture is active; `watch` is what the launch calls
    after the device took it (a variant whose loops report cuts: `LoopStatus.watch`)."""
    capture = ACTIVE[0]
    if capture is None or capture.thread != threading.get_ident():
        return
    if not repeatable:
        capture.unrepeatable = True
    capture.launches.append((program, grid, block, list(buffers), watch))


def note_created(buffer: Any) -> None:
    """Called by `pk.empty` while a capture is active."""
    capture = ACTIVE[0]
    if capture is not None and capture.thread == threading.get_ident():
        capture.created[id(buffer)] = buffer


def mark_unrepeatable() -> None:
    """Called where an op does what a replay would not: uploads, host reads, interpretation."""
    capture = ACTIVE[0]
    if capture is not None and capture.thread == threading.get_ident():
        capture.unrepeatable = True
