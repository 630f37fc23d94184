"""The threads that run a launch's workgroups: one pool per process, sized to the cores this
process may run on, created on first use.

A launch's workgroups are cut into contiguous chunks, a few per thread so that a thread slowed
by the rest of the machine does not hold the launch up; the calling thread and the pool's
threads take the next chunk until none is left. The native entry is a ctypes `CFUNCTYPE` function,
whose calls release the GIL, so the chunks run in parallel. Workgroups are independent (each
has its own `pk.shared` memory and barriers, on the stack of the thread running it), so any
split gives the same results, except where workgroups race through atomics on one location:
then the order of the updates (old values returned, float sums) is the threads' order, as on
a GPU.
"""

from __future__ import annotations

import functools
import os
import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

CHUNKS_PER_THREAD = 4


def core_count() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity masks (macOS, Windows)
        return max(1, os.cpu_count() or 1)


@functools.lru_cache(maxsize=1)
def _executor() -> ThreadPoolExecutor:
    # the caller runs one chunk itself, so one thread fewer than the cores
    return ThreadPoolExecutor(max_workers=max(1, core_count() - 1),
                              thread_name_prefix="pykern-host")


def chunks(total: int, threads: int) -> list[tuple[int, int]]:
    """`range(total)` cut into at most `CHUNKS_PER_THREAD * threads` contiguous, nearly equal
    (first, end) ranges, in order.

    >>> chunks(10, 1)
    [(0, 10)]
    >>> chunks(10, 2)
    [(0, 2), (2, 4), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9), (9, 10)]
    """
    if total == 0:
        return []
    if threads <= 1:
        return [(0, total)]
    count = min(total, CHUNKS_PER_THREAD * threads)
    size, extra = divmod(total, count)
    bounds, first = [], 0
    for k in range(count):
        end = first + size + (1 if k < extra else 0)
        bounds.append((first, end))
        first = end
    return bounds


def run_workgroups(entry: Callable[[int, int, int], None], block: int, total: int,
                   threads: int | None = None) -> None:
    """Runs workgroups 0 to `total - 1` through `entry(block, first, end)`, on `threads`
    threads (default: one per core): the caller and `threads - 1` pool threads take the next
    chunk until none is left."""
    threads = core_count() if threads is None else threads
    ranges = chunks(total, threads)
    if len(ranges) <= 1:
        for first, end in ranges:
            entry(block, first, end)
        return
    todo: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
    for r in ranges:
        todo.put(r)

    def drain() -> None:
        while True:
            try:
                first, end = todo.get_nowait()
            except queue.Empty:
                return
            entry(block, first, end)

    helpers = [_executor().submit(drain) for _ in range(min(threads, len(ranges)) - 1)]
    drain()
    for f in helpers:
        f.result()
