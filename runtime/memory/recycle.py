"""Freed storage buffers kept for the next buffer of the same size.

Making a buffer costs a vkCreateBuffer, a memory requirements query, a sub-allocation and a
vkBindBufferMemory — more than recording the launch that fills it — and an op library makes
one per result. A freed buffer's VkBuffer is therefore kept, with its memory, and handed to the
next request of the same size, at once: its last launches may still be
pending. That is safe because the new owner inherits the hazard state: the raw buffer's
barrier epochs (so a launch writing it waits for the old readers) and the batch serial of its
last use (so a host write through the mapping waits for them too). Sizes match exactly, not
rounded: a descriptor covers a buffer's `nbytes`, and the launcher and the descriptor set cache
know a buffer by its VkBuffer, so one VkBuffer must keep one size.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .buffer import RawBuffer

# only buffers up to this size are kept (beyond it, making one costs little next to using it),
# and at most a limit's bytes of them (`Config.buffer_cache_bytes`, and a 16th of the heap),
# the oldest going first
MAX_BUFFER_BYTES = 32 << 20


class BufferRecycler:
    """Raw buffers freed and not yet reused, by size, with the serial of their last use."""

    def __init__(self, limit_bytes: int, heap_bytes: int) -> None:
        self.limit = min(limit_bytes, heap_bytes // 16)
        self.bytes = 0
        self._by_size: dict[int, list[tuple[RawBuffer, int]]] = {}  # nbytes -> (raw, serial)
        # id(raw) -> (raw, nbytes), oldest first
        self._order: OrderedDict[int, tuple[RawBuffer, int]] = OrderedDict()

    def keep(self, raw: RawBuffer, use_serial: int, nbytes: int
             ) -> list[tuple[RawBuffer, int]] | None:
        """Keeps `raw` (freed, a buffer of `nbytes`, last used by batch `use_serial`) for
        reuse. Returns None when it is not kept, else the buffers pushed out to make room (to
        destroy once their work is done), possibly none."""
        size = raw.size
        if size > MAX_BUFFER_BYTES or size > self.limit:
            return None
        evicted = []
        while self.bytes + size > self.limit:
            evicted.append(self._pop_oldest())
        self._by_size.setdefault(nbytes, []).append((raw, use_serial))
        self._order[id(raw)] = (raw, nbytes)
        self.bytes += size
        return evicted

    def take(self, nbytes: int) -> tuple[RawBuffer, int] | None:
        """A kept buffer of `nbytes` bytes and its last use's serial, or None."""
        kept = self._by_size.get(nbytes)
        if not kept:
            return None
        raw, serial = kept.pop()
        del self._order[id(raw)]
        self.bytes -= raw.size
        return raw, serial

    def drain(self) -> list[tuple[RawBuffer, int]]:
        """Every kept buffer, no longer kept."""
        out = [pair for kept in self._by_size.values() for pair in kept]
        self._by_size.clear()
        self._order.clear()
        self.bytes = 0
        return out

    def _pop_oldest(self) -> tuple[RawBuffer, int]:
        _, (raw, nbytes) = self._order.popitem(last=False)
        kept = self._by_size[nbytes]
        i = next(i for i, (r, _) in enumerate(kept) if r is raw)
        serial = kept.pop(i)[1]
        self.bytes -= raw.size
        return raw, serial
