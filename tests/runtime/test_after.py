"""`Device.after`: a check that runs once a launch's batch has finished, at the next wait, and
whose exception that wait raises once the runtime's own bookkeeping is done."""

from __future__ import annotations

import numpy as np
import pykern.runtime as rt
import pytest
from rt_helpers import layout_of, slots, spv


class Report(Exception):
    pass


@pytest.fixture
def device():
    return rt.get_device()


def launch_count(device, n=256):
    """One launch of the `count` shader over a fresh buffer; returns the buffer."""
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    buf = device.create_buffer(4 * n)
    buf.upload(np.zeros(n, np.uint32))
    device.launch(program, (n,), [buf], layout.pack([0] * 6))
    return buf


def test_check_runs_at_the_wait_after_its_batch(device):
    buf = launch_count(device)
    ran = []
    device.after(buf.use_serial, lambda: ran.append(buf.use_serial))
    assert ran == []  # the batch has not even been submitted
    device.sync()
    assert ran == [buf.use_serial]
    device.sync()
    assert len(ran) == 1  # once


def test_exception_of_a_check_comes_out_of_the_wait_and_nothing_is_lost(device):
    buf = launch_count(device)

    def fail():
        raise Report("the launch went wrong")

    device.after(buf.use_serial, fail)
    with pytest.raises(Report, match="went wrong"):
        buf.read_into(np.empty(256, np.uint32))
    # the wait finished its work before raising: the data is there, the device goes on
    assert buf.read_into(np.empty(256, np.uint32)).tolist() == [1] * 256
    other = launch_count(device)
    device.sync()
    assert other.read_into(np.empty(256, np.uint32)).tolist() == [1] * 256


def test_check_of_a_batch_that_finished_earlier_runs_at_the_next_wait(device):
    buf = launch_count(device)
    device.sync()
    ran = []
    device.after(buf.use_serial, lambda: ran.append(True))  # finished already: due now
    buf.read_into(np.empty(256, np.uint32))  # a wait with nothing to wait for
    assert ran == [True]


def test_two_failing_checks_raise_at_two_waits(device):
    first, second = launch_count(device), launch_count(device)

    def fail(name):
        def check():
            raise Report(name)
        return check

    device.after(first.use_serial, fail("first"))
    device.after(second.use_serial, fail("second"))
    with pytest.raises(Report, match="first"):
        device.sync()
    with pytest.raises(Report, match="second"):
        device.sync()
    device.sync()
