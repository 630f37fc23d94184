"""The errors a failed check inside a kernel reports, worded one way for every device: the
kernel's source location, name and invocation, what failed, and the source line."""

from __future__ import annotations

import linecache
from collections.abc import Callable

from pykern.errors import KernelAssertionError, KernelIndexError, outside_grid_hint
from pykern.ir.nodes import Loc

Ints = tuple[int, ...]


def with_source(text: str, loc: Loc) -> str:
    """`text` followed by the source line at `loc` (where the file can be read)."""
    line = linecache.getline(loc.file, loc.line)
    return f"{text}\n    {line.strip()}" if line else text


def reported_error(kernel_name: str, loc: Loc, invocation: Ints, assertion: str | None,
                   array: str | None, bounds: Callable[[], tuple[Ints, Ints]],
                   grid: tuple[int, int, int] | None) -> Exception:
    """The error of a debug report: a failed `assert` (its `assertion` message, None for an
    index check) or an index out of `bounds()` (index, shape) of `array`. `grid` is the launch's
    grid for a kernel that is not masked (one with barriers), whose invocations outside it get
    the hint naming the rule."""
    where = f"{loc}: kernel '{kernel_name}', invocation {invocation}"
    if assertion is not None:
        return KernelAssertionError(with_source(f"{where}: assertion failed: {assertion}", loc))
    index, shape = bounds()
    hint = outside_grid_hint(invocation, grid) if grid is not None else ""
    return KernelIndexError(with_source(
        f"{where}: index {index} is out of bounds for '{array}' with shape {shape}{hint}", loc))
