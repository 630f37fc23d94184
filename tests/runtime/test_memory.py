"""Sub-allocation: buffers carved from a few large blocks, space reused, accounting kept."""

from __future__ import annotations

import numpy as np
import pykern.runtime as rt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pykern.runtime.memory.device_memory import default_block_size
from pykern.runtime.memory.ranges import RangeAllocator
from rt_helpers import args_for, layout_of, slots, spv

MIB = 2**20


# ---- the range allocator, without a device ----


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.booleans(), st.integers(1, 5000), st.sampled_from([1, 4, 16, 64, 256])),
        max_size=200,
    )
)
def test_ranges_never_overlap_and_merge_back(ops):
    ranges = RangeAllocator(64 * 1024)
    live: list[tuple[int, int]] = []
    for allocate, size, alignment in ops:
        if allocate or not live:
            place = ranges.allocate(size, alignment)
            if place is None:
                assert ranges.largest_free < size + alignment - 1 or ranges.free_bytes < size
                continue
            start, offset = place
            assert offset % alignment == 0 and offset + size <= ranges.capacity
            assert 0 <= offset - start < alignment
            live.append((start, offset + size - start))
        else:
            offset, size = live.pop(size % len(live))
            ranges.free(offset, size)
        spans = sorted(live)
        assert all(a[0] + a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
        assert ranges.free_bytes == ranges.capacity - sum(s for _, s in live)
    for offset, size in live:
        ranges.free(offset, size)
    assert ranges.empty and ranges.free_ranges == [(0, ranges.capacity)]


def test_double_free_is_refused():
    ranges = RangeAllocator(1024)
    start, offset = ranges.allocate(100)
    assert start == offset == 0
    ranges.free(start, 100)
    with pytest.raises(ValueError, match="double free"):
        ranges.free(start, 100)


def test_alignment_padding_stays_with_the_allocation():
    ranges = RangeAllocator(4096)
    places = [ranges.allocate(100, 64) for _ in range(10)]
    assert [offset for _, offset in places] == [128 * k for k in range(10)]
    assert len(ranges.free_ranges) == 1  # no slivers left between them


def test_block_size_follows_the_heap():
    assert default_block_size(2 * 2**30) == 128 * MIB  # lavapipe
    assert default_block_size(140 * 2**30) == 256 * MIB  # H200
    assert default_block_size(64 * MIB) == 16 * MIB


# ---- on the device ----


def test_ten_thousand_buffers_use_a_handful_of_allocations(device):
    # one round trip first: a discrete GPU keeps the staging memory of its first transfer
    warm = device.create_buffer(64)
    warm.upload(np.zeros(16, np.int32))
    warm.read_into(np.empty(16, np.int32))
    warm.free()
    device.sync()
    before = device.memory_stats()
    buffers = [device.create_buffer(64 + (i % 7) * 1000) for i in range(10_000)]
    after = device.memory_stats()
    assert after.allocate_calls - before.allocate_calls <= 2
    assert after.driver_allocations <= before.driver_allocations + 2
    alignment = device.limits.min_storage_buffer_offset_alignment
    assert all(b._raw.allocation.offset % alignment == 0 for b in buffers[:500])
    # they work: a few written and read back at their offsets
    for i in (0, 1, 4999, 9999):
        buffers[i].upload(np.full(16, i, np.int32))
    for i in (0, 1, 4999, 9999):
        assert (buffers[i].read_into(np.empty(16, np.int32)) == i).all()
    for b in buffers:
        b.free()
    assert device.memory_stats().used_bytes == before.used_bytes


def test_create_free_cycles_leave_memory_flat(device):
    device.sync()
    before = device.memory_stats()
    for _ in range(2000):
        device.create_buffer(MIB).free()
    after = device.memory_stats()
    assert after.reserved_bytes == before.reserved_bytes
    assert after.driver_allocations == before.driver_allocations
    assert after.allocate_calls - before.allocate_calls <= 1


@pytest.fixture
def fresh_device():
    """A device of its own: what this test reserves must not depend on earlier tests' spares."""
    device = rt.open_device()
    yield device
    device.close()


def test_buffers_freed_while_in_use_are_reused_once_their_work_is_done(fresh_device):
    device = fresh_device
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    device.sync()
    before = device.memory_stats()

    def churn() -> None:
        for _ in range(600):  # each freed while its launch is still queued
            buf = device.create_buffer(MIB)
            device.launch(program, (64,), [buf], args_for(layout))
            buf.free()
        device.sync()

    churn()
    after = device.memory_stats()
    assert after.used_bytes == before.used_bytes
    # what the first round reserved stays within the blocks kept in reserve...
    assert after.reserved_bytes - before.reserved_bytes <= \
        default_block_size(device.info.memory) + device.allocator.spare_limit
    churn()  # ...and the second round is served from it
    again = device.memory_stats()
    assert again.reserved_bytes == after.reserved_bytes
    assert again.allocate_calls == after.allocate_calls


def test_large_buffers_get_a_dedicated_allocation(device):
    device.sync()
    before = device.memory_stats()
    block = device.allocator.block_sizes[0]
    big = device.create_buffer(block // 2 + 4096)
    assert device.memory_stats().dedicated == before.dedicated + 1
    assert big._raw.allocation.block is None and big._raw.allocation.offset == 0
    big.upload(np.arange(1000, dtype=np.int64), offset=block // 4)
    assert (np.frombuffer(big.download(8000, block // 4), np.int64) == np.arange(1000)).all()
    big.free()
    after = device.memory_stats()
    # the freed allocation is kept as a spare for the next request of its size ...
    assert after.dedicated == before.dedicated
    assert after.spare_bytes == before.spare_bytes + big_rounded(block // 2 + 4096)
    assert after.reserved_bytes == before.reserved_bytes + big_rounded(block // 2 + 4096)
    again = device.create_buffer(block // 2 + 1000)  # rounds to the same size
    assert device.memory_stats().allocate_calls == after.allocate_calls
    again.free()
    # ... and goes back to the driver when memory runs short
    device.allocator.release_empty_blocks()
    final = device.memory_stats()
    assert final.spare_bytes == 0 and final.reserved_bytes <= before.reserved_bytes


def big_rounded(size: int) -> int:
    from pykern.runtime.memory.device_memory import DEDICATED_GRANULE
    return -(-size // DEDICATED_GRANULE) * DEDICATED_GRANULE


def test_spares_never_exceed_their_limit(device):
    device.sync()
    block = device.allocator.block_sizes[0]
    limit = device.allocator.spare_limit
    buffers = [device.create_buffer(block) for _ in range(limit // block + 2)]
    for b in buffers:
        b.free()
    assert device.memory_stats().spare_bytes <= limit
    device.allocator.release_empty_blocks()


@pytest.fixture
def small_blocks():
    """A device whose blocks are 1 MiB, so that a few buffers span several blocks, and which
    keeps no freed buffers whole (what these tests see is the allocator's reuse)."""
    device = rt.open_device(memory_block_size=MIB, buffer_cache_bytes=0)
    yield device
    device.close()


def test_empty_blocks_are_kept_within_the_spare_budget(small_blocks, monkeypatch):
    device = small_blocks
    buffers = [device.create_buffer(256 * 1024) for _ in range(16)]  # 4 blocks
    assert device.memory_stats().blocks == 4
    for b in buffers:
        b.free()
    stats = device.memory_stats()
    assert stats.blocks == 4 and stats.used_bytes == 0  # kept for the next buffers
    again = [device.create_buffer(256 * 1024) for _ in range(16)]
    assert device.memory_stats().allocate_calls == stats.allocate_calls  # served from them
    monkeypatch.setattr(device.allocator, "spare_limit", 2 * MIB)  # room for two empty blocks
    for b in again:
        b.free()
    stats = device.memory_stats()
    assert stats.blocks == 2 and stats.reserved_bytes == 2 * MIB


def test_empty_blocks_go_back_when_memory_runs_short(small_blocks):
    device = small_blocks
    for b in [device.create_buffer(256 * 1024) for _ in range(16)]:
        b.free()
    device.allocator.release_empty_blocks()
    stats = device.memory_stats()
    assert stats.blocks == 0 and stats.reserved_bytes == 0


def test_out_of_memory_with_blocks_is_decided_before_the_driver(small_blocks, monkeypatch):
    device = small_blocks
    allocator = device.allocator
    storage_type = allocator.type_for("storage")
    heap = allocator.types[storage_type][1]
    sizes = list(allocator.heap_sizes)
    sizes[heap] = allocator.heap_reserved[heap] + MIB + MIB // 2  # one block and a half
    monkeypatch.setattr(allocator, "heap_sizes", sizes)
    calls = []
    original = allocator._vk_allocate
    monkeypatch.setattr(allocator, "_vk_allocate", lambda *a: calls.append(a) or original(*a))

    def storage_allocations() -> list[int]:
        # Only the storage memory type counts: where storage memory is not HOST_CACHED (a
        # discrete GPU's BAR) the reads below are staged, and their staging block is of a
        # host memory type, on another heap.
        return [size for size, type_index in calls if type_index == storage_type]

    quarter = 256 * 1024
    kept = []
    for k in range(6):  # 4 in the first block, 2 in a last block of half the size
        kept.append(device.create_buffer(quarter))
        kept[-1].upload(np.full(quarter // 4, k, np.int32))
    assert storage_allocations() == [MIB, MIB // 2]
    with pytest.raises(rt.OutOfDeviceMemory, match="in use"):
        device.create_buffer(quarter)
    assert storage_allocations() == [MIB, MIB // 2], "the driver was asked"
    for k, buf in enumerate(kept):  # what existed is intact
        assert (buf.read_into(np.empty(quarter // 4, np.int32)) == k).all()
    freed = kept.pop()
    freed_place = (freed._raw.allocation.memory, freed._raw.allocation.offset)
    freed.free()
    again = device.create_buffer(quarter)  # the freed space is reused
    assert (again._raw.allocation.memory, again._raw.allocation.offset) == freed_place
    assert storage_allocations() == [MIB, MIB // 2]
    again.upload(np.full(quarter // 4, 9, np.int32))
    assert (again.read_into(np.empty(quarter // 4, np.int32)) == 9).all()
    for k, buf in enumerate(kept):
        assert (buf.read_into(np.empty(quarter // 4, np.int32)) == k).all()
    again.free()


def test_out_of_memory_waits_for_buffers_freed_while_in_use(small_blocks, monkeypatch):
    device = small_blocks
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    allocator = device.allocator
    heap = allocator.types[allocator.type_for("storage")][1]
    device.sync()
    sizes = list(allocator.heap_sizes)
    sizes[heap] = allocator.heap_reserved[heap] + 2 * MIB
    monkeypatch.setattr(allocator, "heap_sizes", sizes)
    for _ in range(4):  # far more than the heap holds, each freed while its launch is queued
        for _ in range(4):
            buf = device.create_buffer(512 * 1024)
            device.launch(program, (64,), [buf], args_for(layout))
            buf.free()


def test_storage_is_zero_copy_where_memory_is_device_local_and_host_visible(device):
    if not device.allocator.storage_mapped:
        pytest.skip("this device has no DEVICE_LOCAL|HOST_VISIBLE storage memory")
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    buf = device.create_buffer(4 * 100)
    assert buf._raw.mapped is not None
    device.sync()
    before = device.stats().commands
    buf.upload(np.zeros(100, np.uint32))  # a memcpy into the mapping: no command recorded
    assert device.stats().commands == before
    device.launch(program, (100,), [buf], args_for(layout))
    assert device.stats().commands - before == 1  # the launch only
    assert (buf.read_into(np.empty(100, np.uint32)) == 1).all()
    # Reads go through the mapping only where it is HOST_CACHED (lavapipe, unified memory);
    # from a discrete GPU's BAR (the H200) the mapping reads at ~20 MB/s, so a copy into a
    # staging buffer is recorded instead.
    staged_read = 0 if device.allocator.storage_host_cached else 1
    assert device.stats().commands - before == 1 + staged_read


def test_a_driver_refusal_gives_back_what_is_kept_and_asks_again(small_blocks, monkeypatch):
    # the driver may have less than the heap minus our reservations (torch in the same
    # process, say): kept blocks go back and the allocation is asked for once more
    device = small_blocks
    for b in [device.create_buffer(256 * 1024) for _ in range(8)]:
        b.free()  # two empty blocks, one kept
    assert device.memory_stats().blocks >= 1
    original = device.allocator._vk_allocate
    calls = []

    def refuse_once(size, type_index):
        calls.append(size)
        if len(calls) == 1:
            raise rt.OutOfDeviceMemory("vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY")
        return original(size, type_index)

    monkeypatch.setattr(device.allocator, "_vk_allocate", refuse_once)
    big = device.create_buffer(4 * MIB)  # a dedicated allocation: refused, then made
    assert len(calls) == 2 and device.memory_stats().blocks == 0
    big.upload(np.arange(MIB, dtype=np.int32))
    assert (big.read_into(np.empty(MIB, np.int32)) == np.arange(MIB)).all()
