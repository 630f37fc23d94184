"""Programs and launches: glslang- and spirv-as-built shaders checked against numpy."""

from __future__ import annotations

import threading

import numpy as np
import pykern.runtime as rt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pykern.runtime import plan_dispatches
from rt_helpers import args_for, assemble, layout_of, slots, spv


@pytest.fixture(scope="module", params=["push_descriptors", "descriptor_pools"])
def device(request):
    """Each launch test runs on both ways of binding buffers."""
    if request.param == "push_descriptors":
        current = rt.get_device()
        if not current.push_descriptors:
            pytest.skip("the device has no VK_KHR_push_descriptor")
        yield current
    else:
        separate = rt.open_device(push_descriptors=False)
        yield separate
        separate.close()


def saxpy_program(device):
    layout = layout_of(slots("x", "y", "out", writable=("out",)), [("a", "f")], (64, 1, 1))
    return device.create_program(spv("saxpy"), layout), layout


def count_program(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    return device.create_program(spv("count"), layout), layout


def zeros(device, n, dtype=np.uint32):
    buf = device.create_buffer(n * np.dtype(dtype).itemsize)
    buf.upload(np.zeros(n, dtype))
    return buf


def read(buf, n, dtype=np.uint32):
    return buf.read_into(np.empty(n, dtype))


def test_saxpy_push_constants_matches_numpy(device):
    program, layout = saxpy_program(device)
    assert layout.block == "push_constant"
    n = 10_000  # not a multiple of the workgroup
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    bx, by, bout = (
        device.create_buffer(x.nbytes),
        device.create_buffer(y.nbytes),
        device.create_buffer(x.nbytes),
    )
    bx.upload(x)
    by.upload(y)
    device.launch(program, (n, 1, 1), [bx, by, bout], args_for(layout, 2.5))
    np.testing.assert_array_equal(read(bout, n, np.float32), np.float32(2.5) * x + y)
    # any bytes-like block will do, e.g. a numpy array of the packed words
    words = np.frombuffer(bytes(args_for(layout, -1.0)), np.uint32)
    device.launch(program, (n, 1, 1), [bx, by, bout], words)
    np.testing.assert_array_equal(read(bout, n, np.float32), y - x)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_tail_is_masked(device, n):
    program, layout = count_program(device)
    pad = 100
    counts = zeros(device, n + pad)
    device.launch(program, (n,), [counts], args_for(layout))
    got = read(counts, n + pad)
    assert (got[:n] == 1).all() and (got[n:] == 0).all()


def test_20_million_invocations_split_into_dispatches(device):
    n = 20_000_000
    max_groups = device.limits.max_workgroup_count
    plan = plan_dispatches((n, 1, 1), (64, 1, 1), max_groups)
    if max_groups[0] >= -(-n // 64):
        pytest.skip("this device runs it in one dispatch")
    groups = -(-n // 64)
    assert len(plan) == -(-groups // max_groups[0])  # 5 on lavapipe
    program, layout = count_program(device)
    counts = zeros(device, n)
    device.launch(program, (n, 1, 1), [counts], args_for(layout))
    got = read(counts, n)
    assert got.min() == 1 and got.max() == 1, "some invocation ran twice or never"


def test_2d_grid(device):
    layout = layout_of(slots("out", "hits", writable=("out", "hits")), [], (8, 8, 1))
    program = device.create_program(spv("index2d"), layout)
    w, h = 100, 37
    out, hits = zeros(device, w * h), zeros(device, w * h)
    device.launch(program, (w, h, 1), [out, hits], args_for(layout))
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    np.testing.assert_array_equal(read(out, w * h).reshape(h, w), 1 + x + 65536 * y)
    assert (read(hits, w * h) == 1).all()


def test_split_in_two_dimensions(device, monkeypatch):
    # a lowered limit exercises splitting in x and y without a huge grid
    monkeypatch.setattr(device._launcher, "max_groups", (3, 2, 65535))
    layout = layout_of(slots("out", "hits", writable=("out", "hits")), [], (8, 8, 1))
    program = device.create_program(spv("index2d"), layout)
    w, h = 50, 40  # 7 x 5 groups: 3 x 3 dispatches
    assert len(plan_dispatches((w, h, 1), (8, 8, 1), (3, 2, 65535))) == 9
    out, hits = zeros(device, w * h), zeros(device, w * h)
    device.launch(program, (w, h), [out, hits], args_for(layout))
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    np.testing.assert_array_equal(read(out, w * h).reshape(h, w), 1 + x + 65536 * y)
    assert (read(hits, w * h) == 1).all()


def test_zero_grid_dispatches_nothing(device):
    program, layout = count_program(device)
    counts = zeros(device, 64)
    device.launch(program, (0, 1, 1), [counts], args_for(layout))
    device.launch(program, (64, 0, 1), [counts], args_for(layout))
    assert (read(counts, 64) == 0).all()


def test_bad_launches_are_rejected_before_recording(device):
    program, layout = count_program(device)
    counts = zeros(device, 64)
    args = args_for(layout)
    for grid in [(-1, 1, 1), (2**31, 1, 1), (1, 2**31, 1), (1.5, 1, 1), (1, 1, 1, 1), ()]:
        with pytest.raises(ValueError, match="grid"):
            device.launch(program, grid, [counts], args)
    with pytest.raises(ValueError, match="binds 1 buffers"):
        device.launch(program, (64,), [counts, counts], args)
    with pytest.raises(ValueError, match="argument block"):
        device.launch(program, (64,), [counts], args[:4])
    freed = device.create_buffer(256)
    freed.free()
    with pytest.raises(ValueError, match="freed"):
        device.launch(program, (64,), [freed], args)
    with pytest.raises(ValueError, match="does not belong"):
        device.launch(program, (64,), [b"not a buffer"], args)
    assert (read(counts, 64) == 0).all()


def test_uniform_argument_block(device, monkeypatch):
    layout = layout_of(
        slots("src", "dst", writable=("dst",)),
        [("scale", "f"), ("shift", "f")],
        (32, 1, 1),
        max_push_size=16,
    )
    assert layout.block == "uniform" and layout.uniform_binding == 2
    program = device.create_program(spv("affine_uniform"), layout)
    n = 5000
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    src, dst, dst2 = (
        device.create_buffer(x.nbytes),
        device.create_buffer(x.nbytes),
        device.create_buffer(x.nbytes),
    )
    src.upload(x)
    device.launch(program, (n,), [src, dst], args_for(layout, 3.0, -1.0))
    # split launches share one descriptor set; each dispatch has its own block (dynamic offset)
    monkeypatch.setattr(device._launcher, "max_groups", (40, 65535, 65535))
    device.launch(program, (n,), [src, dst2], args_for(layout, -2.0, 0.5))
    np.testing.assert_array_equal(read(dst, n, np.float32), np.float32(3.0) * x + np.float32(-1.0))
    np.testing.assert_array_equal(read(dst2, n, np.float32), np.float32(-2.0) * x + np.float32(0.5))


def test_dependent_launches_before_one_sync(device):
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (64, 1, 1)
    )
    program = device.create_program(spv("affine"), layout)
    n = 4099
    a, b, c = (device.create_buffer(4 * n) for _ in range(3))
    a.upload(np.arange(n, dtype=np.float32))
    device.launch(program, (n,), [a, b], args_for(layout, 2.0, 1.0))  # b = 2a + 1
    device.launch(program, (n,), [b, c], args_for(layout, 3.0, -1.0))  # c = 3b - 1 (reads b)
    device.launch(program, (n,), [c, b], args_for(layout, 1.0, 5.0))  # b = c + 5 (b was read)
    device.launch(program, (n,), [b, a], args_for(layout, 0.5, 0.0))  # a = b / 2
    device.sync()
    i = np.arange(n, dtype=np.float32)
    c_ref = 3 * (2 * i + 1) - 1
    np.testing.assert_array_equal(read(c, n, np.float32), c_ref)
    np.testing.assert_array_equal(read(b, n, np.float32), c_ref + 5)
    np.testing.assert_array_equal(read(a, n, np.float32), (c_ref + 5) / 2)


def test_upload_after_launch_does_not_race_it_nor_waits_for_it(device):
    # a buffer a launch still reads (as one fresh from the cache may be) takes an upload as a
    # copy queued behind that launch, where writing through a mapping would stall the host
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (64, 1, 1)
    )
    program = device.create_program(spv("affine"), layout)
    n = 1000
    src, dst = device.create_buffer(4 * n), device.create_buffer(4 * n)
    src.upload(np.ones(n, np.float32))
    device.launch(program, (n,), [src, dst], args_for(layout, 3.0, 1.0))
    submits = device.stats().submits
    src.upload(np.full(n, 100, np.float32))  # the launch above must still see ones
    assert device.stats().submits == submits  # nothing was submitted to be waited for
    np.testing.assert_array_equal(read(dst, n, np.float32), np.full(n, 4))
    np.testing.assert_array_equal(read(src, n, np.float32), np.full(n, 100))


def test_many_launches_submit_in_batches(device):
    program, layout = count_program(device)
    counts = zeros(device, 200)
    launches = 600  # past the automatic submit threshold twice
    for _ in range(launches):
        device.launch(program, (200,), [counts], args_for(layout))
    assert (read(counts, 200) == launches).all()


def test_spirv_as_assembled_shader(device):
    layout = layout_of(
        slots("result", writable=("result",)), [("mul", "I"), ("add", "I")], (64, 1, 1)
    )
    program = device.create_program(assemble("fill"), layout)
    n = 777
    out = zeros(device, n + 1)
    device.launch(program, (n,), [out], args_for(layout, 3, 11))
    got = read(out, n + 1)
    np.testing.assert_array_equal(got[:n], np.arange(n, dtype=np.uint32) * 3 + 11)
    assert got[n] == 0


def test_optional_features_are_enabled(device):
    f = device.features
    if not (f.fp16 and f.int64 and f.int8 and f.storage8 and f.storage16 and f.float32_atomic_add):
        pytest.skip("the device lacks one of fp16, int64, int8, 8/16-bit storage, float atomic add")
    layout = layout_of(
        slots("halves", "bytes", "result", "total", writable=("result", "total")), [], (64, 1, 1)
    )
    program = device.create_program(spv("features"), layout)
    n = 300
    halves = (np.arange(n) % 50).astype(np.float16) / 4
    small = (np.arange(n) % 200 - 100).astype(np.int8)
    bh, bb, out, total = (device.create_buffer(s) for s in (halves.nbytes, n + 3, 8 * n, 4))
    bh.upload(halves)
    bb.upload(small)
    total.upload(np.zeros(1, np.float32))
    device.launch(program, (n,), [bh, bb, out, total], args_for(layout))
    twice = (halves * np.float16(2)).astype(np.int64)
    np.testing.assert_array_equal(read(out, n, np.int64), small.astype(np.int64) * 10**12 + twice)
    assert read(total, 1, np.float32)[0] == pytest.approx(
        float((halves * 2).astype(np.float64).sum())
    )


def test_programs_are_cached(device):
    program, layout = saxpy_program(device)
    assert device.create_program(spv("saxpy"), layout) is program
    other = layout_of(slots("x", "y", "out"), [("a", "f")], (64, 1, 1))
    assert device.create_program(spv("saxpy"), other) is not program


def test_invalid_spirv_is_a_device_error(device):
    layout = layout_of(slots("x"), [], (64, 1, 1))
    with pytest.raises(rt.DeviceError, match="SPIR-V"):
        device.create_program(b"\x00" * 64, layout)
    with pytest.raises(rt.DeviceError, match="multiple of 4"):
        device.create_program(spv("count")[:-2], layout)


def test_layout_must_fit_device_limits(device):
    with pytest.raises(rt.DeviceError, match="maxComputeWorkGroupInvocations"):
        device.create_program(spv("count"), layout_of(slots("counts"), [], (64, 64, 1)))
    no_grid = rt.BindingLayout.build(slots("counts"), [("n", "I")], (64, 1, 1))
    with pytest.raises(rt.DeviceError, match="grid field"):
        device.create_program(spv("count"), no_grid)


def test_buffer_index_finds_a_slot_by_name():
    layout = rt.BindingLayout.build(slots("x", "y"), [("n", "I")], (64, 1, 1))
    assert layout.buffer_index("y") == 1
    assert layout.buffer_index("z") is None


def test_freeing_a_buffer_in_use_defers_its_release(device):
    program, layout = count_program(device)
    counts = zeros(device, 1000)
    keep = zeros(device, 1000)
    device.launch(program, (1000,), [counts], args_for(layout))
    device.launch(program, (1000,), [keep], args_for(layout))
    used = sum(device.allocator.heap_used)
    counts.free()  # still used by the recorded launch: kept (for reuse), never released early
    assert sum(device.allocator.heap_used) == used
    device._reclaim()  # memory running short: released once its launch ran
    assert sum(device.allocator.heap_used) < used
    assert (read(keep, 1000) == 1).all()


def test_launches_from_several_threads(device):
    program, layout = count_program(device)
    buffers = [zeros(device, 500) for _ in range(4)]
    errors = []

    def work(buf):
        try:
            for _ in range(40):
                device.launch(program, (500,), [buf], args_for(layout))
            device.sync()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(b,)) for b in buffers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for buf in buffers:
        assert (read(buf, 500) == 40).all()


def test_module_level_sync():
    device = rt.get_device()
    program, layout = count_program(device)
    counts = zeros(device, 64)
    device.launch(program, (64,), [counts], args_for(layout))
    rt.sync()
    assert not device._batches.in_flight and device._batches.recording is None


@settings(max_examples=300, deadline=None)
@given(
    grid=st.tuples(*[st.integers(0, 2000)] * 3),
    workgroup=st.tuples(*[st.integers(1, 64)] * 3),
    max_groups=st.tuples(*[st.integers(1, 64)] * 3),
)
def test_plan_covers_every_group_once(grid, workgroup, max_groups):
    groups = [-(-g // w) for g, w in zip(grid, workgroup, strict=True)]
    pieces = [-(-g // m) for g, m in zip(groups, max_groups, strict=True)]
    assume(pieces[0] * pieces[1] * pieces[2] <= 20_000)
    plan = plan_dispatches(grid, workgroup, max_groups)
    if 0 in groups:
        assert plan == []
        return
    boxes = set()
    for base, counts in plan:
        assert all(1 <= c <= m for c, m in zip(counts, max_groups, strict=True))
        assert all(b % w == 0 for b, w in zip(base, workgroup, strict=True))
        boxes.add(
            tuple((b // w, b // w + c) for b, w, c in zip(base, workgroup, counts, strict=True))
        )
    assert len(boxes) == len(plan)
    # the dispatches are the product of per-dimension intervals that tile [0, groups)
    for d in range(3):
        intervals = sorted({box[d] for box in boxes})
        assert intervals[0][0] == 0 and intervals[-1][1] == groups[d]
        assert all(a[1] == b[0] for a, b in zip(intervals, intervals[1:], strict=False))
    assert len(plan) == np.prod([len({box[d] for box in boxes}) for d in range(3)])


def test_device_lost_at_submit_is_reported_and_the_device_recovers(device, monkeypatch):
    """Fault injection: vkQueueSubmit fails once with VK_ERROR_DEVICE_LOST."""
    program, layout = count_program(device)
    kept = zeros(device, 100)
    device.launch(program, (100,), [kept], args_for(layout))
    device.sync()
    real_submit = device.fn.vkQueueSubmit
    monkeypatch.setattr(device.fn, "vkQueueSubmit", lambda *args: -4)  # VK_ERROR_DEVICE_LOST
    doomed = zeros(device, 100)
    device.launch(program, (100,), [doomed], args_for(layout))
    with pytest.raises(rt.DeviceLost, match="VK_ERROR_DEVICE_LOST"):
        device.sync()
    monkeypatch.setattr(device.fn, "vkQueueSubmit", real_submit)
    assert (read(kept, 100) == 1).all()  # what existed is intact
    device.launch(program, (100,), [kept], args_for(layout))  # and the next launch works
    assert (read(kept, 100) == 2).all()


def test_out_of_memory_inside_a_launch_leaves_the_device_usable(device, monkeypatch):
    """Fault injection: the uniform arena cannot get memory for a launch's argument block."""
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (32, 1, 1), 16
    )
    program = device.create_program(spv("affine_uniform"), layout)
    n = 64
    src, dst = device.create_buffer(4 * n), device.create_buffer(4 * n)
    src.upload(np.arange(n, dtype=np.float32))
    device.sync()

    def no_memory(*args):
        raise rt.OutOfDeviceMemory("injected")

    monkeypatch.setattr(device._uniforms, "allocate", no_memory)
    with pytest.raises(rt.OutOfDeviceMemory, match="injected"):
        device.launch(program, (n,), [src, dst], args_for(layout, 2.0, 0.0))
    monkeypatch.undo()
    device.launch(program, (n,), [src, dst], args_for(layout, 2.0, 1.0))
    np.testing.assert_array_equal(read(dst, n, np.float32), np.arange(n) * 2 + 1)
    np.testing.assert_array_equal(read(src, n, np.float32), np.arange(n))


def test_repeated_launches_skip_rebinding_but_not_changes(device):
    """A launch identical to the one before it (same program, buffers and arguments) does
    not bind them again; any difference, or another program in between, does."""
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (64, 1, 1)
    )
    program = device.create_program(spv("affine"), layout)
    n = 300
    x = np.arange(n, dtype=np.float32)
    src, a, b, c, other = (device.create_buffer(x.nbytes) for _ in range(5))
    src.upload(x)
    other.upload(10 * x)
    freed = device.create_buffer(x.nbytes)
    freed.free()
    count, count_layout = count_program(device)
    counts = zeros(device, n)

    def go(source, dst, scale):
        device.launch(program, (n,), [source, dst], args_for(layout, scale, 0.0))

    device.sync()  # all of what follows in one batch
    go(src, a, 2.0)
    go(src, a, 2.0)  # identical: nothing rebound
    go(src, b, 2.0)  # another buffer
    go(src, b, 3.0)  # other arguments
    device.launch(count, (n,), [counts], args_for(count_layout))
    go(src, b, 3.0)  # same as two launches ago, but another program ran in between
    # a refused launch leaves nothing half-bound: it had pointed slot 0 at `other` already
    # when it found slot 1 freed
    with pytest.raises(ValueError, match="freed"):
        go(other, freed, 3.0)
    go(other, b, 3.0)  # b = 30x, not 3x from what the launch before bound
    go(src, c, 3.0)
    go(other, c, 5.0)  # differs from the launch before in slot 0 (and the arguments)
    # an empty launch records nothing, but the one after it must still bind its own buffers
    device.launch(program, (0,), [src, a], args_for(layout, 7.0, 0.0))
    device.launch(program, (n,), [src, a], args_for(layout, 7.0, 0.0))
    np.testing.assert_array_equal(read(a, n, np.float32), 7 * x)
    go(src, a, 2.0)
    np.testing.assert_array_equal(read(a, n, np.float32), 2 * x)
    np.testing.assert_array_equal(read(b, n, np.float32), 30 * x)
    np.testing.assert_array_equal(read(c, n, np.float32), 50 * x)
