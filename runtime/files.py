"""Files of the on-disk caches (the runtime's pipeline cache, the compiler's module cache): a
directory only this user can change, checked at every use, and writes a reader never sees half
done.

Each read or write opens the directory itself, without following a symbolic link in its last
component, and checks the open descriptor: a directory, owned by this user, writable by nobody
else. The file is then opened relative to that descriptor, again without following a link, and
its descriptor checked the same way (a regular file). A directory or file swapped, chmod-ed or
given away after start-up is so refused at its next use, and nothing can redirect the open
between the check and the use. A refused directory is not used again by the process; a
refused file is a miss, and the next write puts a new file in its place.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import warnings
from pathlib import Path

from .errors import PykernError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO put in a file's place must not block the open
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# open, rename and unlink relative to a directory descriptor (POSIX); elsewhere by path
_AT = {os.open, os.rename, os.unlink} <= os.supports_dir_fd


class UnsafePathError(PykernError, OSError):
    """A directory or file of a cache that this process must not trust; the message says why.
    The caches turn it into a warning (and a miss); it escapes no public call."""


def _owner() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def check_private(st: os.stat_result, path: Path, directory: bool) -> None:
    """Raises UnsafePathError unless `st` is a directory (or a regular file) that belongs to
    this user and that nobody else can write to."""
    kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
    if not kind_ok:
        raise UnsafePathError(f"{path} is not a {'directory' if directory else 'regular file'}")
    owner = _owner()
    if owner is not None and st.st_uid != owner:
        raise UnsafePathError(f"{path} belongs to another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePathError(f"{path} is writable by others")


def _explain(e: OSError, path: Path) -> OSError:
    """A failed no-follow open of a symbolic link, said as such (ELOOP, or EMLINK on BSD)."""
    if e.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and os.path.islink(path):
        return UnsafePathError(f"{path} is a symbolic link")
    return e


class _Opened:
    """A checked directory during one use: files are opened, renamed and removed relative to
    its descriptor (`fd`; None where the platform has no such calls: then by path)."""

    def __init__(self, path: Path, fd: int | None):
        self.path, self.fd = path, fd

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        flags |= _NOFOLLOW | _CLOEXEC | _BINARY
        if self.fd is None:
            return os.open(self.path / name, flags, mode)
        return os.open(name, flags, mode, dir_fd=self.fd)

    def rename(self, src: str, dst: str) -> None:
        if self.fd is None:
            os.replace(self.path / src, self.path / dst)
        else:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)  # replaces, atomically

    def unlink(self, name: str) -> None:
        try:
            if self.fd is None:
                os.unlink(self.path / name)
            else:
                os.unlink(name, dir_fd=self.fd)
        except OSError:
            pass

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


class PrivateDirectory:
    """A cache directory (created with mode 0700) whose files are read and written only after
    the checks above. `what` names the cache in warnings ("the compile cache is")."""

    def __init__(self, path: Path, what: str):
        self.path = Path(path)
        self.what = what
        self.usable = True
        try:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._open().close()
        except OSError as e:
            self._refuse(e)

    def read(self, name: str, limit: int) -> bytes | None:
        """The contents of the file `name`, or None when it is absent, empty, larger than
        `limit` bytes, unreadable or refused (refusals warn)."""
        directory = self._enter()
        if directory is None:
            return None
        try:
            fd = directory.open(name, os.O_RDONLY | _NONBLOCK)
        except FileNotFoundError:
            return None  # the usual miss
        except OSError as e:
            self._ignore(_explain(e, self.path / name))
            return None
        finally:
            directory.close()
        try:
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                check_private(st, self.path / name, directory=False)
                data = f.read(limit + 1) if st.st_size <= limit else b""
            return data if 0 < len(data) <= limit else None
        except OSError as e:
            self._ignore(e)
            return None

    def write(self, name: str, data: bytes) -> bool:
        """Writes `data` to a new file (mode 0600) and renames it over `name`, so a reader sees
        the old contents or the new, never a part. False, with a warning, when it could not."""
        try:  # made again if it was removed meanwhile
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            self._refuse(e)
        directory = self._enter()
        if directory is None:
            return False
        tmp = f".tmp-{secrets.token_hex(8)}"
        try:
            fd = directory.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                directory.rename(tmp, name)
            except BaseException:
                directory.unlink(tmp)
                raise
            return True
        except OSError as e:
            warnings.warn(f"pykern: could not write {self.path / name}: {e}", stacklevel=3)
            return False
        finally:
            directory.close()

    # ------------------------------------------------------------ the checks

    def _open(self) -> _Opened:
        """The directory, checked; raises OSError (UnsafePathError when it is not to be
        trusted)."""
        if not _AT:  # opened by path: check it without following a link
            check_private(os.lstat(self.path), self.path, directory=True)
            return _Opened(self.path, None)
        try:
            fd = os.open(self.path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        except OSError as e:
            raise _explain(e, self.path) from None
        try:
            check_private(os.fstat(fd), self.path, directory=True)
        except BaseException:
            os.close(fd)
            raise
        return _Opened(self.path, fd)

    def _enter(self) -> _Opened | None:
        """The checked directory for one use, or None when it is not to be used."""
        if not self.usable:
            return None
        try:
            return self._open()
        except FileNotFoundError:
            return None  # removed: a miss; the next write makes it again
        except OSError as e:
            self._refuse(e)
            return None

    def _refuse(self, e: OSError) -> None:
        """The directory is not to be trusted: warn once, and use it no more."""
        if self.usable:
            self.usable = False
            reason = str(e) if isinstance(e, UnsafePathError) else f"{self.path}: {e}"
            warnings.warn(f"pykern: {self.what} not kept on disk, {reason}", stacklevel=4)

    @staticmethod
    def _ignore(e: OSError) -> None:
        """A file that is not used (a miss); the next write replaces it."""
        warnings.warn(f"pykern: ignoring a cache file: {e}", stacklevel=4)
