"""Buffers: round trips, sizes, errors, out-of-memory accounting, the staged path."""

from __future__ import annotations

import numpy as np
import pykern.runtime as rt
import pykern.runtime.vulkan.device as device_module
from pykern.runtime.vulkan._vk import ffi, lib
from pykern.runtime.memory.device_memory import (
    DEVICE_LOCAL,
    HOST_CACHED,
    HOST_COHERENT,
    HOST_VISIBLE,
    STAGING,
    STORAGE,
    UNIFORM,
    Allocator,
)
import pytest
from rt_helpers import args_for, layout_of, slots, spv

DTYPES = [
    np.uint8,
    np.int8,
    np.int16,
    np.float16,
    np.int32,
    np.uint32,
    np.float32,
    np.int64,
    np.float64,
    np.complex64,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 65_537])
def test_round_trip(device, dtype, n):
    rng = np.random.default_rng(n)
    data = (rng.standard_normal(n) * 100).astype(dtype)
    buf = device.create_buffer(data.nbytes)
    assert buf.nbytes == data.nbytes
    buf.upload(data)
    out = np.empty_like(data)
    assert buf.read_into(out) is out
    np.testing.assert_array_equal(out, data)
    assert buf.download() == data.tobytes()
    buf.free()


@pytest.mark.parametrize("nbytes", [0, 1, 3, 5, 17, 4097])
def test_odd_sizes_and_offsets(device, nbytes):
    payload = bytes((7 * i + 3) % 256 for i in range(nbytes))
    buf = device.create_buffer(nbytes)
    buf.upload(payload)
    assert buf.download() == payload
    if nbytes >= 3:
        buf.upload(b"\xaa\xbb", offset=1)
        expected = payload[:1] + b"\xaa\xbb" + payload[3:]
        assert buf.download() == expected
        assert buf.download(2, offset=1) == b"\xaa\xbb"
        assert buf.download(offset=nbytes) == b""


def test_bytes_like_inputs_and_non_contiguous_arrays(device):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    buf = device.create_buffer(a.nbytes)
    buf.upload(a.T)  # copied in C order of the transposed view
    out = np.empty((6, 4), np.int32)
    np.testing.assert_array_equal(buf.read_into(out), a.T)
    buf.upload(bytearray(b"\x01\x00\x00\x00"))
    buf.upload(memoryview(b"\x02\x00\x00\x00"), offset=4)
    assert buf.download(8) == b"\x01\x00\x00\x00\x02\x00\x00\x00"


def test_range_errors(device):
    buf = device.create_buffer(8)
    with pytest.raises(ValueError, match="holds 8 bytes"):
        buf.upload(bytes(9))
    with pytest.raises(ValueError):
        buf.upload(b"x", offset=8)
    with pytest.raises(ValueError):
        buf.download(4, offset=6)
    with pytest.raises(ValueError):
        buf.download(1, offset=-1)
    with pytest.raises(ValueError, match="C-contiguous"):
        buf.read_into(np.empty((4, 4), np.uint8)[:, ::2])
    with pytest.raises(ValueError):
        device.create_buffer(-1)


def test_freed_buffer_refuses_use(device):
    buf = device.create_buffer(16)
    buf.free()
    buf.free()  # twice is harmless
    assert buf.freed
    with pytest.raises(ValueError, match="freed"):
        buf.upload(b"1234")
    with pytest.raises(ValueError, match="freed"):
        buf.download()


def test_free_releases_accounted_memory(device):
    device.sync()
    before = device.memory_stats().used_bytes
    buf = device.create_buffer(1 << 20)
    assert device.memory_stats().used_bytes >= before + (1 << 20)
    buf.free()
    assert device.memory_stats().used_bytes == before
    buf = device.create_buffer(1 << 20)
    del buf  # __del__ frees too
    assert device.memory_stats().used_bytes == before


def test_a_freed_buffer_is_reused_whole_and_waits_for_its_old_work(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    device.sync()
    first = device.create_buffer(4096)
    first.upload(np.zeros(1024, np.uint32))
    device.launch(program, (64,), [first], args_for(layout))
    handle = first.handle
    first.free()  # its launch may still be pending
    assert device.memory_stats().cached_bytes >= 4096
    second = device.create_buffer(4096)
    assert second.handle == handle  # the same VkBuffer, kept ...
    second.upload(np.full(1024, 7, np.uint32))  # ... and a host write waits for the launch
    assert (second.read_into(np.empty(1024, np.uint32)) == 7).all()
    second.free()
    other = device.create_buffer(4092)  # another size: never that VkBuffer, whose
    assert other.handle != handle  # descriptors cover 4096 bytes


def test_oversize_buffer_names_the_limit(device):
    limit = device.limits.max_storage_buffer_range
    if limit >= device.info.memory:
        pytest.skip("this device's storage range is not below its memory")
    with pytest.raises(rt.DeviceError, match="maxStorageBufferRange") as err:
        device.create_buffer(limit + 1)
    assert not isinstance(err.value, rt.OutOfDeviceMemory)
    assert f"{limit:,}" in str(err.value)


def test_out_of_memory_is_raised_before_the_driver_and_leaves_the_device_usable(
    device, monkeypatch
):
    keep = device.create_buffer(4096)
    keep.upload(np.arange(1024, dtype=np.int32))
    calls = []
    original = device.allocator._vk_allocate
    monkeypatch.setattr(
        device.allocator, "_vk_allocate", lambda *a: calls.append(a) or original(*a)
    )

    allocator = device.allocator
    heap_index = allocator.types[allocator.type_for("storage")][1]
    heap = allocator.heap_sizes[heap_index]
    with pytest.raises(rt.OutOfDeviceMemory) as err:
        device.create_buffer(heap + 1)
    assert f"{heap + 16:,} bytes" in str(err.value) and f"{heap:,} bytes" in str(err.value)
    assert calls == [], "the driver was asked"
    monkeypatch.undo()

    # earlier buffers intact, launches work
    np.testing.assert_array_equal(np.frombuffer(keep.download(), np.int32), np.arange(1024))
    assert_launches_work(device)


def assert_launches_work(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * 100)
    counts.upload(np.zeros(100, np.uint32))
    device.launch(program, (100, 1, 1), [counts], args_for(layout))
    np.testing.assert_array_equal(counts.read_into(np.empty(100, np.uint32)), np.ones(100))


@pytest.fixture(scope="module")
def staged():
    """A device that stages every transfer, as a discrete GPU without resizable BAR does."""
    device = rt.open_device(force_staging=True)
    yield device
    device.close()


def test_staged_device_does_not_map_storage(staged):
    buf = staged.create_buffer(64)
    assert buf._raw.mapped is None
    assert not staged.allocator.storage_mapped


@pytest.mark.parametrize("n", [0, 1, 333, 100_000])
def test_staged_round_trip(staged, n):
    data = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    buf = staged.create_buffer(data.nbytes)
    buf.upload(data)
    np.testing.assert_array_equal(buf.read_into(np.empty_like(data)), data)
    if n > 2:
        buf.upload(np.float32([5, 6]), offset=4)
        data[1:3] = [5, 6]
        np.testing.assert_array_equal(np.frombuffer(buf.download(), np.float32), data)


def test_staged_uploads_and_launches_stay_in_order(staged):
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (64, 1, 1)
    )
    program = staged.create_program(spv("affine"), layout)
    n = 1000
    src, dst = staged.create_buffer(4 * n), staged.create_buffer(4 * n)
    src.upload(np.full(n, 1, np.float32))
    staged.launch(program, (n, 1, 1), [src, dst], args_for(layout, 2.0, 0.0))
    src.upload(np.full(n, 10, np.float32))  # queued after the launch that reads the old values
    staged.launch(program, (n, 1, 1), [dst, src], args_for(layout, 1.0, 1.0))  # src = dst + 1
    np.testing.assert_array_equal(src.read_into(np.empty(n, np.float32)), np.full(n, 3))
    np.testing.assert_array_equal(dst.read_into(np.empty(n, np.float32)), np.full(n, 2))


def test_staged_transfers_in_pieces(staged, monkeypatch):
    monkeypatch.setattr(device_module, "CHUNK", 1000)  # 10 pieces each way
    data = np.arange(2600, dtype=np.int32)
    buf = staged.create_buffer(data.nbytes + 8)
    buf.upload(data, offset=8)
    np.testing.assert_array_equal(np.frombuffer(buf.download(offset=8), np.int32), data)
    out = np.empty(2590, np.int32)
    np.testing.assert_array_equal(buf.read_into(out, offset=48), data[10:])


def test_uncached_mapped_memory_is_read_through_a_copy(device, monkeypatch):
    """Like a discrete GPU's BAR: written through the mapping, read back through staging."""
    monkeypatch.setattr(device.allocator, "storage_host_cached", False)
    data = np.arange(5000, dtype=np.float64)
    buf = device.create_buffer(data.nbytes)
    buf.upload(data)
    np.testing.assert_array_equal(buf.read_into(np.empty_like(data)), data)
    assert buf.download(16, offset=8) == data[1:3].tobytes()


def memory_properties(types, heaps):
    """Memory properties with `types` [(flags, heap)] and `heaps` [(size, flags)]."""
    props = ffi.new("VkPhysicalDeviceMemoryProperties*")
    props.memoryTypeCount, props.memoryHeapCount = len(types), len(heaps)
    for i, (flags, heap) in enumerate(types):
        props.memoryTypes[i].propertyFlags, props.memoryTypes[i].heapIndex = flags, heap
    for i, (size, flags) in enumerate(heaps):
        props.memoryHeaps[i].size, props.memoryHeaps[i].flags = size, flags
    return props


DL, HV, HC, CACHED = DEVICE_LOCAL, HOST_VISIBLE, HOST_COHERENT, HOST_CACHED
LOCAL_HEAP = lib.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
GIB = 2**30


@pytest.mark.parametrize(
    ("types", "heaps", "force", "expected"),
    [
        # lavapipe: one type with every flag
        ([(DL | HV | HC | CACHED, 0)], [(2 * GIB, LOCAL_HEAP)], False, (0, True, 0, 0)),
        ([(DL | HV | HC | CACHED, 0)], [(2 * GIB, LOCAL_HEAP)], True, (0, False, 0, 0)),
        # NVIDIA H200 (read off the device): resizable BAR over the whole VRAM heap
        (
            [(0, 1), (DL, 0), (HV | HC, 1), (HV | HC | CACHED, 1), (DL | HV | HC, 0)],
            [(140 * GIB, LOCAL_HEAP), (94 * GIB, 0)],
            False,
            (4, True, 3, 4),
        ),
        # a discrete GPU with a 256 MiB BAR window: storage stays unmapped, transfers are staged
        (
            [(DL, 0), (HV | HC, 1), (HV | HC | CACHED, 1), (DL | HV | HC, 2)],
            [(24 * GIB, LOCAL_HEAP), (64 * GIB, 0), (256 * 2**20, LOCAL_HEAP)],
            False,
            (0, False, 2, 3),
        ),
    ],
)
def test_memory_type_choice(types, heaps, force, expected):
    allocator = Allocator(None, memory_properties(types, heaps), None, force_staging=force)
    storage = allocator.type_for(STORAGE)
    got = (
        storage,
        allocator.maps(STORAGE, storage),
        allocator.type_for(STAGING),
        allocator.type_for(UNIFORM),
    )
    assert got == expected


def test_staged_download_keeps_two_pieces_in_flight(staged, monkeypatch):
    """Pieces are double-buffered: the device copies the next while the host reads one."""
    monkeypatch.setattr(device_module, "CHUNK", 4096)
    data = np.arange(10 * 1024, dtype=np.int32)  # 10 pieces
    buf = staged.create_buffer(data.nbytes)
    buf.upload(data)
    staged.sync()
    pool = staged._staging
    out, peak = [0], [0]
    get, release = pool.get, pool.release

    def counting_get(n):
        out[0] += 1
        peak[0] = max(peak[0], out[0])
        return get(n)

    def counting_release(raw):
        out[0] -= 1
        release(raw)

    monkeypatch.setattr(pool, "get", counting_get)
    monkeypatch.setattr(pool, "release", counting_release)
    before = staged.stats().submits
    np.testing.assert_array_equal(buf.read_into(np.empty_like(data)), data)
    assert out[0] == 0 and peak[0] == 2  # all returned; never more than two in use
    assert staged.stats().submits - before == 10  # each piece submitted at once
