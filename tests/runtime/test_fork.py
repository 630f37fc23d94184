"""os.fork(): a child never tears down (or uses) its parent's device, exits promptly, and gets a
clear DeviceError if it tries; the parent carries on. Each case runs in a subprocess with a
timeout, and each child is waited for with a deadline of its own: before the fix a child hung
forever in vkDestroyDevice at exit."""

from __future__ import annotations

from rt_helpers import run_python

WAIT_FOR_CHILD = """
import os, time

def wait_for(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung"
"""

PARENT_WITH_A_DEVICE = (
    WAIT_FOR_CHILD
    + """
device = rt.get_device()
layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
program = device.create_program(spv("count"), layout)
counts = device.create_buffer(4 * 100)
counts.upload(np.zeros(100, np.uint32))
device.launch(program, (100,), [counts], args_for(layout))
device.sync()

def child(body):
    pid = os.fork()
    if pid == 0:
        try:
            body()
        except rt.DeviceError as error:
            print("child error:", error, flush=True)
        raise SystemExit(0)  # a normal exit: atexit handlers and finalizers run
    print("child exit:", wait_for(pid), flush=True)

def uses_a_buffer():
    counts.read_into(np.empty(100, np.uint32))

def launches():
    device.launch(program, (100,), [counts], args_for(layout))

def opens_a_device():
    rt.get_device()
"""
)


def child_reports(out: str) -> list[tuple[str, str]]:
    """(error or '', exit) per child, in order."""
    reports, error = [], ""
    for line in out.splitlines():
        if line.startswith("child error: "):
            error = line[len("child error: "):]
        elif line.startswith("child exit: "):
            reports.append((error, line[len("child exit: "):]))
            error = ""
    return reports


def test_forked_children_exit_and_refuse_the_parents_device():
    result, _ = run_python(
        PARENT_WITH_A_DEVICE
        + """
child(lambda: None)  # never touches pykern
child(uses_a_buffer)
child(launches)
child(opens_a_device)
child(lambda: rt.set_device(0))
# the parent is unaffected: its device and buffers still work
device.launch(program, (100,), [counts], args_for(layout))
assert (counts.read_into(np.empty(100, np.uint32)) == 2).all()
print("parent works", flush=True)
""",
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    reports = child_reports(result.stdout)
    assert [exit for _, exit in reports] == ["0"] * 5, result.stdout + result.stderr
    assert reports[0][0] == ""
    for error, _ in reports[1:3]:
        assert "belongs to the parent process (pid" in error and "os.fork()" in error, error
        assert "'spawn'" in error
    for error, _ in reports[3:]:
        assert "cannot use Vulkan in this process" in error and "os.fork()" in error, error
        assert "'spawn'" in error
    assert "parent works" in result.stdout


def test_a_child_of_a_process_without_a_device_opens_its_own():
    """lavapipe lets such a child open a device of its own; NVIDIA's driver refuses any device
    in a child of a process that used Vulkan, which must then be a clear error."""
    result, _ = run_python(
        WAIT_FOR_CHILD
        + """
assert rt.devices()  # the parent has an instance, but no device
layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
pid = os.fork()
if pid == 0:
    try:
        device = rt.get_device()
    except rt.DeviceError as error:  # NVIDIA's driver refuses a device after a fork
        assert "os.fork()" in str(error) and "'spawn'" in str(error), error
        print("child refused clearly", flush=True)
        raise SystemExit(0)
    counts = device.create_buffer(4 * 100)
    counts.upload(np.zeros(100, np.uint32))
    device.launch(device.create_program(spv("count"), layout), (100,), [counts],
                  args_for(layout))
    assert (counts.read_into(np.empty(100, np.uint32)) == 1).all()
    print("child ran a kernel", flush=True)
    raise SystemExit(0)
print("child exit:", wait_for(pid), flush=True)
device = rt.get_device()  # and the parent still can
assert device.create_buffer(16) is not None
""",
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    ran = "child ran a kernel" in result.stdout or "child refused clearly" in result.stdout
    assert ran and "child exit: 0" in result.stdout, result.stdout + result.stderr
