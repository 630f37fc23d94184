"""Files of the on-disk caches (the runtime's pipeline cache, the compiler's module cache):
a private directory, and writes that a reader never sees half done."""

from __future__ import annotations

import os
import stat
import tempfile
import warnings
from pathlib import Path


def private_directory(path: Path, what: str) -> bool:
    """Creates `path` with mode 0700 if needed. True if it belongs to this user and nobody else
    can write to it; otherwise warns that `what` is not kept there and returns False."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as e:
        warnings.warn(f"pykern: {what} not kept on disk, {path}: {e}", stacklevel=3)
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        warnings.warn(f"pykern: {what} not kept on disk, {path} belongs to another user",
                      stacklevel=3)
        return False
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        warnings.warn(f"pykern: {what} not kept on disk, {path} is writable by others",
                      stacklevel=3)
        return False
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to a temporary file (mode 0600) beside `path`, then renames it over."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
