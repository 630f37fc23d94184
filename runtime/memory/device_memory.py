"""Device memory: choosing memory types, sub-allocating from large blocks, and accounting.

Buffers do not get a VkDeviceMemory each: drivers limit how many exist at once
(maxMemoryAllocationCount, often 4096) and vkAllocateMemory is slow. Requests are carved out of
blocks of `block_size` bytes (one pool of blocks per memory type and mapping), aligned to the
buffer's memory requirements and to the device's descriptor offset alignment. A request larger
than half a block gets a dedicated allocation, its size rounded up to 2 MiB. Freed ranges are
merged and reused. Empty blocks and freed dedicated allocations (kept as spares for the next
request of their size) stay reserved, together up to a quarter of the device-local heap: tensor
ops make and drop large results all the time, a training step remakes the same ones every
iteration, and a vkAllocateMemory of 256 MiB costs milliseconds on a GPU. A pool's first empty
block is always kept. Empty blocks and spares go back to the driver first when memory runs
short.

Out-of-memory is decided here, by our own accounting against the heap size, *before* the driver
is asked: lavapipe (and some other drivers) accept huge vkAllocateMemory calls without backing
them and fail later, or never. Two figures per heap: `heap_used`, bytes handed out to buffers,
and `heap_reserved`, bytes obtained from the driver (blocks, with their free space, and
dedicated allocations). The driver is asked only while `heap_reserved` stays within the heap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..errors import DeviceError, OutOfDeviceMemory
from .ranges import RangeAllocator
from ..stats import MemoryStats

DEVICE_LOCAL = lib.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
HOST_VISIBLE = lib.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
HOST_COHERENT = lib.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
HOST_CACHED = lib.VK_MEMORY_PROPERTY_HOST_CACHED_BIT

# what an allocation is for; decides the memory type
STORAGE = "storage"  # kernel data: device-local, mapped too where that costs nothing
STAGING = "staging"  # host side of an upload/download: host-visible, preferably cached
UNIFORM = "uniform"  # per-launch argument blocks: host-visible, device-local if possible

MIB = 2**20
MIN_BLOCK = 16 * MIB
MAX_BLOCK = 256 * MIB
DEDICATED_GRANULE = 2 * MIB  # dedicated sizes round up to this, so similar requests share spares


def default_block_size(heap_size: int) -> int:
    """A sixteenth of the heap, a power of two between 16 and 256 MiB (128 MiB on lavapipe's
    2 GiB heap, 256 MiB on a GPU): few driver allocations, little memory held in reserve."""
    size = MIN_BLOCK
    while size * 2 <= min(heap_size // 16, MAX_BLOCK):
        size *= 2
    return size


class MemoryBlock:
    """One VkDeviceMemory that sub-allocations are carved from; `mapped` is its base `char*`."""

    __slots__ = ("memory", "size", "type_index", "heap_index", "mapped", "ranges")

    def __init__(
        self, memory: object, size: int, type_index: int, heap_index: int, mapped: object | None
    ) -> None:
        self.memory = memory
        self.size = size
        self.type_index = type_index
        self.heap_index = heap_index
        self.mapped = mapped
        self.ranges = RangeAllocator(size)


@dataclass(eq=False, slots=True)
class Allocation:
    """`size` bytes at `offset` of `memory`; `mapped` is the host `char*` of the first byte, or
    None; `block` is the block it was carved from, where it holds `reserved` bytes from `start`
    (the alignment padding included); for a dedicated allocation (`block` None) `reserved` is the
    size of its VkDeviceMemory."""

    memory: object
    size: int
    type_index: int
    heap_index: int
    mapped: object | None
    offset: int = 0
    block: MemoryBlock | None = None
    start: int = 0
    reserved: int = 0


class Allocator:
    """Allocates and frees device memory, keeping per-heap accounting.

    `reclaim` is called when an allocation does not fit: it should wait for pending work so that
    buffers freed while still in use are really released; then the check is repeated.
    """

    def __init__(
        self,
        device: object,
        memory_properties: object,
        fn: object,
        force_staging: bool = False,
        reclaim: Callable[[], None] | None = None,
        block_size: int = 0,
        offset_alignment: int = 1,
    ) -> None:
        self._device = device
        self._fn = fn
        self._reclaim = reclaim
        self.offset_alignment = max(offset_alignment, 1)
        props = memory_properties
        self.types = [
            (props.memoryTypes[i].propertyFlags, props.memoryTypes[i].heapIndex)
            for i in range(props.memoryTypeCount)
        ]
        self.heap_sizes = [props.memoryHeaps[i].size for i in range(props.memoryHeapCount)]
        self.heap_used = [0] * len(self.heap_sizes)
        self.heap_reserved = [0] * len(self.heap_sizes)
        self.block_sizes = [block_size or default_block_size(s) for s in self.heap_sizes]
        self.allocate_calls = 0
        self._pools: dict[tuple[int, bool], list[MemoryBlock]] = {}
        # (purpose, memoryTypeBits) -> (type index, mapped, heap): the same for every buffer
        # of one usage, so worked out once
        self._choices: dict[tuple[str, int], tuple[int, bool, int]] = {}
        self._dedicated = 0
        # freed dedicated allocations by (type, mapped): (size, memory, pointer), oldest first
        self._spares: dict[tuple[int, bool], list[tuple[int, object, object]]] = {}
        self._spare_bytes = 0
        self._largest_local = max(
            (
                size
                for i, size in enumerate(self.heap_sizes)
                if props.memoryHeaps[i].flags & lib.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
            ),
            default=0,
        )
        # Storage buffers live in mapped memory when a DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT
        # type sits on the main device-local heap (unified memory, resizable BAR, lavapipe).
        # A small BAR window (256 MiB next to a large VRAM heap) is not used for storage: it
        # would fill up; such devices stage their transfers instead.
        self._mapped_storage_type = (
            None
            if force_staging
            else self._find(DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT, main_heap_only=True)
        )
        self.storage_mapped = self._mapped_storage_type is not None
        # reads through the mapping are only fast from cached memory (not from a GPU's BAR)
        self.storage_host_cached = self.storage_mapped and bool(
            self.types[self._mapped_storage_type][0] & HOST_CACHED
        )
        self.spare_limit = self._largest_local // 4

    # ---- choosing types ----

    def type_for(self, purpose: str, type_bits: int = 0xFFFF_FFFF) -> int:
        """The memory type index for an allocation of `purpose` among `type_bits`."""
        if purpose == STORAGE:
            mapped = self._mapped_storage_type
            if mapped is not None and type_bits & (1 << mapped):
                return mapped
            order = [(DEVICE_LOCAL, True), (DEVICE_LOCAL, False), (0, False)]
        elif purpose == STAGING:
            order = [
                (HOST_VISIBLE | HOST_COHERENT | HOST_CACHED, False),
                (HOST_VISIBLE | HOST_COHERENT, False),
            ]
        else:
            order = [
                (DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT, False),
                (HOST_VISIBLE | HOST_COHERENT, False),
            ]
        for flags, main_heap_only in order:
            found = self._find(flags, main_heap_only, type_bits)
            if found is not None:
                return found
        raise DeviceError(f"no memory type suits {purpose} memory (type bits {type_bits:#x})")

    def maps(self, purpose: str, type_index: int) -> bool:
        """Whether an allocation for `purpose` of memory type `type_index` is host-mapped."""
        if not self.types[type_index][0] & HOST_VISIBLE:
            return False
        return purpose != STORAGE or type_index == self._mapped_storage_type

    def _find(self, flags: int, main_heap_only: bool, type_bits: int = 0xFFFF_FFFF) -> int | None:
        for i, (type_flags, heap) in enumerate(self.types):
            if not type_bits & (1 << i) or type_flags & flags != flags:
                continue
            if main_heap_only and self.heap_sizes[heap] < self._largest_local:
                continue
            return i
        return None

    # ---- accounting ----

    def ensure_fits(self, size: int, type_index: int) -> None:
        """Raises OutOfDeviceMemory when `size` more bytes cannot fit the type's heap next to
        what buffers hold already (a cheap check before any Vulkan object is made;
        `allocate` checks the driver allocations it needs)."""
        heap = self.types[type_index][1]
        if self.heap_used[heap] + size <= self.heap_sizes[heap]:
            return
        self._reclaim_all()
        if self.heap_used[heap] + size <= self.heap_sizes[heap]:
            return
        raise OutOfDeviceMemory(
            f"cannot allocate {size:,} bytes: {self.heap_used[heap]:,} of the "
            f"{self.heap_sizes[heap]:,} bytes of memory heap {heap} are in use "
            f"({self.heap_sizes[heap] - self.heap_used[heap]:,} free)"
        )

    def stats(self) -> MemoryStats:
        blocks = sum(len(pool) for pool in self._pools.values())
        spares = sum(len(s) for s in self._spares.values())
        return MemoryStats(
            allocate_calls=self.allocate_calls,
            driver_allocations=blocks + self._dedicated + spares,
            blocks=blocks,
            dedicated=self._dedicated,
            reserved_bytes=sum(self.heap_reserved),
            used_bytes=sum(self.heap_used),
            spare_bytes=self._spare_bytes,
        )

    # ---- allocating ----

    def allocate(
        self, size: int, type_bits: int, purpose: str, alignment: int = 1
    ) -> Allocation:
        """`size` bytes for `purpose`, at an offset that is a multiple of `alignment` (and of
        the device's descriptor offset alignment), mapped when the purpose calls for it."""
        choice = self._choices.get((purpose, type_bits))
        if choice is None:
            type_index = self.type_for(purpose, type_bits)
            choice = (type_index, self.maps(purpose, type_index), self.types[type_index][1])
            self._choices[(purpose, type_bits)] = choice
        type_index, mapped, heap = choice
        if alignment < self.offset_alignment:
            alignment = self.offset_alignment
        if size > self.block_sizes[heap] // 2:
            rounded = -(-size // DEDICATED_GRANULE) * DEDICATED_GRANULE
            memory, pointer = self._take_spare(rounded, type_index, mapped)
            if memory is None:
                memory, pointer = self._driver_allocate(rounded, type_index, mapped)
            self._dedicated += 1
            allocation = Allocation(memory, size, type_index, heap, pointer, reserved=rounded)
        else:
            block, start, offset = self._carve(size, alignment, type_index, mapped)
            allocation = Allocation(
                block.memory,
                size,
                type_index,
                heap,
                None if block.mapped is None else block.mapped + offset,
                offset,
                block,
                start,
                offset + size - start,
            )
        self.heap_used[heap] += size
        return allocation

    def free(self, allocation: Allocation) -> None:
        """Releases an allocation; its space is reused by later ones."""
        if allocation.memory is None:
            return
        self.heap_used[allocation.heap_index] -= allocation.size
        block = allocation.block
        if block is None:
            self._keep_spare(allocation)
            self._dedicated -= 1
        else:
            block.ranges.free(allocation.start, allocation.reserved)
            if block.ranges.empty:
                self._release_if_spare(block)
        allocation.memory = None
        allocation.mapped = None
        allocation.block = None

    def release_empty_blocks(self) -> None:
        """Returns every spare and every empty block to the driver (when memory runs short)."""
        self._free_spares(0)
        for pool in self._pools.values():
            for block in [b for b in pool if b.ranges.empty]:
                pool.remove(block)
                self._driver_free(block.memory, block.size, block.heap_index)

    def destroy(self) -> None:
        """Frees every block (at device close: no buffer may use them any more)."""
        self._free_spares(0)
        for pool in self._pools.values():
            for block in pool:
                self._driver_free(block.memory, block.size, block.heap_index)
        self._pools.clear()

    # ---- internals ----

    def _take_spare(self, size: int, type_index: int, mapped: bool) -> tuple[object, object]:
        spares = self._spares.get((type_index, mapped))
        if spares:
            for i, (spare_size, memory, pointer) in enumerate(spares):
                if spare_size == size:
                    del spares[i]
                    self._spare_bytes -= size
                    return memory, pointer
        return None, None

    def _keep_spare(self, allocation: Allocation) -> None:
        size = allocation.reserved
        if size > self.spare_limit:
            self._driver_free(allocation.memory, size, allocation.heap_index)
            return
        self._free_spares(self.spare_limit - size)
        key = (allocation.type_index, allocation.mapped is not None)
        self._spares.setdefault(key, []).append((size, allocation.memory, allocation.mapped))
        self._spare_bytes += size

    def _free_spares(self, keep: int) -> None:
        """Returns the oldest spares to the driver until at most `keep` bytes are kept."""
        for (type_index, _), spares in self._spares.items():
            heap = self.types[type_index][1]
            while spares and self._spare_bytes > keep:
                size, memory, _ = spares.pop(0)
                self._spare_bytes -= size
                self._driver_free(memory, size, heap)

    def _carve(
        self, size: int, alignment: int, type_index: int, mapped: bool
    ) -> tuple[MemoryBlock, int, int]:
        pool = self._pools.setdefault((type_index, mapped), [])
        for block in pool:
            place = block.ranges.allocate(size, alignment)
            if place is not None:
                return block, *place
        heap = self.types[type_index][1]
        # near the end of the heap a smaller block still serves the request
        room = self.heap_sizes[heap] - self.heap_reserved[heap]
        block_size = max(size, min(self.block_sizes[heap], room))
        memory, pointer = self._driver_allocate(block_size, type_index, mapped)
        block = MemoryBlock(memory, block_size, type_index, heap, pointer)
        pool.append(block)
        place = block.ranges.allocate(size, alignment)
        assert place is not None, "a new block must hold the request it was made for"
        return block, *place

    def _release_if_spare(self, block: MemoryBlock) -> None:
        """An empty block is kept while the empty blocks and spares together stay within
        `spare_limit` (a training step frees and remakes the same tensors every iteration:
        handing their blocks back costs a vkAllocateMemory of milliseconds each time)."""
        pool = self._pools[(block.type_index, block.mapped is not None)]
        idle = sum(b.size for b in pool if b is not block and b.ranges.empty)
        if idle and idle + block.size + self._spare_bytes > self.spare_limit:
            pool.remove(block)
            self._driver_free(block.memory, block.size, block.heap_index)

    def _driver_allocate(self, size: int, type_index: int, mapped: bool) -> tuple[object, object]:
        """A new VkDeviceMemory (mapped if asked), after checking that it fits the heap."""
        heap = self.types[type_index][1]
        if self.heap_reserved[heap] + size > self.heap_sizes[heap]:
            self.release_empty_blocks()
        if self.heap_reserved[heap] + size > self.heap_sizes[heap]:
            self._reclaim_all()
        if self.heap_reserved[heap] + size > self.heap_sizes[heap]:
            reserved, total = self.heap_reserved[heap], self.heap_sizes[heap]
            raise OutOfDeviceMemory(
                f"cannot allocate {size:,} bytes: {reserved:,} of the {total:,} bytes of memory "
                f"heap {heap} are in use ({total - reserved:,} free; buffers hold "
                f"{self.heap_used[heap]:,}, the rest is free space in blocks, in pieces "
                "too small)"
            )
        try:
            memory = self._vk_allocate(size, type_index)
        except OutOfDeviceMemory:
            # the driver has less than the heap's size minus what we reserved: others use the
            # device too (another library in this process, another process). Give back what
            # is kept for reuse and what waits for pending work, then ask once more.
            self._reclaim_all()
            memory = self._vk_allocate(size, type_index)
        self.heap_reserved[heap] += size
        if not mapped:
            return memory, None
        pointer = ffi.new("void**")
        result = self._fn.vkMapMemory(self._device, memory, 0, _vk.WHOLE_SIZE, 0, pointer)
        if result < 0:
            self._driver_free(memory, size, heap)
            _vk.check(result, "vkMapMemory")
        return memory, ffi.cast("char*", pointer[0])

    def _driver_free(self, memory: object, size: int, heap: int) -> None:
        self._fn.vkFreeMemory(self._device, memory, ffi.NULL)  # unmaps implicitly
        self.heap_reserved[heap] -= size

    def _reclaim_all(self) -> None:
        if self._reclaim is not None:
            self._reclaim()  # may free buffers, which may empty blocks
        self.release_empty_blocks()

    def _vk_allocate(self, size: int, type_index: int) -> object:
        info = ffi.new(
            "VkMemoryAllocateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                "allocationSize": size,
                "memoryTypeIndex": type_index,
            },
        )
        memory = ffi.new("VkDeviceMemory*")
        _vk.check(
            self._fn.vkAllocateMemory(self._device, info, ffi.NULL, memory),
            f"vkAllocateMemory of {size:,} bytes",
        )
        self.allocate_calls += 1
        return memory[0]
