"""The launcher's side of debug mode: a report per call of the native entry, and the error the
first failing one describes (`pykern.llvm.debug` writes them).

A launch's workgroups run in ranges, each range one call of the entry on one thread
(`pykern.llvm.pool`). `LaunchReports` gives every call a copy of the argument block whose
report slot points to a zeroed report of its own; after the launch the report of the earliest
range that failed is the one raised. So the error is the first failure in launch order
(workgroups in linear order, x fastest, and their invocations in the order they run), the
same on any number of threads.

The message is the Vulkan debug path's (`pykern.jit.debug_launch`), word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pykern.ir.reports import reported_error
from pykern.llvm.debug import (ASSERT, INDEX_WORDS, INVOCATION_WORDS, REPORT_WORDS,
                               SHAPE_WORDS, DebugSite)

Entry = Callable[[int, int, int], int]


class LaunchReports:
    """The reports of one debug launch whose argument block is `block` (report address in
    `slot`)."""

    def __init__(self, block: np.ndarray, slot: int):
        self.block, self.slot = block, slot
        self.calls: list[tuple[int, np.ndarray, np.ndarray]] = []  # (first, block, report)

    def entry(self, native: Entry) -> Entry:
        """`native` behind a wrapper that hands each call its own block and report."""
        def call(_block: int, first: int, end: int) -> int:
            block = self.block.copy()
            report = np.zeros(REPORT_WORDS, np.int32)
            block[self.slot] = report.ctypes.data
            self.calls.append((first, block, report))  # both alive until the launch ends
            return native(block.ctypes.data, first, end)
        return call

    def first_failure(self) -> np.ndarray | None:
        """The report of the earliest range of workgroups that failed, or None."""
        failed = [(first, report) for first, _, report in self.calls if report[0] != 0]
        return min(failed, key=lambda f: f[0])[1] if failed else None


def failure(kernel_name: str, sites: Sequence[DebugSite], report: np.ndarray,
            grid: tuple[int, int, int] | None) -> Exception:
    """The error `report` (a written report) describes. `grid` is the launch's grid for a
    kernel that is not masked (one with barriers): an access by an invocation outside it gets
    the hint that names the rule."""
    site = sites[int(report[0]) - 1]
    return reported_error(
        kernel_name, site.loc, _ints(report, INVOCATION_WORDS, 3),
        site.message if site.kind == ASSERT else None, site.array,
        lambda: (_ints(report, INDEX_WORDS, site.ndim), _ints(report, SHAPE_WORDS, site.ndim)),
        grid)


def _ints(report: np.ndarray, first: int, count: int) -> tuple[int, ...]:
    return tuple(int(v) for v in report[first:first + count])


