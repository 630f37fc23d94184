"""Descriptor sets reused per (program, buffers) on the path without push descriptors."""

from __future__ import annotations

import numpy as np
import pykern.runtime as rt
import pytest
from rt_helpers import args_for, layout_of, slots, spv

N = 256


@pytest.fixture
def device():
    separate = rt.open_device(push_descriptors=False)
    yield separate
    separate.close()


def counter(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    return lambda buf: device.launch(program, (N,), [buf], args_for(layout))


def zeros(device):
    buf = device.create_buffer(4 * N)
    buf.upload(np.zeros(N, np.uint32))
    return buf


def counts(buf):
    return buf.read_into(np.empty(N, np.uint32))


def test_same_buffers_reuse_one_set_across_batches(device):
    run = counter(device)
    first, second = zeros(device), zeros(device)
    before = device.stats()
    for k in range(50):  # alternating, so that every launch binds a set
        run(first)
        run(second)
        if k % 15 == 0:
            device.sync()  # later batches bind the sets written in the first
    after = device.stats()
    assert after.descriptor_set_misses - before.descriptor_set_misses == 2
    assert after.descriptor_set_hits - before.descriptor_set_hits == 98
    assert (counts(first) == 50).all() and (counts(second) == 50).all()


def test_sets_of_a_destroyed_buffer_are_freed(device):
    run = counter(device)
    keep, gone = zeros(device), zeros(device)
    run(keep)
    run(gone)
    assert len(device._set_cache) == 2
    gone.free()  # kept whole for reuse, its set with it (runtime/memory/recycle.py) ...
    assert len(device._set_cache) == 2
    device._reclaim()  # ... until memory runs short: then destroyed once its launch is done
    assert len(device._set_cache) == 1
    # a new buffer (possibly with the old handle value) gets a set of its own
    fresh = zeros(device)
    run(fresh)
    run(keep)
    assert (counts(fresh) == 1).all() and (counts(keep) == 2).all()


def test_a_full_cache_evicts_sets_no_pending_work_uses(device, monkeypatch):
    monkeypatch.setattr(device._set_cache, "capacity", 4)
    run = counter(device)
    buffers = [zeros(device) for _ in range(10)]
    for buf in buffers:  # all in one batch: once 4 sets are pending, per-batch sets take over
        run(buf)
    assert len(device._set_cache) == 4
    device.sync()
    for buf in buffers:  # now the cached sets are idle and can be replaced
        run(buf)
        device.sync()
    assert len(device._set_cache) == 4
    assert all((counts(b) == 2).all() for b in buffers)


def test_uniform_argument_blocks_with_cached_sets(device):
    layout = layout_of(
        slots("src", "dst", writable=("dst",)),
        [("scale", "f"), ("shift", "f")],
        (32, 1, 1),
        max_push_size=16,
    )
    program = device.create_program(spv("affine_uniform"), layout)
    x = np.arange(N, dtype=np.float32)
    src, dst = device.create_buffer(x.nbytes), device.create_buffer(x.nbytes)
    src.upload(x)
    for k in range(5):
        device.launch(program, (N,), [src, dst], args_for(layout, float(k), 1.0))
        np.testing.assert_array_equal(dst.read_into(np.empty_like(x)), k * x + 1)
    assert device.stats().descriptor_set_hits >= 3
