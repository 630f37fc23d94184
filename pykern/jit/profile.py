"""`pk.profile()`: the device time of each kernel launched inside a `with` block.

    with pk.profile() as prof:        # prints the table when the block ends
        for _ in range(10):
            y = pk.softmax(x @ w, axis=-1)
    prof.stats()                      # the rows, as KernelTime tuples

Every launch made inside is timed by its device (`runtime/submit/launch_profile.py`): GPU timestamps
around it on a Vulkan device, the wall time of the launch on the host device. That covers the
kernels users launch, the op library's (also the launches an op replays without its Python)
and `@pk.fuse`'s; a `g.replay()` of a `pk.graph()` is one row of its own, timed as a whole.
Launches made while a graph records run and are counted but not timed (a graph's recording
holds no timestamps). The results are what they would be without the profile; leaving the
block waits for the profiled work, to read its timers.

Profiles nest: an inner one sees the launches made inside it, and the outer one sees them too.
A profile is process-wide: launches of other threads meanwhile are counted as well.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, NamedTuple, TextIO

from pykern.runtime.submit.launch_profile import PROFILERS

__all__ = ["KernelTime", "Profile", "name_program", "profile"]

UNNAMED = "(a program launched through the runtime)"
_NAMES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def name_program(program: Any, name: str) -> None:
    """Names `program` in profiles (the kernel whose variant it runs)."""
    try:
        _NAMES[program] = name
    except TypeError:  # a program that cannot be weakly referenced goes unnamed
        pass


def program_name(program: Any) -> str | None:
    """The name `name_program` gave `program`, or None."""
    try:
        return _NAMES.get(program)
    except TypeError:
        return None


class KernelTime(NamedTuple):
    """One row of a profile: a kernel, its launches, and their device time in seconds."""

    name: str
    calls: int
    total_s: float
    mean_s: float  # over the timed calls (launches made while a graph recorded are not)
    share: float  # of the profile's total time, 0 to 1
    untimed: int  # calls made while a graph recorded


class Profile:
    """Collects the launches made while it is active; see the module's docstring."""

    def __init__(self, show: bool = True, file: TextIO | None = None) -> None:
        self.show = show
        self.file = file
        self._launches: list[tuple[str, Any]] = []  # (kernel name, timer or None)
        self._times: list[tuple[str, float | None]] | None = None
        self._active = False

    def __enter__(self) -> Profile:
        if self._active or self._times is not None:
            raise RuntimeError("a pk.profile() measures one block; make a new one")
        self._active = True
        PROFILERS.append(self)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        PROFILERS.remove(self)
        self._active = False
        if exc_type is not None:  # the block failed: keep what was recorded, read nothing
            self._times = [(name, None) for name, _ in self._launches]
            return
        self._read()
        if self.show:
            print(self.table(), file=self.file or sys.stdout)

    def launched(self, device: Any, program: Any, timer: Any) -> None:
        """Called by the runtime for each launch made while this profile is active."""
        self._launches.append((_NAMES.get(program, UNNAMED), timer))

    def _read(self) -> None:
        """Reads every timer (waiting for the launches they time)."""
        self._times = [(name, None if timer is None else timer.elapsed_ns * 1e-9)
                       for name, timer in self._launches]

    def stats(self) -> list[KernelTime]:
        """One row per kernel, the largest total first."""
        if self._times is None:
            if self._active:
                raise RuntimeError("the profile is still collecting: read it after its block")
            self._times = []
        rows: dict[str, list[float | None]] = {}
        for name, seconds in self._times:
            rows.setdefault(name, []).append(seconds)
        total = sum(s for _, s in self._times if s is not None)
        stats = []
        for name, times in rows.items():
            timed = [s for s in times if s is not None]
            spent = sum(timed)
            stats.append(KernelTime(name, len(times), spent, spent / len(timed) if timed else 0.0,
                                    spent / total if total else 0.0, len(times) - len(timed)))
        return sorted(stats, key=lambda r: (-r.total_s, r.name))

    @property
    def total_s(self) -> float:
        """The device time of every timed launch of the block, in seconds."""
        return sum(r.total_s for r in self.stats())

    def table(self) -> str:
        """The rows as a text table: kernel, calls, total, mean, share."""
        rows = self.stats()
        # a row with launches made while a graph recorded shows how many: "6 (1 untimed)"
        calls = [f"{r.calls}" + (f" ({r.untimed} untimed)" if r.untimed else "") for r in rows]
        total_calls = str(sum(r.calls for r in rows))
        width = max([len("kernel"), *(len(r.name) for r in rows)])
        n = max([len("calls"), len(total_calls), *(len(c) for c in calls)])
        lines = [f"{'kernel':<{width}}  {'calls':>{n}}  {'total':>10}  {'mean':>10}  "
                 f"{'share':>6}"]
        for r, c in zip(rows, calls):
            lines.append(f"{r.name:<{width}}  {c:>{n}}  {_duration(r.total_s):>10}  "
                         f"{_duration(r.mean_s):>10}  {r.share:>6.1%}")
        lines.append(f"{'total':<{width}}  {total_calls:>{n}}  "
                     f"{_duration(sum(r.total_s for r in rows)):>10}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        state = "collecting" if self._active else f"{len(self._launches)} launches"
        return f"<pk.profile {state}>"


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3f} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def profile(show: bool = True, file: TextIO | None = None) -> Profile:
    """A context manager that times each kernel launched inside it and, when the block ends,
    prints a table (kernel, calls, total, mean, share; the largest total first) to `file`
    (stdout by default) unless `show` is False. `prof.stats()` gives the rows,
    `prof.table()` / `print(prof)` the table."""
    return Profile(show, file)
