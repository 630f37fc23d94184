"""`DeviceStats` and `MemoryStats`: counters of what a device recorded and holds, for tests
and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryStats:
    """What the allocator holds. `allocate_calls` counts every vkAllocateMemory so far."""

    allocate_calls: int
    driver_allocations: int  # VkDeviceMemory objects alive now (blocks + dedicated)
    blocks: int
    dedicated: int
    reserved_bytes: int  # obtained from the driver
    used_bytes: int  # handed out to buffers
    spare_bytes: int = 0  # freed dedicated allocations kept for reuse
    cached_bytes: int = 0  # freed buffers kept whole for the next of their size


@dataclass(frozen=True)
class DeviceStats:
    """Counts since the device was opened (`Device.stats()`); subtract two to see one stretch.

    - `commands`: launches and copies recorded.
    - `barriers`: pipeline barriers recorded between them (a launch independent of the work
      before it gets none).
    - `submits`: batches submitted.
    - `descriptor_set_hits` / `_misses`: launches that found their descriptor set in the cache /
      had to write one (devices without push descriptors).
    - `memory`: what the memory allocator holds, and how often it asked the driver.
    """

    commands: int
    barriers: int
    submits: int
    descriptor_set_hits: int
    descriptor_set_misses: int
    memory: MemoryStats
