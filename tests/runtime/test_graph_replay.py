"""Recorded graphs on the Vulkan runtime (runtime/submit/graph.py), under synchronisation validation
(tests/runtime/conftest.py): a chain of dependent launches recorded once and replayed back to
back, between eager launches and host reads, with push constants and uniform blocks, push
descriptors and descriptor sets, split dispatches and a recorded upload; every hazard the
replays create must be covered by a barrier, or the layer reports it and the test fails."""

from __future__ import annotations

import numpy as np
import pytest
from rt_helpers import args_for, layout_of, slots, spv

import pykern.runtime as rt


@pytest.fixture(params=["push descriptors", "descriptor sets", "staged"])
def vk(request, device):
    """The current device, or one of its own without push descriptors, or one whose uploads
    and downloads are staged copies."""
    if request.param == "push descriptors":
        yield device
        return
    config = {"push_descriptors": False} if request.param == "descriptor sets" else \
        {"force_staging": True}
    own = rt.open_device(device.info.index, **config)
    try:
        yield own
    finally:
        own.close()


def affine(vk: rt.Device, uniform: bool):
    """out = scale * in + shift, its block pushed or (uniform) in a uniform buffer."""
    layout = layout_of(slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")],
                       (32, 1, 1) if uniform else (64, 1, 1), max_push_size=16 if uniform else 128)
    return vk.create_program(spv("affine_uniform" if uniform else "affine"), layout), layout


def read(buf: rt.Buffer, n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    buf.read_into(out)
    return out


@pytest.mark.parametrize("uniform", [False, True], ids=["push constants", "uniform block"])
@pytest.mark.parametrize("split", [False, True], ids=["one dispatch", "split"])
def test_replays_of_a_dependent_chain_are_ordered(vk, uniform, split, monkeypatch):
    if split:
        monkeypatch.setattr(vk._launcher, "max_groups", (7, 65535, 65535))
    program, layout = affine(vk, uniform)
    n = 1000
    a, b, c = (vk.create_buffer(4 * n) for _ in range(3))
    a.upload(np.zeros(n, np.float32))
    graph = vk.record_graph()
    vk.launch(program, (n,), [a, b], args_for(layout, 2.0, 1.0))  # b = 2a + 1
    vk.launch(program, (n,), [b, c], args_for(layout, 3.0, -1.0))  # c = 3b - 1: after a write
    vk.launch(program, (n,), [c, b], args_for(layout, 1.0, 5.0))  # b = c + 5: after a read
    vk.launch(program, (n,), [b, a], args_for(layout, 0.5, 0.0))  # a = b / 2
    vk._end_graph(graph)
    assert graph.launches == 4

    def step(x: np.ndarray) -> np.ndarray:
        return (3 * (2 * x + 1) - 1 + 5) / 2

    expected = step(np.zeros(n))
    np.testing.assert_allclose(read(a, n), expected)  # the eager run of the block
    vk._replay_graph(graph)
    vk._replay_graph(graph)  # back to back: the second reads what the first wrote
    vk.launch(program, (n,), [a, c], args_for(layout, 1.0, 0.0))  # eager, after the replays
    np.testing.assert_allclose(read(c, n), step(step(expected)), rtol=1e-6)
    a.upload(np.ones(n, np.float32))  # new input, written once the replays are done with it
    vk._replay_graph(graph)
    np.testing.assert_allclose(read(a, n), step(np.ones(n)), rtol=1e-6)
    vk._release_graph(graph)
    vk.sync()


def test_a_recorded_upload_and_the_reads_it_refuses(vk):
    program, layout = affine(vk, False)
    n = 256
    src, dst = vk.create_buffer(4 * n), vk.create_buffer(4 * n)
    src.upload(np.zeros(n, np.float32))
    graph = vk.record_graph()
    src.upload(np.arange(n, dtype=np.float32))  # recorded: a copy from the graph's staging
    vk.launch(program, (n,), [src, dst], args_for(layout, -1.0, 0.0))
    with pytest.raises(rt.GraphError, match="reads a result"):
        read(dst, n)
    with pytest.raises(rt.GraphError, match="sync"):
        vk.sync()
    with pytest.raises(rt.GraphError, match="do not nest"):
        vk.record_graph()
    vk._end_graph(graph)
    src.upload(np.full(n, 7.0, np.float32))
    vk._replay_graph(graph)
    np.testing.assert_array_equal(read(src, n), np.arange(n))
    np.testing.assert_array_equal(read(dst, n), -np.arange(n))
    vk._release_graph(graph)


def test_buffers_freed_while_a_graph_holds_them_live_until_it_is_released(vk):
    program, layout = affine(vk, False)
    n = 512
    src, out = vk.create_buffer(4 * n), vk.create_buffer(4 * n)
    src.upload(np.arange(n, dtype=np.float32))
    vk.sync()
    vk._staging.trim()  # staging buffers kept for reuse are not the graph's
    used = vk.memory_stats().used_bytes
    graph = vk.record_graph()
    tmp = vk.create_buffer(4 * n)
    vk.launch(program, (n,), [src, tmp], args_for(layout, 2.0, 0.0))
    vk.launch(program, (n,), [tmp, out], args_for(layout, 1.0, 1.0))
    tmp.free()  # as an op lets go of a temporary: the graph still uses its memory
    vk._end_graph(graph)
    replacement = vk.create_buffer(4 * n)  # must not get tmp's memory
    replacement.upload(np.full(n, -5.0, np.float32))
    src.upload(np.ones(n, np.float32))
    vk._replay_graph(graph)
    np.testing.assert_array_equal(read(out, n), np.full(n, 3.0))
    np.testing.assert_array_equal(read(replacement, n), np.full(n, -5.0))
    replacement.free()
    vk._release_graph(graph)
    vk.sync()
    vk._staging.trim()
    assert vk.memory_stats().used_bytes == used


def test_closing_a_device_destroys_the_graphs_made_on_it(device):
    own = rt.open_device(device.info.index)
    program, layout = affine(own, True)
    src, dst = own.create_buffer(64), own.create_buffer(64)
    src.upload(np.ones(16, np.float32))
    graph = own.record_graph()
    own.launch(program, (16,), [src, dst], args_for(layout, 2.0, 0.0))
    own._end_graph(graph)
    own._replay_graph(graph)
    own.close()  # with the graph unreleased: its objects go before vkDestroyDevice
    assert rt.validation_messages() == []
    own._release_graph(graph)  # nothing left to do
