"""The error `@pk.fuse` raises for what it cannot fuse, located at the user's line."""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import numpy as np

from pykern.errors import CompileError

_SKIPPED = (str(Path(__file__).resolve().parents[1]), str(Path(np.__file__).resolve().parent))


class FuseError(CompileError, TypeError):
    """A traced function does something `@pk.fuse` cannot put into one kernel (a matmul,
    indexing, Python control flow on a tensor's value, a reduction that is not a result, ...).
    The message starts `file.py:LINE:COL:` at the user's line and names the operation. It is
    both a `pk.CompileError` and a `TypeError`."""


def refuse(what: str, hint: str = "") -> FuseError:
    """The FuseError for `what`, located at the innermost frame outside pykern and numpy (the
    traced function's line that asked for it)."""
    message = f"@pk.fuse cannot fuse {what}" + (f"; {hint}" if hint else "")
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return FuseError(message)
    code, line = frame.f_code, frame.f_lineno
    col = _column(frame) or 1
    return FuseError(message, code.co_filename, line, col,
                     linecache.getline(code.co_filename, line) or None)


def _column(frame: object) -> int | None:
    """The 1-based column of the instruction `frame` is at (Python 3.11+ keeps positions)."""
    code = frame.f_code  # type: ignore[attr-defined]
    if not hasattr(code, "co_positions"):
        return None
    positions = list(code.co_positions())
    index = frame.f_lasti // 2  # type: ignore[attr-defined]
    if 0 <= index < len(positions) and positions[index][2] is not None:
        return positions[index][2] + 1
    return None
