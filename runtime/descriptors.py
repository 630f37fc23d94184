"""Per-batch resources recycled when the batch's fence signals: descriptor pools and the
host-visible chunks that hold uniform argument blocks."""

from __future__ import annotations

from . import _vk
from ._vk import ffi, lib
from .buffer import RawBuffer
from .memory import UNIFORM, Allocator

POOL_SETS = 256
POOL_STORAGE_DESCRIPTORS = 2048
POOL_UNIFORM_DESCRIPTORS = 256
UNIFORM_CHUNK = 64 * 1024


class DescriptorPool:
    """A VkDescriptorPool with our own count of what is left, so that we switch pools before
    the driver would fail an allocation."""

    def __init__(
        self, vk_device: object, fn: object, sets: int, storage: int, uniform: int
    ) -> None:
        self.capacity = (sets, storage, uniform)
        sizes = ffi.new(
            "VkDescriptorPoolSize[2]",
            [
                {"type": lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, "descriptorCount": storage},
                {"type": lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, "descriptorCount": uniform},
            ],
        )
        info = ffi.new(
            "VkDescriptorPoolCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                "maxSets": sets,
                "poolSizeCount": 2,
                "pPoolSizes": sizes,
            },
        )
        handle = ffi.new("VkDescriptorPool*")
        _vk.check(
            fn.vkCreateDescriptorPool(vk_device, info, ffi.NULL, handle), "vkCreateDescriptorPool"
        )
        self.handle = handle[0]
        self.left = list(self.capacity)

    def take(self, storage: int, uniform: int) -> bool:
        """Reserves room for one set; False when this pool cannot hold it."""
        left = self.left
        if left[0] < 1 or left[1] < storage or left[2] < uniform:
            return False
        left[0] -= 1
        left[1] -= storage
        left[2] -= uniform
        return True


class DescriptorAllocator:
    """Hands out descriptor sets from pools; a batch owns the pools it drew from until its
    fence signals, then they are reset wholesale and reused."""

    def __init__(self, vk_device: object, fn: object) -> None:
        self._dev, self._fn = vk_device, fn
        self._free: list[DescriptorPool] = []
        self._all: list[DescriptorPool] = []
        self._set = ffi.new("VkDescriptorSet*")

    def allocate(self, pools: list[DescriptorPool], program: object) -> object:
        """A descriptor set for `program`, from the last pool of `pools` (a batch's list),
        appending a fresh pool when that one is full."""
        storage, uniform = program.n_buffers, 1 if program.uses_uniform else 0
        if not pools or not pools[-1].take(storage, uniform):
            pool = self._new_pool(storage, uniform)
            pool.take(storage, uniform)
            pools.append(pool)
        alloc_info = program.alloc_info
        alloc_info.descriptorPool = pools[-1].handle
        _vk.check(
            self._fn.vkAllocateDescriptorSets(self._dev, alloc_info, self._set),
            "vkAllocateDescriptorSets",
        )
        return self._set[0]

    def recycle(self, pools: list[DescriptorPool]) -> None:
        """Resets the pools of a finished batch and makes them available again."""
        for pool in pools:
            self._fn.vkResetDescriptorPool(self._dev, pool.handle, 0)
            pool.left = list(pool.capacity)
            self._free.append(pool)
        pools.clear()

    def _new_pool(self, storage: int, uniform: int) -> DescriptorPool:
        while self._free:
            pool = self._free.pop()
            if pool.capacity[1] >= storage and pool.capacity[2] >= uniform:
                return pool
            self._all.remove(pool)
            self._fn.vkDestroyDescriptorPool(self._dev, pool.handle, ffi.NULL)
        pool = DescriptorPool(
            self._dev,
            self._fn,
            POOL_SETS,
            max(POOL_STORAGE_DESCRIPTORS, storage),
            max(POOL_UNIFORM_DESCRIPTORS, uniform),
        )
        self._all.append(pool)
        return pool

    def destroy(self) -> None:
        for pool in self._all:
            self._fn.vkDestroyDescriptorPool(self._dev, pool.handle, ffi.NULL)
        self._all.clear()
        self._free.clear()


class UniformChunk:
    """A mapped host-visible uniform buffer filled front to back by one batch."""

    def __init__(self, raw: RawBuffer) -> None:
        self.raw = raw
        self.used = 0


class UniformArena:
    """Space for the uniform argument blocks of launches, in chunks owned by batches."""

    def __init__(self, vk_device: object, fn: object, allocator: Allocator, alignment: int) -> None:
        self._dev, self._fn, self._allocator = vk_device, fn, allocator
        self.alignment = max(alignment, 16)
        self._free: list[UniformChunk] = []
        self._all: list[UniformChunk] = []

    def allocate(self, chunks: list[UniformChunk], nbytes: int) -> tuple[UniformChunk, int]:
        """`nbytes` of a chunk of `chunks` (a batch's list), and the offset of that space."""
        align = self.alignment
        chunk = chunks[-1] if chunks else None
        if chunk is not None:
            offset = -(-chunk.used // align) * align
            if offset + nbytes <= chunk.raw.size:
                chunk.used = offset + nbytes
                return chunk, offset
        chunk = self._new_chunk(nbytes)
        chunks.append(chunk)
        chunk.used = nbytes
        return chunk, 0

    def recycle(self, chunks: list[UniformChunk]) -> None:
        for chunk in chunks:
            chunk.used = 0
            self._free.append(chunk)
        chunks.clear()

    def _new_chunk(self, nbytes: int) -> UniformChunk:
        for i, chunk in enumerate(self._free):
            if chunk.raw.size >= nbytes:
                return self._free.pop(i)
        size = max(UNIFORM_CHUNK, -(-nbytes // UNIFORM_CHUNK) * UNIFORM_CHUNK)
        raw = RawBuffer(
            self._dev,
            self._fn,
            self._allocator,
            size,
            lib.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
            UNIFORM,
        )
        chunk = UniformChunk(raw)
        self._all.append(chunk)
        return chunk

    def destroy(self) -> None:
        for chunk in self._all:
            chunk.raw.destroy(self._dev, self._fn, self._allocator)
        self._all.clear()
        self._free.clear()
