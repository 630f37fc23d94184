"""Descriptor sets and argument-block memory for launches.

- `DescriptorSetCache`: where push descriptors are unavailable, one descriptor set per
  (program, buffers) is written once and bound again by every later launch with the same
  buffers; sets go when one of their buffers is destroyed.
- `DescriptorAllocator`: per-batch pools, reset wholesale when the batch's fence signals; the
  fallback when the cache is full of sets still in use.
- `UniformArena`: host-visible chunks that hold uniform argument blocks, owned by batches.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import create
from ..memory.buffer import BufferMaker, RawBuffer
from ..memory.device_memory import UNIFORM

POOL_SETS = 256
POOL_STORAGE_DESCRIPTORS = 2048
POOL_UNIFORM_DESCRIPTORS = 256
UNIFORM_CHUNK = 64 * 1024


class DescriptorPool:
    """A VkDescriptorPool with our own count of what is left, so that we switch pools before
    the driver would fail an allocation."""

    def __init__(
        self, vk_device: object, fn: object, sets: int, storage: int, uniform: int, flags: int = 0
    ) -> None:
        self.capacity = (sets, storage, uniform)
        sizes = ffi.new(
            "VkDescriptorPoolSize[2]",
            [
                {"type": lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, "descriptorCount": storage},
                {"type": lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, "descriptorCount": uniform},
            ],
        )
        self.handle = create(
            fn.vkCreateDescriptorPool, vk_device, "VkDescriptorPoolCreateInfo",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                "flags": flags,
                "maxSets": sets,
                "poolSizeCount": 2,
                "pPoolSizes": sizes,
            },
            "VkDescriptorPool",
        )
        self.left = list(self.capacity)

    @classmethod
    def holding(cls, vk_device: object, fn: object, storage: int, uniform: int,
                flags: int = 0) -> DescriptorPool:
        """A pool of the usual size, grown to hold at least one set of `storage` storage and
        `uniform` uniform descriptors."""
        return cls(vk_device, fn, POOL_SETS, max(POOL_STORAGE_DESCRIPTORS, storage),
                   max(POOL_UNIFORM_DESCRIPTORS, uniform), flags)

    def take(self, storage: int, uniform: int) -> bool:
        """Reserves room for one set; False when this pool cannot hold it."""
        left = self.left
        if left[0] < 1 or left[1] < storage or left[2] < uniform:
            return False
        left[0] -= 1
        left[1] -= storage
        left[2] -= uniform
        return True

    def give_back(self, storage: int, uniform: int) -> None:
        """Returns the room of one freed set (pools made with FREE_DESCRIPTOR_SET)."""
        left = self.left
        left[0] += 1
        left[1] += storage
        left[2] += uniform


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
        pool = DescriptorPool.holding(self._dev, self._fn, storage, uniform)
        self._all.append(pool)
        return pool

    def destroy(self) -> None:
        for pool in self._all:
            self._fn.vkDestroyDescriptorPool(self._dev, pool.handle, ffi.NULL)
        self._all.clear()
        self._free.clear()


class CachedSet:
    """A descriptor set of the cache: its pool, its key, and the last batch that bound it."""

    __slots__ = ("handle", "pool", "key", "program", "last_serial")

    def __init__(self, handle: object, pool: DescriptorPool, key: tuple, program: object) -> None:
        self.handle = handle
        self.pool = pool
        self.key = key
        self.program = program
        self.last_serial = 0


class DescriptorSetCache:
    """Descriptor sets written once per (program, buffer handles) and reused by later launches.

    A set is immutable once written, so binding it again in any batch is safe. It becomes
    invalid when one of its buffers is destroyed: `forget_buffer` frees those sets. That is
    safe too, since a set holding a buffer is bound only by launches using that buffer, and a
    buffer is destroyed only after its last launch finished. When `capacity` sets exist, the
    least recently used one that no pending batch uses is freed; if none can be, `get` returns
    None and the caller falls back to a per-batch set.
    """

    def __init__(
        self,
        vk_device: object,
        fn: object,
        completed: Callable[[], int],
        capacity: int = 4096,
    ) -> None:
        self._dev, self._fn = vk_device, fn
        self._completed = completed
        self.capacity = capacity
        self._sets: OrderedDict[tuple, CachedSet] = OrderedDict()  # least recently used first
        self._by_buffer: dict[object, list[CachedSet]] = {}
        self._pools: list[DescriptorPool] = []
        self._out = ffi.new("VkDescriptorSet*")
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._sets)

    def get(self, key: tuple, program: object, serial: int) -> object | None:
        """The set for `key` (`(program, *buffer handles)`, the program's descriptor writes
        already pointing at those buffers), written now if new; None when the cache is full."""
        cached = self._sets.get(key)
        if cached is not None:
            self._sets.move_to_end(key)
            cached.last_serial = serial
            self.hits += 1
            return cached.handle
        if len(self._sets) >= self.capacity and not self._evict_one():
            return None
        self.misses += 1
        cached = self._allocate(key, program)
        writes = program.writes
        for i in range(program.n_writes):
            writes[i].dstSet = cached.handle
        self._fn.vkUpdateDescriptorSets(self._dev, program.n_writes, writes, 0, ffi.NULL)
        cached.last_serial = serial
        self._sets[key] = cached
        for handle in key[1:]:
            self._by_buffer.setdefault(handle, []).append(cached)
        return cached.handle

    def forget_buffer(self, handle: object) -> None:
        """Frees the sets that hold buffer `handle` (which is about to be destroyed)."""
        for cached in self._by_buffer.pop(handle, ()):
            if self._sets.pop(cached.key, None) is not None:
                self._free(cached)

    def destroy(self) -> None:
        for pool in self._pools:
            self._fn.vkDestroyDescriptorPool(self._dev, pool.handle, ffi.NULL)
        self._pools.clear()
        self._sets.clear()
        self._by_buffer.clear()

    def _evict_one(self) -> bool:
        completed = self._completed()
        for key, cached in self._sets.items():
            if cached.last_serial <= completed:
                del self._sets[key]
                for handle in key[1:]:
                    holders = self._by_buffer.get(handle)
                    if holders is not None:
                        holders.remove(cached)
                        if not holders:
                            del self._by_buffer[handle]
                self._free(cached)
                return True
        return False

    def _allocate(self, key: tuple, program: object) -> CachedSet:
        storage, uniform = program.n_buffers, 1 if program.uses_uniform else 0
        pool = next((p for p in self._pools if p.take(storage, uniform)), None)
        if pool is None:
            pool = DescriptorPool.holding(self._dev, self._fn, storage, uniform,
                                          lib.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT)
            self._pools.append(pool)
            pool.take(storage, uniform)
        alloc_info = program.alloc_info
        alloc_info.descriptorPool = pool.handle
        result = self._fn.vkAllocateDescriptorSets(self._dev, alloc_info, self._out)
        if result in (_vk.ERROR_FRAGMENTED_POOL, _vk.ERROR_OUT_OF_POOL_MEMORY):
            pool.give_back(storage, uniform)
            pool.left[0] = 0  # our count said it fits, the driver disagrees: use another pool
            return self._allocate(key, program)
        _vk.check(result, "vkAllocateDescriptorSets")
        return CachedSet(self._out[0], pool, key, program)

    def _free(self, cached: CachedSet) -> None:
        handle = ffi.new("VkDescriptorSet[1]", [cached.handle])
        self._fn.vkFreeDescriptorSets(self._dev, cached.pool.handle, 1, handle)
        program = cached.program
        cached.pool.give_back(program.n_buffers, 1 if program.uses_uniform else 0)


class UniformChunk:
    """A mapped host-visible uniform buffer filled front to back by one batch."""

    def __init__(self, raw: RawBuffer) -> None:
        self.raw = raw
        self.used = 0


class UniformArena:
    """Space for the uniform argument blocks of launches, in chunks owned by batches."""

    def __init__(self, maker: BufferMaker, alignment: int) -> None:
        self._maker = maker
        self.alignment = max(alignment, 16)
        self._free: list[UniformChunk] = []
        self._all: list[UniformChunk] = []

    def reserve(self, chunks: list[UniformChunk], nbytes: int) -> None:
        """Makes sure that `allocate(chunks, nbytes)` will not need new memory: called before
        a launch starts recording, since allocating memory may have to wait for the device."""
        chunk = chunks[-1] if chunks else None
        if chunk is not None:
            offset = -(-chunk.used // self.alignment) * self.alignment
            if offset + nbytes <= chunk.raw.size:
                return
        if not any(c.raw.size >= nbytes for c in self._free):
            self._free.append(self._new_chunk(nbytes))

    def allocate(self, chunks: list[UniformChunk], nbytes: int) -> tuple[UniformChunk, int]:
        """`nbytes` of a chunk of `chunks` (a batch's list), and the offset of that space."""
        align = self.alignment
        chunk = chunks[-1] if chunks else None
        if chunk is not None:
            offset = -(-chunk.used // align) * align
            if offset + nbytes <= chunk.raw.size:
                chunk.used = offset + nbytes
                return chunk, offset
        chunk = self._take_chunk(nbytes)
        chunks.append(chunk)
        chunk.used = nbytes
        return chunk, 0

    def recycle(self, chunks: list[UniformChunk]) -> None:
        for chunk in chunks:
            chunk.used = 0
            self._free.append(chunk)
        chunks.clear()

    def _take_chunk(self, nbytes: int) -> UniformChunk:
        for i, chunk in enumerate(self._free):
            if chunk.raw.size >= nbytes:
                return self._free.pop(i)
        return self._new_chunk(nbytes)

    def _new_chunk(self, nbytes: int) -> UniformChunk:
        size = max(UNIFORM_CHUNK, -(-nbytes // UNIFORM_CHUNK) * UNIFORM_CHUNK)
        raw = self._maker.make(size, lib.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, UNIFORM)
        chunk = UniformChunk(raw)
        self._all.append(chunk)
        return chunk

    def destroy(self) -> None:
        for chunk in self._all:
            self._maker.destroy(chunk.raw)
        self._all.clear()
        self._free.clear()
