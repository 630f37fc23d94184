"""One collective over a staged tensor, piece by piece, with the device copies overlapping
the MPI transfers.

The I/O thread of the group reads the pieces from the device in order; as each arrives the
calling thread starts its non-blocking MPI operation (in piece order, the same on every
rank); as each completes, the I/O thread writes it back to the device while MPI moves the
next ones. A tensor MPI works on directly (staging.zero_copy), or one of a single piece, is
done inline. All of it is polled with the group's deadline (waiting.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import numpy as np

from pykern.distributed.staging import Staged
from pykern.distributed.waiting import wait_for
from pykern.errors import DistributedError

Start = Callable[[np.ndarray], Any]  # a piece -> the MPI request moving it


def run(group: Any, what: str, stage: Staged, start: Start,
        after: Callable[[np.ndarray], None] | None = None, fetch: bool = True,
        store: bool = True) -> None:
    """Moves every piece of `stage`: read from the device (if `fetch`), `start(piece)`, then
    `after(piece)` and written back (if `store`) once its request completed."""
    keep = (stage.t, stage.host)
    try:
        if stage.direct or len(stage.pieces) == 1:
            piece = stage.fetch(0) if fetch else stage.piece(0)
            request = start(piece)
            wait_for(group, what, request.Test, keep)
            if after is not None:
                after(piece)
            if store:
                stage.store(0)
            return
        _overlapped(group, what, stage, start, after, fetch, store, keep)
    except DistributedError:
        raise
    except BaseException as error:  # a device error or an interrupt: transfers are in flight
        group.fail(f"{what} was interrupted by {type(error).__name__}: {error}", keep)
        raise


def _overlapped(group: Any, what: str, stage: Staged, start: Start,
                after: Callable[[np.ndarray], None] | None, fetch: bool, store: bool,
                keep: tuple[object, ...]) -> None:
    io = group.io
    count = len(stage.pieces)
    fetched: list[Future] = [io.submit(stage.fetch if fetch else stage.piece, i)
                             for i in range(count)]
    stored: list[Future] = []
    in_flight: deque[tuple[int, np.ndarray, Any]] = deque()
    started = 0

    def progress() -> bool:
        nonlocal started
        while started < count and fetched[started].done():
            piece = fetched[started].result()
            in_flight.append((started, piece, start(piece)))
            started += 1
        while in_flight and in_flight[0][2].Test():
            i, piece, _ = in_flight.popleft()
            if after is not None:
                after(piece)
            if store:
                stored.append(io.submit(stage.store, i))
        return started == count and not in_flight and all(f.done() for f in stored)

    wait_for(group, what, progress, keep)
    for f in stored:
        f.result()  # a device error of a write
