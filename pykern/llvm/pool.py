"""The threads that run a launch's workgroups: one pool per process, a thread per core this
process may run on, created on first use; and the launch's stop word, which ends a launch
that runs past its time or is interrupted (`pykern.llvm.stopping`).

A launch's workgroups are cut into contiguous chunks, a few per thread so that a thread slowed
by the rest of the machine does not hold the launch up; the pool's threads take the next chunk
until none is left. The native entry is a ctypes `CFUNCTYPE` function, whose calls release the
GIL, so the chunks run in parallel. Workgroups are independent (each has its own `pk.shared`
memory and barriers, on the stack of the thread running it), so any split gives the same
results, except where workgroups race through atomics on one location: then the order of the
updates (old values returned, float sums) is the threads' order, as on a GPU.

The calling thread takes chunks too only where they cannot run long (a kernel without loops),
or runs a launch whole where the same kernel over the same grid ran briefly on one thread
before (`watched`): handing a short launch to a pool thread costs more than it runs, above
all on a loaded machine. A watchdog thread stops such a launch at its deadline; Ctrl-C there
is raised once it returns (the native code cannot be interrupted by Python, and runs only as
long as it did before unless its loops depend on the data). Else the pool's threads run the
launch while the caller waits for them in short slices, so that Python runs its signal
handlers meanwhile: Ctrl-C raises KeyboardInterrupt in the caller
within a slice (the pool's threads block SIGINT, so it is delivered to a thread that can take
it). Then, or when the launch's time (PYKERN_TIMEOUT) is up, the caller sets the stop word: the
native code polls it and returns, the threads take no further chunk, and once every one has
returned the caller raises (KeyboardInterrupt, or `LaunchTimedOut`). Nothing of the launch
runs after that, so the memory it used may be reused at once.
"""

from __future__ import annotations

import ctypes
import functools
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import NamedTuple

from pykern.runtime.errors import PykernError

CHUNKS_PER_THREAD = 4
WAIT_SLICE_S = 0.05  # how long the caller waits between two looks at signals and the clock
# what the stop word holds: 0 while the launch runs
RUNNING, TIMED_OUT, INTERRUPTED = 0, 1, 2


class LaunchTimedOut(PykernError):
    """A launch ran longer than its timeout and was stopped (the launcher names it to the
    user as a `pk.DeviceError`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the launch did not finish within {seconds:g} s")
        self.seconds = seconds


class StopWord:
    """A launch's stop word: an i32 the native code polls (its address goes into the argument
    block); nonzero stops the launch."""

    __slots__ = ("word", "address")

    def __init__(self) -> None:
        self.word = ctypes.c_int32(RUNNING)
        self.address = ctypes.addressof(self.word)

    def set(self, reason: int) -> None:
        """Stops the launch (`TIMED_OUT` or `INTERRUPTED`)."""
        # an aligned 4-byte store, which the native side's atomic loads see whole
        self.word.value = reason

    @property
    def stopped(self) -> bool:
        """Whether the launch was stopped."""
        return self.word.value != RUNNING


_STOP_WORDS = threading.local()


def thread_stop_word() -> StopWord:
    """This thread's stop word, running again: launches on one thread follow each other (a
    launch returns once nothing of it runs any more), so they share one."""
    stop = getattr(_STOP_WORDS, "word", None)
    if stop is None:
        stop = _STOP_WORDS.word = StopWord()
    else:
        stop.word.value = RUNNING
    return stop


def core_count() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity masks (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _block_interrupts() -> None:
    """In a pool thread: SIGINT goes to another thread (one that runs Python's handlers)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@functools.lru_cache(maxsize=1)
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=core_count(), thread_name_prefix="pykern-host",
                              initializer=_block_interrupts)


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


Entry = Callable[[int, int, int], int]


def run_watched(entry: Entry, block: int, total: int, stop: StopWord, timeout: float | None,
                fallback: Callable[[], Entry]) -> None:
    """Runs workgroups 0 to `total - 1` on the calling thread (see the module docstring),
    stopped by the watchdog after `timeout` seconds (`LaunchTimedOut`)."""
    with Watched(stop, timeout):
        rest = entry(block, 0, total)
        if rest < total and not stop.stopped:
            rest = fallback()(block, rest, total)
            assert rest >= total or stop.stopped, "the fallback entry left workgroups"


class Watched:
    """`with Watched(stop, timeout):` native code run on the calling thread inside the block
    is stopped (through `stop`) by the watchdog after `timeout` seconds, and the block then
    raises `LaunchTimedOut` (one launch's watch in `run_watched`, a run of launches' in a
    replayed host graph)."""

    __slots__ = ("stop", "timeout", "thread")

    def __init__(self, stop: StopWord, timeout: float | None) -> None:
        self.stop, self.timeout, self.thread = stop, timeout, threading.get_ident()

    def __enter__(self) -> None:
        if self.timeout is not None:
            _WATCHDOG.arm(self.thread, self.stop, time.monotonic() + self.timeout)

    def __exit__(self, kind: object, *_: object) -> None:
        if self.timeout is not None:
            _WATCHDOG.disarm(self.thread)
        if kind is None and self.stop.word.value == TIMED_OUT:
            raise LaunchTimedOut(self.timeout)  # type: ignore[arg-type]


class _Watchdog:
    """One daemon thread, started on first use, that looks every WAIT_SLICE_S and sets the
    stop word of a watched launch past its deadline."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[StopWord, float]] = {}  # thread -> (stop, deadline)
        self._started = False

    def arm(self, thread: int, stop: StopWord, deadline: float) -> None:
        self._watched[thread] = (stop, deadline)
        if not self._started:
            with self._lock:
                if not self._started:
                    threading.Thread(target=self._watch, daemon=True,
                                     name="pykern-host-watchdog").start()
                    self._started = True

    def disarm(self, thread: int) -> None:
        self._watched.pop(thread, None)

    def _watch(self) -> None:
        while True:
            time.sleep(WAIT_SLICE_S)
            now = time.monotonic()
            for stop, deadline in list(self._watched.values()):
                if now >= deadline:
                    stop.set(TIMED_OUT)


_WATCHDOG = _Watchdog()


def run_workgroups(entry: Entry, block: int, total: int, threads: int | None = None,
                   stop: StopWord | None = None, timeout: float | None = None,
                   inline: bool = True, fallback: Callable[[], Entry] | None = None) -> float:
    """Runs workgroups 0 to `total - 1` through `entry(block, first, end)`, on `threads`
    threads (default: one per core). With `inline` (only for work that cannot run long: the
    calling thread cannot be stopped while it runs a chunk), the calling thread takes chunks
    too, and a launch of one chunk runs there alone; else the pool's threads run it while the
    caller waits. A launch is stopped (through `stop`, whose address the block holds) on
    KeyboardInterrupt or after `timeout` seconds (`LaunchTimedOut`).

    `entry` returns the first workgroup of its range it did not run (`pykern.llvm.module`:
    one whose proof failed); what is left of each range then runs through `fallback()`, an
    entry that runs every workgroup.

    Returns the seconds the workgroups ran, summed over the threads that ran them: the work
    of the launch, without handing it to the pool, waiting for it or compiling the
    fallback (what a launcher weighs against the cost of the pool)."""
    threads = core_count() if threads is None else threads
    deadline = None if timeout is None else _Deadline(time.monotonic() + timeout, timeout)
    busy: list[float] = []
    left = _run(entry, block, chunks(total, threads), threads, stop, deadline, inline, busy)
    if left and not (stop is not None and stop.stopped):
        assert fallback is not None, "an entry without a fallback left workgroups"
        rest = _run(fallback(), block, left, threads, stop, deadline, inline, busy)
        assert not rest, "the fallback entry left workgroups"
    return sum(busy)


class _Deadline(NamedTuple):
    at: float  # time.monotonic()
    seconds: float  # the launch's timeout


def _run(entry: Entry, block: int, ranges: list[tuple[int, int]], threads: int,
         stop: StopWord | None, deadline: _Deadline | None, inline: bool,
         busy: list[float]) -> list[tuple[int, int]]:
    """Runs `ranges` of workgroups through `entry`; what it left of them. Each chunk's
    running time is appended to `busy`."""
    left: list[tuple[int, int]] = []
    if not ranges:
        return left
    if (inline and len(ranges) <= 1) or stop is None:
        start = time.perf_counter()
        for first, end in ranges:
            rest = entry(block, first, end)
            if rest < end:
                left.append((rest, end))
        busy.append(time.perf_counter() - start)
        return left
    todo: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
    for r in ranges:
        todo.put(r)

    def drain() -> None:
        while not stop.stopped:
            try:
                first, end = todo.get_nowait()
            except queue.Empty:
                return
            start = time.perf_counter()
            rest = entry(block, first, end)
            busy.append(time.perf_counter() - start)  # list.append is atomic
            if rest < end:
                left.append((rest, end))

    # the calling thread takes chunks too where they cannot run long; else it only waits,
    # ready for Ctrl-C and the deadline
    helpers = min(threads, len(ranges)) - (1 if inline else 0)
    workers = [_executor().submit(drain) for _ in range(helpers)]
    if inline:
        try:
            drain()
        except BaseException:  # KeyboardInterrupt between two chunks
            stop.set(INTERRUPTED)
            _finish(workers)
            raise
    _wait(workers, stop, deadline)
    return sorted(left)


def _wait(workers: list[Future], stop: StopWord, deadline: _Deadline | None) -> None:
    """Waits for `workers` in slices; stops them on an interrupt or at the deadline."""
    try:
        for worker in workers:
            while not _returned(worker):
                if deadline is not None and time.monotonic() >= deadline.at:
                    stop.set(TIMED_OUT)
                    _finish(workers)
                    raise LaunchTimedOut(deadline.seconds) from None
    except BaseException as e:  # KeyboardInterrupt, or what a signal handler raised
        if not isinstance(e, LaunchTimedOut):
            stop.set(INTERRUPTED)
            _finish(workers)
        raise


def _finish(workers: list[Future]) -> None:
    """Waits until every worker has returned (each does within a poll of the stop word): the
    launch's memory must outlive them. A second Ctrl-C meanwhile is raised after."""
    interrupted: BaseException | None = None
    for worker in workers:
        while True:
            try:
                if _returned(worker):
                    break
            except KeyboardInterrupt as e:
                interrupted = e
            except Exception:  # noqa: BLE001 - the worker's own error: it has returned
                break
    if interrupted is not None:
        raise interrupted


def _returned(worker: Future) -> bool:
    """Whether `worker` has returned, waiting a slice of time for it (its error, if it
    raised one, is raised here)."""
    try:
        worker.result(timeout=WAIT_SLICE_S)
    except FutureTimeout:
        return False
    return True
