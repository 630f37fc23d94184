"""Host-visible staging buffers for transfers that cannot go through a mapping, kept for reuse.

Allocating (and first touching) a fresh host buffer per transfer costs more than the copy itself
for large transfers, so released buffers are kept, up to `keep_bytes` in all.
"""

from __future__ import annotations

from ..vulkan._vk import lib
from .buffer import BufferMaker, RawBuffer
from .device_memory import STAGING

USAGE = lib.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | lib.VK_BUFFER_USAGE_TRANSFER_DST_BIT
MIN_STAGING = 64 * 1024
CHUNK = 64 * 2**20  # downloads larger than this are copied through the staging buffer in pieces


class StagingPool:
    """Hands out staging buffers of at least the size asked for, reusing released ones."""

    def __init__(self, maker: BufferMaker, keep_bytes: int = 256 * 2**20) -> None:
        self._maker = maker
        self.keep_bytes = keep_bytes
        self._free: list[RawBuffer] = []

    def get(self, nbytes: int) -> RawBuffer:
        """A mapped staging buffer of at least `nbytes` bytes."""
        best = None
        for raw in self._free:  # the smallest that fits and wastes at most half of itself
            if nbytes <= raw.size <= 2 * max(nbytes, MIN_STAGING) and (
                best is None or raw.size < best.size
            ):
                best = raw
        if best is not None:
            self._free.remove(best)
            return best
        size = max(MIN_STAGING, 1 << (nbytes - 1).bit_length())
        return self._maker.make(size, USAGE, STAGING)

    def release(self, raw: RawBuffer) -> None:
        """Returns a buffer no pending work uses any more; kept if the pool has room."""
        if raw.handle is None:
            return
        if sum(r.size for r in self._free) + raw.size <= self.keep_bytes:
            self._free.append(raw)
        else:
            self._maker.destroy(raw)

    def trim(self) -> None:
        """Destroys every kept buffer (when memory runs short, and at close)."""
        for raw in self._free:
            self._maker.destroy(raw)
        self._free.clear()
