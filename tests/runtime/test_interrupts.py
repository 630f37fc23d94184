"""Ctrl-C: a KeyboardInterrupt is delivered during long waits, and one raised anywhere in a
launch leaves the device consistent (the next launch runs on its own buffers and arguments)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pykern.runtime as rt
import pytest
from rt_helpers import args_for, layout_of, slots, spin_result, spv

HERE = Path(__file__).parent


@pytest.fixture(scope="module", params=["push_descriptors", "descriptor_pools"])
def device(request):
    """Each test runs on both ways of binding buffers."""
    if request.param == "push_descriptors":
        current = rt.get_device()
        if not current.push_descriptors:
            pytest.skip("the device has no VK_KHR_push_descriptor")
        yield current
    else:
        separate = rt.open_device(push_descriptors=False)
        yield separate
        separate.close()


def interrupt_after(device, monkeypatch, name: str) -> None:
    """Makes the raw Vulkan function `name` raise KeyboardInterrupt once, after it ran: where
    Python delivers a Ctrl-C that arrived during a C call."""
    real = getattr(device.fn, name)
    state = {"armed": True}

    def call(*args):
        result = real(*args)
        if state["armed"]:
            state["armed"] = False
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(device.fn, name, call)


def bind_call(device) -> str:
    return "vkCmdPushDescriptorSetKHR" if device.push_descriptors else "vkCmdBindDescriptorSets"


def affine(device):
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (64, 1, 1)
    )
    return device.create_program(spv("affine"), layout), layout


def count(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    return device.create_program(spv("count"), layout), layout


N = 300
X = np.arange(N, dtype=np.float32)


def read(buf, dtype=np.float32):
    return buf.read_into(np.empty(N, dtype))


def buffers(device, k):
    out = [device.create_buffer(4 * N) for _ in range(k)]
    for buf in out:
        buf.upload(np.zeros(N, np.float32))
    return out


@pytest.mark.parametrize(
    "call", ["vkCmdPipelineBarrier", "bind", "vkCmdPushConstants", "vkCmdDispatch"]
)
def test_launch_after_an_interrupted_one_runs_on_its_own_buffers_and_arguments(
    device, monkeypatch, call
):
    program, layout = affine(device)
    src, p, q = buffers(device, 3)
    src.upload(X)
    device.sync()  # what follows in one batch, where repeated launches skip rebinding
    device.launch(program, (N,), [src, p], args_for(layout, 2.0, 0.0))  # p = 2x
    interrupt_after(device, monkeypatch, bind_call(device) if call == "bind" else call)
    with pytest.raises(KeyboardInterrupt):  # q = 3p, reading p: a barrier first
        device.launch(program, (N,), [p, q], args_for(layout, 3.0, 0.0))
    monkeypatch.undo()
    device.launch(program, (N,), [p, q], args_for(layout, 3.0, 0.0))  # the same, again
    np.testing.assert_array_equal(read(q), 6 * X)
    np.testing.assert_array_equal(read(p), 2 * X)
    np.testing.assert_array_equal(read(src), X)


@pytest.mark.parametrize("call", ["vkCmdBindPipeline", "bind", "vkCmdDispatch"])
def test_interrupted_launch_of_another_program_leaves_the_pipeline_right(
    device, monkeypatch, call
):
    program, layout = affine(device)
    counter, counter_layout = count(device)
    src, p = buffers(device, 2)
    counts = device.create_buffer(4 * N)
    counts.upload(np.zeros(N, np.uint32))
    src.upload(X)
    device.sync()
    device.launch(program, (N,), [src, p], args_for(layout, 2.0, 0.0))
    interrupt_after(device, monkeypatch, bind_call(device) if call == "bind" else call)
    with pytest.raises(KeyboardInterrupt):
        device.launch(counter, (N,), [counts], args_for(counter_layout))
    monkeypatch.undo()
    # identical to the launch before the interrupted one: it must bind its pipeline again
    device.launch(program, (N,), [src, p], args_for(layout, 2.0, 0.0))
    device.launch(program, (N,), [src, p], args_for(layout, 5.0, 0.0))
    np.testing.assert_array_equal(read(p), 5 * X)
    ran = int(read(counts, np.uint32)[0])
    assert ran in (0, 1)  # the interrupted launch ran whole or not at all
    device.launch(counter, (N,), [counts], args_for(counter_layout))
    assert (read(counts, np.uint32) == ran + 1).all()
    np.testing.assert_array_equal(read(src), X)


@pytest.mark.parametrize("call", ["vkCmdPipelineBarrier", "bind", "vkCmdDispatch"])
def test_a_read_after_an_interrupted_launch_waits_for_what_it_recorded(
    device, monkeypatch, call
):
    """The interrupted launch is the first command of its batch: whatever of it was recorded
    is submitted by the next wait, and does not run (and change the buffer) later unasked."""
    program, layout = affine(device)
    counter, counter_layout = count(device)
    src, p, q = buffers(device, 3)
    counts = device.create_buffer(4 * N)
    counts.upload(np.zeros(N, np.uint32))
    src.upload(X)
    device.launch(program, (N,), [src, p], args_for(layout, 2.0, 0.0))
    # submitted, not waited for: the next launch is the first of a new batch and still needs a
    # barrier after the write of p (a wait for all work would have made it unneeded)
    device._batches.submit()
    interrupt_after(device, monkeypatch, bind_call(device) if call == "bind" else call)
    with pytest.raises(KeyboardInterrupt):
        device.launch(program, (N,), [p, q], args_for(layout, 3.0, 0.0))
    monkeypatch.undo()
    seen = read(q)
    assert (seen == 0).all() or (seen == 6 * X).all(), seen[:4]
    device.launch(counter, (N,), [counts], args_for(counter_layout))
    device.sync()
    np.testing.assert_array_equal(read(q), seen)
    device.launch(program, (N,), [p, q], args_for(layout, 3.0, 0.0))
    np.testing.assert_array_equal(read(q), 6 * X)


@pytest.mark.parametrize("call", ["vkEndCommandBuffer", "vkQueueSubmit", "vkWaitForFences"])
def test_interrupted_submit_or_wait_loses_no_work(device, monkeypatch, call):
    """A Ctrl-C as the batch is ended, submitted or waited for: the batch is submitted and
    tracked all the same, so reads wait for it and the next launches record into a new one."""
    program, layout = affine(device)
    src, p, q = buffers(device, 3)
    src.upload(X)
    device.sync()
    device.launch(program, (N,), [src, p], args_for(layout, 2.0, 0.0))
    interrupt_after(device, monkeypatch, call)
    with pytest.raises(KeyboardInterrupt):
        device.sync()
    monkeypatch.undo()
    np.testing.assert_array_equal(read(p), 2 * X)
    device.launch(program, (N,), [p, q], args_for(layout, 3.0, 0.0))
    np.testing.assert_array_equal(read(q), 6 * X)
    device.sync()
    assert not device._batches.in_flight and device._batches.recording is None


@pytest.fixture
def staged():
    """A device that stages every transfer through a copy command, as a discrete GPU does."""
    device = rt.open_device(force_staging=True)
    yield device
    device.close()


def test_interrupted_staged_upload_is_waited_for_before_its_buffer_goes(staged, monkeypatch):
    device = staged
    program, layout = affine(device)
    src, dst = buffers(device, 2)
    device.sync()
    interrupt_after(device, monkeypatch, "vkCmdCopyBuffer")
    with pytest.raises(KeyboardInterrupt):
        src.upload(X)
    monkeypatch.undo()
    # the copy was recorded: the buffer is in use until it has run, and holds what it copied
    device.launch(program, (N,), [src, dst], args_for(layout, 2.0, 0.0))
    np.testing.assert_array_equal(read(dst), 2 * X)
    np.testing.assert_array_equal(read(src), X)
    device.sync()
    device.launch(program, (N,), [dst, src], args_for(layout, 0.5, 0.0))
    interrupt_after(device, monkeypatch, "vkCmdCopyBuffer")
    with pytest.raises(KeyboardInterrupt):
        dst.upload(np.zeros(N, np.float32))
    monkeypatch.undo()
    dst.free()  # while its copy is still only recorded: released once that has run
    device.sync()
    np.testing.assert_array_equal(read(src), X)


def test_interrupted_uniform_reservation_leaves_the_device_usable(device, monkeypatch):
    """A Ctrl-C while a launch gets memory for its uniform argument block (which may wait)."""
    layout = layout_of(
        slots("src", "dst", writable=("dst",)), [("scale", "f"), ("shift", "f")], (32, 1, 1), 16
    )
    program = device.create_program(spv("affine_uniform"), layout)
    src, dst = buffers(device, 2)
    src.upload(X)
    device.launch(program, (N,), [src, dst], args_for(layout, 2.0, 0.0))

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(device._uniforms, "reserve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        device.launch(program, (N,), [dst, src], args_for(layout, 3.0, 1.0))
    monkeypatch.undo()
    device.launch(program, (N,), [src, dst], args_for(layout, 4.0, 1.0))
    np.testing.assert_array_equal(read(dst), 4 * X + 1)
    np.testing.assert_array_equal(read(src), X)


# ---- Ctrl-C during a wait (a real SIGINT, in a subprocess) ----

WAITER = f"""
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # also where SIGINT came in ignored
sys.path.insert(0, {str(HERE)!r})
import numpy as np
import pykern.runtime as rt
from rt_helpers import args_for, layout_of, slots, spv

n = int(sys.argv[1])
device = rt.get_device()
layout = layout_of(slots("out", writable=("out",)), [], (64, 1, 1))
program = device.create_program(spv("spin"), layout)
out = device.create_buffer(4 * n)
device.launch(program, (n,), [out], args_for(layout))
device._batches.submit()
print("waiting", flush=True)
start = time.monotonic()
finished = False
try:
    device.sync()
    finished = True
    print("finished in time", flush=True)
    time.sleep(60)  # a fast device: the interrupt, sent after a fixed delay, is taken here
except KeyboardInterrupt:
    if not finished:
        print(f"interrupted after {{time.monotonic() - start:.2f}} s", flush=True)
        assert not device.hung and len(device._batches.in_flight) == 1  # still tracked
result = out.read_into(np.empty(n, np.uint32))  # waits for the kernel after all
print(f"read after {{time.monotonic() - start:.2f}} s", flush=True)
np.save(sys.argv[2], result)
"""


def test_ctrl_c_during_a_wait_is_delivered_at_once(tmp_path):
    n = 150_000  # ~3.5 s of work on lavapipe on one core: far longer than the interrupt takes
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WAITER), str(n), str(tmp_path / "out.npy")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYKERN_TIMEOUT": "120"},
    )
    try:
        assert child.stdout.readline() == "waiting\n", child.stderr.read()
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert "read after" in out, err
    # the interrupted wait left the work tracked: the read waited for it and got its result
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), spin_result(n))
    if "finished in time" in out:
        return  # a fast device: the wait ended before the interrupt came
    interrupted = float(out.split("interrupted after ")[1].split(" s")[0])
    finished = float(out.split("read after ")[1].split(" s")[0])
    # delivered within a wait slice of the signal, while the kernel still ran (not once the
    # wait was over, as a single long vkWaitForFences would)
    assert interrupted < 0.3 + 1.0 and finished - interrupted > 0.5, out
