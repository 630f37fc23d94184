"""`BufferAccess`: host access to a device buffer (`upload`, `download`, `read_into`) with its
argument checks, written once for the Vulkan `Buffer` and the host device's `HostBuffer`.

A leaf, free of Vulkan. A subclass says whether it was freed (`freed`) and moves the bytes
(`_write_bytes`, `_read_bytes`); the checks, the conversions and the errors are here.
"""

from __future__ import annotations

import numpy as np


class BufferAccess:
    """The host side of a buffer of `nbytes` bytes."""

    __slots__ = ()
    nbytes: int

    @property
    def freed(self) -> bool:
        raise NotImplementedError

    def _write_bytes(self, view: memoryview, offset: int, non_blocking: bool = False) -> None:
        """Copies `view` (bytes, non-empty) into the buffer at byte `offset` (checked); may
        return before the copy into device memory has finished (never before `view` may
        change), and with `non_blocking` as soon as the bytes are in staging memory."""
        raise NotImplementedError

    def _write_queued(self, view: memoryview, offset: int) -> None:
        """As `_write_bytes`, ordered after the launches recorded so far and before the later
        ones without waiting for any of them."""
        raise NotImplementedError

    def _read_bytes(self, out: memoryview, offset: int) -> None:
        """Fills `out` (bytes, non-empty) from byte `offset` of the buffer (checked)."""
        raise NotImplementedError

    def upload(
        self,
        data: np.ndarray | bytes | bytearray | memoryview,
        offset: int = 0,
        *,
        non_blocking: bool = False,
    ) -> None:
        """Copies `data` (any array or bytes-like; arrays are copied in C order) into the buffer
        at byte `offset`. `data` may change once this returns; the copy into device memory may
        still run (what uses the buffer afterwards waits for it). `non_blocking=True` returns
        as soon as the bytes are in staging memory, without waiting for earlier pieces of the
        same copy to reach the device."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data)
        view = memoryview(data).cast("B")
        self._check_range(offset, view.nbytes, "upload")
        if view.nbytes:
            self._write_bytes(view, offset, non_blocking)

    def upload_queued(self, data: np.ndarray | bytes | bytearray | memoryview,
                      offset: int = 0) -> None:
        """Writes `data` at byte `offset` in queue order: launches recorded before read the
        old contents, later ones the new, and the host never waits for either (a small
        write that changes per step, such as an optimizer's hyperparameters)."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data)
        view = memoryview(data).cast("B")
        self._check_range(offset, view.nbytes, "upload")
        if view.nbytes:
            self._write_queued(view, offset)

    def download(self, nbytes: int | None = None, offset: int = 0) -> bytes:
        """The buffer's bytes from `offset` (`nbytes` of them; all the rest when None), after
        the launches that write it have finished."""
        if nbytes is None:
            nbytes = max(self.nbytes - offset, 0)
        self._check_range(offset, nbytes, "download")
        out = bytearray(nbytes)
        if nbytes:
            self._read_bytes(memoryview(out), offset)
        return bytes(out)

    def read_into(self, array: np.ndarray, offset: int = 0) -> np.ndarray:
        """Fills the C-contiguous, writable `array` with `array.nbytes` bytes from byte
        `offset`; returns it."""
        if not (
            isinstance(array, np.ndarray) and array.flags.c_contiguous and array.flags.writeable
        ):
            raise ValueError("read_into needs a writable C-contiguous numpy array")
        self._check_range(offset, array.nbytes, "read")
        if array.nbytes:
            self._read_bytes(memoryview(array.reshape(-1).view(np.uint8)), offset)
        return array

    def _check_range(self, offset: int, nbytes: int, what: str) -> None:
        if self.freed:
            raise ValueError(f"cannot {what}: the buffer was freed")
        if offset < 0 or nbytes < 0 or offset + nbytes > self.nbytes:
            raise ValueError(
                f"cannot {what} {nbytes} bytes at offset {offset}: "
                f"the buffer holds {self.nbytes} bytes"
            )
