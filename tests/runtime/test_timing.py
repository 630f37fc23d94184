"""GPU timers: timestamps around recorded work, read after it has run."""

from __future__ import annotations

import time

import numpy as np
import pykern.runtime as rt
import pytest
from rt_helpers import args_for, layout_of, slots, spv

N = 1 << 20


@pytest.fixture(scope="module")
def counting(request):
    device = rt.get_device()
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * N)
    counts.upload(np.zeros(N, np.uint32))

    def launch(times=1, on=device):
        for _ in range(times):
            on.launch(program, (N,), [counts], args_for(layout))

    yield device, launch, counts
    counts.free()


def test_timer_measures_the_work_inside_it(counting):
    device, launch, counts = counting
    launch()  # warm up
    before = counts.read_into(np.empty(N, np.uint32))
    with device.timer() as one:
        launch()
    with device.timer() as eight:
        launch(8)
    start = time.perf_counter()
    assert one.elapsed_ns > 0
    eight_ns = eight.elapsed_ns
    wall_ns = (time.perf_counter() - start) * 1e9
    assert eight_ns > 2 * one.elapsed_ns, (one.elapsed_ns, eight_ns)
    assert eight.elapsed_s == pytest.approx(eight_ns * 1e-9)
    assert one.elapsed_ns + eight_ns < wall_ns + 5e8  # within what the wall clock saw
    assert (counts.read_into(np.empty(N, np.uint32)) == before + 9).all()


def test_timer_with_no_work_reads_nearly_zero(counting):
    device, _, _ = counting
    device.sync()
    with device.timer() as t:
        pass
    assert 0 <= t.elapsed_ns < 1e7


def test_timer_spanning_automatic_submits():
    device = rt.open_device(batch_launches=2)
    try:
        layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
        program = device.create_program(spv("count"), layout)
        counts = device.create_buffer(4 * 1000)
        counts.upload(np.zeros(1000, np.uint32))
        with device.timer() as t:
            for _ in range(7):
                device.launch(program, (1000,), [counts], args_for(layout))
        assert device.stats().submits >= 3
        assert t.elapsed_ns > 0
        assert (counts.read_into(np.empty(1000, np.uint32)) == 7).all()
    finally:
        device.close()


def test_many_timers_and_misuse(counting):
    device, launch, _ = counting
    timers = []
    for _ in range(300):  # more than one query pool holds
        with device.timer() as t:
            pass
        timers.append(t)
    assert all(t.elapsed_ns >= 0 for t in timers)
    fresh = device.timer()
    with pytest.raises(RuntimeError, match="not measured"):
        _ = fresh.elapsed_ns
    with fresh:
        pass
    with pytest.raises(RuntimeError, match="one block"):
        with fresh:
            pass
    unread = device.timer()
    with unread:
        launch()
    del unread  # its queries go back to the pool once its work is done
    device.sync()


def test_flush_submits_what_was_recorded_without_waiting(counting):
    device, launch, counts = counting
    device.sync()
    before = counts.read_into(np.empty(N, np.uint32))
    submits = device.stats().submits
    launch(3)
    device.flush()
    assert device.stats().submits == submits + 1  # the three launches, in one batch
    device.flush()  # nothing recorded since: nothing to submit
    assert device.stats().submits == submits + 1
    assert (counts.read_into(np.empty(N, np.uint32)) == before + 3).all()
