"""Where in the user's code something happened: the innermost frame outside pykern (and
outside the standard library, where a frame of the user's is further out)."""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from types import FrameType, TracebackType

import pykern

_OURS = (os.path.dirname(os.path.realpath(pykern.__file__)) + os.sep,
         os.path.dirname(os.path.realpath(sys.modules["pykern.runtime"].__file__)) + os.sep)
_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
_known: dict[str, int] = {}  # file name -> 0 ours, 1 standard library, 2 the user's


def _kind(filename: str) -> int:
    kind = _known.get(filename)
    if kind is None:
        path = os.path.realpath(filename)
        kind = 0 if path.startswith(_OURS) else 1 if path.startswith(_STDLIB) else 2
        _known[filename] = kind
    return kind


def user_line(frame: FrameType | None = None) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of the user's from `frame` (the caller's when
    None) outwards; a standard-library frame where no frame of the user's is found."""
    f = sys._getframe(1) if frame is None else frame
    fallback = None
    while f is not None:
        kind = _kind(f.f_code.co_filename)
        if kind == 2:
            return f.f_code.co_filename, f.f_lineno
        if kind == 1 and fallback is None:
            fallback = (f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return fallback


def raised_at(tb: TracebackType | None) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of the user's that an exception passed through."""
    found = None
    while tb is not None:
        if _kind(tb.tb_frame.f_code.co_filename) == 2:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def describe(where: tuple[str, int] | None) -> str:
    """`file:line` and the source line, for an error message."""
    if where is None:
        return "(no line of yours found)"
    filename, line = where
    source = linecache.getline(filename, line).strip()
    return f"{filename}:{line}" + (f": {source}" if source else "")
