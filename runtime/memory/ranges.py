"""`RangeAllocator`: first-fit allocation of aligned byte ranges inside one fixed-size block.

Pure bookkeeping (no Vulkan), so the memory allocator can be tested without a device. Free space
is a list of disjoint ranges sorted by offset; a freed range merges with its free neighbours, so
a block whose allocations are all freed is one range again and space is reused.
"""

from __future__ import annotations

from bisect import bisect_left


class RangeAllocator:
    """Hands out `[offset, offset + size)` ranges of a block of `capacity` bytes."""

    __slots__ = ("capacity", "free_bytes", "_starts", "_sizes")

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"a block needs a positive capacity, not {capacity}")
        self.capacity = capacity
        self.free_bytes = capacity
        # free ranges, sorted by start; two lists rather than tuples: bisect on starts alone
        self._starts: list[int] = [0]
        self._sizes: list[int] = [capacity]

    @property
    def empty(self) -> bool:
        """True when nothing is allocated."""
        return self.free_bytes == self.capacity

    @property
    def largest_free(self) -> int:
        return max(self._sizes, default=0)

    @property
    def free_ranges(self) -> list[tuple[int, int]]:
        """The free `(start, size)` ranges in order (for tests and statistics)."""
        return list(zip(self._starts, self._sizes, strict=True))

    def allocate(self, size: int, alignment: int = 1) -> tuple[int, int] | None:
        """`(start, offset)`: `size` bytes at `offset` (a multiple of `alignment`) now
        reserved, together with the padding before them from `start`; None when no free range
        can hold them. Free with `free(start, offset + size - start)`.

        The padding goes with the allocation rather than staying free: slivers of a few bytes
        would only lengthen the free list that every allocation scans."""
        if size <= 0:
            raise ValueError(f"cannot allocate {size} bytes")
        if size > self.free_bytes:
            return None
        starts, sizes = self._starts, self._sizes
        for k, (start, free) in enumerate(zip(starts, sizes, strict=True)):
            if free < size:
                continue
            offset = -(-start // alignment) * alignment
            end = offset + size
            if end > start + free:
                continue
            if end == start + free:
                del starts[k], sizes[k]
            else:
                starts[k] = end
                sizes[k] = start + free - end
            self.free_bytes -= end - start
            return start, offset
        return None

    def free(self, offset: int, size: int) -> None:
        """Returns a range given out by `allocate`, merging it with free neighbours."""
        starts, sizes = self._starts, self._sizes
        k = bisect_left(starts, offset)
        if (k < len(starts) and starts[k] < offset + size) or (
            k > 0 and starts[k - 1] + sizes[k - 1] > offset
        ):
            raise ValueError(f"range [{offset}, {offset + size}) is already free (double free)")
        if offset < 0 or offset + size > self.capacity:
            raise ValueError(f"range [{offset}, {offset + size}) is outside the block")
        merge_before = k > 0 and starts[k - 1] + sizes[k - 1] == offset
        merge_after = k < len(starts) and starts[k] == offset + size
        if merge_before and merge_after:
            sizes[k - 1] += size + sizes[k]
            del starts[k], sizes[k]
        elif merge_before:
            sizes[k - 1] += size
        elif merge_after:
            starts[k] = offset
            sizes[k] += size
        else:
            starts.insert(k, offset)
            sizes.insert(k, size)
        self.free_bytes += size
