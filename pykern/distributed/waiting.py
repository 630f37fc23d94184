"""Waiting for non-blocking MPI work with a deadline: never a hang.

Every collective is started non-blocking and polled (`MPI_Test`, which also moves the
transfer on) until it completes. The wait gives up with a `pk.DistributedError` when the
group's timeout (PYKERN_TIMEOUT) has passed, or at once when a peer on this machine is seen
dead (peers.py). The poll spins for a short while (small collectives complete within
microseconds), then sleeps between polls, longer and longer up to a cap, so that a rank that
waits for a slower one leaves it the cores.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pykern.errors import DistributedError

if TYPE_CHECKING:
    from pykern.distributed.group import ProcessGroup

SPIN_SECONDS = 0.02  # polls with only a yield in between, first
MAX_PAUSE = 2e-4  # the longest sleep between two polls after that
LIVENESS_EVERY = 0.2  # seconds between two looks at the local peers' processes
DEAD_GRACE = 0.1  # how long work still may complete once a peer is seen dead


def wait_for(group: ProcessGroup, what: str, done: Callable[[], bool],
             keep: tuple[object, ...] = (), busy: Callable[[], bool] | None = None) -> None:
    """Polls `done()` (which tests the MPI requests and may start more) until it is True.
    On a timeout or a dead peer, the group is marked failed, `keep` (the memory MPI may still
    write into) is kept alive for good, and a DistributedError names what did not complete.
    While `busy()` says the wait is for this process's own work, the deadline moves on."""
    group.check_usable()
    start = time.monotonic()
    deadline = start + group.timeout
    next_look = start + LIVENESS_EVERY
    pause = 0.0
    while not _poll(group, what, done, keep):
        now = time.monotonic()
        if now >= next_look:
            dead = group.peers.dead()
            if dead:
                if _completes_anyway(group, what, done, keep):
                    return
                gone = ", ".join(group.peers.describe(r) for r in dead)
                raise group.fail(f"{what} cannot complete: {gone} has ended", keep)
            next_look = now + LIVENESS_EVERY
        if busy is not None and busy():
            deadline = now + group.timeout
        if now >= deadline:
            raise group.fail(
                f"{what} did not complete within {group.timeout:g} s (PYKERN_TIMEOUT): a "
                "peer process died, hangs, or did not call the same collectives in the same "
                "order", keep)
        if now - start < SPIN_SECONDS:
            os.sched_yield()
        else:
            pause = min(MAX_PAUSE, pause * 2 or 1e-5)
            time.sleep(pause)


def _completes_anyway(group: ProcessGroup, what: str, done: Callable[[], bool],
                      keep: tuple[object, ...]) -> bool:
    """Whether the work completes within DEAD_GRACE of a peer's end being seen: a peer that
    did its part of a collective (the last rank through a barrier) may end before this rank's
    last poll saw the transfer complete."""
    until = time.monotonic() + DEAD_GRACE
    while time.monotonic() < until:
        if _poll(group, what, done, keep):
            return True
        time.sleep(1e-3)
    return False


def _poll(group: ProcessGroup, what: str, done: Callable[[], bool],
          keep: tuple[object, ...]) -> bool:
    MPI = group.MPI
    try:
        return done()
    except MPI.Exception as error:
        raise group.fail(f"{what} failed in MPI: {error}", keep) from error


def raise_failure(error: BaseException) -> None:
    """Re-raises `error` (from another thread) as it is if it is a DistributedError, else as
    the cause of one."""
    if isinstance(error, DistributedError):
        raise error
    raise DistributedError(f"data-parallel communication failed: {error}") from error
