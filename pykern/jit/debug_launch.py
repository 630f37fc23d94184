"""Debug launches on the device: the report buffer, and the error its words describe.

The kernel side (the checks and the word layout of the report) is `pykern.spirv.debug`; here
the launcher binds a zeroed report buffer in the `DEBUG_BUFFER` slot, reads it back after the
launch (debug launches are synchronous) and raises what it reports as `pk.KernelIndexError` /
`pk.KernelAssertionError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pykern.ir.reports import reported_error
from pykern.spirv.debug import (ASSERT, DEBUG_BUFFER, DEBUG_BYTES, DEBUG_WORDS, INDEX_WORDS,
                                INVOCATION_WORDS, SHAPE_WORDS, DebugSite)

if TYPE_CHECKING:
    from pykern.jit.pipeline import CompiledVariant


def debug_launch(kernel_name: str, variant: CompiledVariant, device: Any,
                 grid: tuple[int, int, int], buffers: list, block: bytes) -> None:
    """Launches a debug variant with a fresh report buffer and raises what it reports."""
    report = device.create_buffer(DEBUG_BYTES)
    report.upload(np.zeros(DEBUG_WORDS, np.uint32))
    slot = variant.module.layout.buffer_index(DEBUG_BUFFER)
    assert slot is not None, "a debug module has a debug buffer"
    buffers[slot] = report
    device.launch(variant.program, grid, buffers, block)
    if variant.loop_status is not None:
        variant.loop_status.watch()
    words = np.empty(DEBUG_WORDS, np.uint32)
    report.read_into(words)
    report.free()
    error = failure(kernel_name, variant.module.debug_sites, words,
                    variant.array_ndims.__getitem__, None if variant.module.masked else grid)
    if error is not None:
        raise error.with_traceback(None)


def failure(kernel_name: str, sites: Sequence[DebugSite], words: np.ndarray,
            ndim: Callable[[str], int], grid: tuple[int, int, int] | None = None
            ) -> Exception | None:
    """The error a debug launch reports through its debug buffer `words` (DEBUG_WORDS u32),
    or None. `ndim(array)` gives the number of dimensions of an array the kernel names.
    `grid` is the launch's grid for a kernel that is not masked (one with barriers): an
    access by an invocation outside it gets a hint naming the rule."""
    words = np.asarray(words, dtype=np.uint32)
    if words[0] == 0:
        return None
    site = sites[int(words[0]) - 1]

    def bounds() -> tuple[tuple[int, ...], tuple[int, ...]]:
        n = ndim(site.array)
        return _ints(words, INDEX_WORDS, n), _ints(words, SHAPE_WORDS, n)

    return reported_error(kernel_name, site.loc, _ints(words, INVOCATION_WORDS, 3),
                          site.message if site.kind == ASSERT else None, site.array, bounds,
                          grid)


def _ints(words: np.ndarray, first: int, count: int) -> tuple[int, ...]:
    """`count` report words from `first` on, as the i32 values the kernel stored."""
    return tuple(int(v) for v in words[first:first + count].view(np.int32))


