"""Version counters: how many times each storage has been written through the tensor API.

One counter per device buffer (its `version` attribute), so every view of a buffer (slices,
transposes, `detach()`ed aliases) shares it, as PyTorch's views share their base's counter.
Every write bumps it: the in-place operators, `out=`, `t[key] = v`, the optimizers' updates. A
node remembers the versions of the tensors its backward will read and compares them when it
runs, so a gradient is never computed from values overwritten since the forward pass. The
counter lives on the buffer (not in a table beside it) because every recorded op reads it:
an attribute read costs nothing there.
"""

from __future__ import annotations

from typing import Any

from pykern.jit import compiling


def version_of(buffer: Any) -> int:
    """How many times `buffer` was written through the tensor API (0 before the first)."""
    return buffer.version  # type: ignore[no-any-return]


def bump(t: Any) -> None:
    """Counts one write into the memory of tensor `t` (any view of its buffer); writing no
    element changes nothing."""
    if t.size == 0:
        return
    buf = t.buffer
    buf.version += 1
    if compiling.ACTIVE[0] is not None:
        compiling.note_bump(buf)  # a pk.compile replay bumps it again


def bump_buffer(buf: Any) -> None:
    """Counts one write into `buf` (a replay of recorded writes)."""
    buf.version += 1
