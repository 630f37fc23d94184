"""Device memory: choosing memory types, accounting against heap sizes, allocating.

One VkDeviceMemory per allocation for now. Everything goes through `Allocator.allocate` /
`Allocator.free`, so a sub-allocating allocator can replace this one without touching callers.

Out-of-memory is decided here, by our own accounting against the heap size, *before* the driver
is asked: lavapipe (and some other drivers) accept huge vkAllocateMemory calls without backing
them and fail later, or never.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import _vk
from ._vk import ffi, lib
from .errors import DeviceError, OutOfDeviceMemory

DEVICE_LOCAL = lib.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
HOST_VISIBLE = lib.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
HOST_COHERENT = lib.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
HOST_CACHED = lib.VK_MEMORY_PROPERTY_HOST_CACHED_BIT

# what an allocation is for; decides the memory type
STORAGE = "storage"  # kernel data: device-local, mapped too where that costs nothing
STAGING = "staging"  # host side of an upload/download: host-visible, preferably cached
UNIFORM = "uniform"  # per-launch argument blocks: host-visible, device-local if possible


@dataclass
class Allocation:
    """A block of device memory; `mapped` is its persistent host mapping (a `char*`) or None."""

    memory: object
    size: int
    type_index: int
    heap_index: int
    mapped: object | None


class Allocator:
    """Allocates and frees device memory, keeping per-heap accounting.

    `reclaim` is called once when an allocation does not fit: it should wait for pending work
    so that buffers freed while still in use are really released, then the check is repeated.
    """

    def __init__(
        self,
        device: object,
        memory_properties: object,
        fn: object,
        force_staging: bool = False,
        reclaim: Callable[[], None] | None = None,
    ) -> None:
        self._device = device
        self._fn = fn
        self._reclaim = reclaim
        props = memory_properties
        self.types = [
            (props.memoryTypes[i].propertyFlags, props.memoryTypes[i].heapIndex)
            for i in range(props.memoryTypeCount)
        ]
        self.heap_sizes = [props.memoryHeaps[i].size for i in range(props.memoryHeapCount)]
        self.heap_used = [0] * len(self.heap_sizes)
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
        """Raises OutOfDeviceMemory when `size` more bytes do not fit the type's heap."""
        heap = self.types[type_index][1]
        if self.heap_used[heap] + size <= self.heap_sizes[heap]:
            return
        if self._reclaim is not None:
            self._reclaim()
            if self.heap_used[heap] + size <= self.heap_sizes[heap]:
                return
        raise OutOfDeviceMemory(
            f"cannot allocate {size:,} bytes: {self.heap_used[heap]:,} of the "
            f"{self.heap_sizes[heap]:,} bytes of memory heap {heap} are in use "
            f"({self.heap_sizes[heap] - self.heap_used[heap]:,} free)"
        )

    # ---- allocating ----

    def allocate(self, size: int, type_bits: int, purpose: str) -> Allocation:
        """Allocates `size` bytes for `purpose` (checked against the heap first) and maps them
        when the purpose calls for it."""
        type_index = self.type_for(purpose, type_bits)
        self.ensure_fits(size, type_index)
        memory = self._vk_allocate(size, type_index)
        heap = self.types[type_index][1]
        self.heap_used[heap] += size
        mapped = None
        if self.maps(purpose, type_index):
            pointer = ffi.new("void**")
            result = self._fn.vkMapMemory(self._device, memory, 0, _vk.WHOLE_SIZE, 0, pointer)
            if result < 0:
                self.free(Allocation(memory, size, type_index, heap, None))
                _vk.check(result, "vkMapMemory")
            mapped = ffi.cast("char*", pointer[0])
        return Allocation(memory, size, type_index, heap, mapped)

    def free(self, allocation: Allocation) -> None:
        """Releases an allocation (unmapping it implicitly)."""
        if allocation.memory is None:
            return
        self._fn.vkFreeMemory(self._device, allocation.memory, ffi.NULL)
        self.heap_used[allocation.heap_index] -= allocation.size
        allocation.memory = None
        allocation.mapped = None

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
        return memory[0]
