"""Process exit: orderly teardown with no validation error, and no hang after a runaway kernel.

Each case runs in a subprocess, since what is tested is what happens at exit."""

from __future__ import annotations

from rt_helpers import run_python as run


def test_exit_with_pending_work_tears_down_cleanly():
    result, _ = run(
        """
        device = rt.get_device()
        layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
        program = device.create_program(spv("count"), layout)
        counts = device.create_buffer(4 * 1000)
        counts.upload(np.zeros(1000, np.uint32))
        for _ in range(300):  # one batch submitted, one still recording at exit
            device.launch(program, (1000,), [counts], args_for(layout))
        freed = device.create_buffer(64)
        device.launch(program, (16,), [freed], args_for(layout))
        freed.free()  # released by the teardown, after its launch
        other = rt.open_device(force_staging=True)
        other.create_buffer(100).upload(bytes(100))
        print("done", flush=True)
    """,
        timeout=60,
        PYKERN_VALIDATE="1",
    )
    assert result.returncode == 0, result.stderr
    assert "done" in result.stdout
    assert "Validation Error" not in result.stderr and "validation [error]" not in result.stderr, (
        result.stderr
    )


def test_runaway_kernel_times_out_and_exit_does_not_hang():
    result, seconds = run(
        """
        from rt_helpers import assemble
        device = rt.get_device()
        layout = layout_of(slots("flag", "out", writable=("out",)), [], (64, 1, 1))
        program = device.create_program(assemble("hang"), layout)
        flag = device.create_buffer(16)
        flag.upload(np.zeros(4, np.uint32))
        n = 100_000  # never ends on a GPU; a minute of work on lavapipe, which ends every loop
        out = device.create_buffer(4 * n)
        device.launch(program, (n,), [flag, out], args_for(layout))
        try:
            device.sync()
            print("finished in time", flush=True)
        except rt.DeviceError as error:
            print("timeout:", error, flush=True)
            assert device.hung
    """,
        timeout=60,
        PYKERN_TIMEOUT="1",
    )
    assert result.returncode == 0, result.stderr
    if "finished in time" in result.stdout:
        return  # a fast device: nothing to time out
    assert "timeout:" in result.stdout and "PYKERN_TIMEOUT" in result.stdout
    assert seconds < 30, f"exit took {seconds:.1f} s"


def test_device_lost_while_waiting_is_reported_and_the_process_exits():
    """Fault injection: every fence wait reports VK_ERROR_DEVICE_LOST from some point on."""
    result, seconds = run(
        """
        device = rt.get_device()
        layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
        program = device.create_program(spv("count"), layout)
        counts = device.create_buffer(4 * 1000)
        counts.upload(np.zeros(1000, np.uint32))
        device.launch(program, (1000,), [counts], args_for(layout))
        device.fn.vkWaitForFences = lambda *args: -4  # VK_ERROR_DEVICE_LOST
        try:
            device.sync()
        except rt.DeviceLost as error:
            print("lost:", error, flush=True)
        try:
            counts.read_into(np.empty(1000, np.uint32))
        except rt.DeviceLost:
            print("still lost", flush=True)
        # exit: the teardown must neither hang nor trip the validation layer
    """,
        timeout=60,
        PYKERN_VALIDATE="1",
    )
    assert result.returncode == 0, result.stderr
    assert "lost: vkWaitForFences failed: VK_ERROR_DEVICE_LOST" in result.stdout
    assert "still lost" in result.stdout
    assert "Validation Error" not in result.stderr, result.stderr
    assert seconds < 30
