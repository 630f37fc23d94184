"""After a wait timed out (PYKERN_TIMEOUT), the device refuses every use at once with one clear
error while the runaway work still runs, set_device opens a fresh device that works, and the
device recovers by itself if the work finishes after all.

Each case runs in a subprocess: a kernel that does not finish keeps its process busy."""

from __future__ import annotations

from textwrap import dedent

from rt_helpers import run_python

SPIN = """
device = rt.get_device()
spin_layout = layout_of(slots("out", writable=("out",)), [], (64, 1, 1))
spin = device.create_program(spv("spin"), spin_layout)
count_layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))

def count_once(on):
    counts = on.create_buffer(4 * 100)
    counts.upload(np.zeros(100, np.uint32))
    on.launch(on.create_program(spv("count"), count_layout), (100,), [counts],
              args_for(count_layout))
    return counts.read_into(np.empty(100, np.uint32))

kept = device.create_buffer(4 * 100)
kept.upload(np.arange(100, dtype=np.uint32))
"""


def test_after_a_timeout_the_device_refuses_use_at_once_and_set_device_opens_a_fresh_one():
    result, _ = run_python(
        SPIN
        + dedent("""
        import time
        from rt_helpers import assemble
        # This device alone waits 1 s: the fresh one below waits PYKERN_TIMEOUT (60 s), since on
        # lavapipe every device shares one pool of CPU threads, and its work starts only once
        # the kernel that timed out here has finished.
        device._batches.timeout = 1.0
        print("kind:", device.info.kind, flush=True)
        hang_layout = layout_of(slots("flag", "out", writable=("out",)), [], (64, 1, 1))
        hang = device.create_program(assemble("hang"), hang_layout)
        flag = device.create_buffer(16)
        flag.upload(np.zeros(4, np.uint32))
        n = 4_000  # never ends on a GPU; seconds of work on lavapipe, which ends every loop
        out = device.create_buffer(4 * n)
        device.launch(hang, (n,), [flag, out], args_for(hang_layout))
        try:
            device.sync()
            print("finished in time", flush=True)
            raise SystemExit(0)
        except rt.DeviceError as error:
            print("timeout:", error, flush=True)
        for use in (device.sync, lambda: kept.read_into(np.empty(100, np.uint32)),
                    lambda: device.create_buffer(16), lambda: count_once(device)):
            start = time.monotonic()
            try:
                use()
                print("used a hung device", flush=True)
            except rt.DeviceError as error:
                took = time.monotonic() - start
                print(f"refused in {took:.2f} s:", error, flush=True)
        assert device.hung and not device.usable
        fresh = rt.set_device(device.info.index)
        assert fresh is not device and rt.get_device() is fresh
        assert (count_once(fresh) == 1).all()
        print("fresh device works", flush=True)
        if device.info.kind == "cpu":  # lavapipe cuts the loop: the kernel ends after all
            deadline = time.monotonic() + 60
            while not device.usable:
                assert time.monotonic() < deadline, "the kernel never ended"
                time.sleep(0.05)
            assert (kept.read_into(np.empty(100, np.uint32)) == np.arange(100)).all()
            assert (out.read_into(np.empty(n, np.uint32)) == 65_535).all()
            print("old device recovered", flush=True)
        # exit: the fresh device is torn down, the hung one (on a GPU) left alone
        """),
        timeout=120,
        PYKERN_TIMEOUT="60",
    )
    assert result.returncode == 0, result.stderr
    if "finished in time" in result.stdout:
        return  # a fast device: nothing to time out
    out = result.stdout
    assert "timeout:" in out and "PYKERN_TIMEOUT" in out and "set_device(" in out, out
    assert "used a hung device" not in out, out
    refusals = [line for line in out.splitlines() if line.startswith("refused in ")]
    assert len(refusals) == 4, out
    for line in refusals:
        assert float(line.split()[2]) < 0.5, line  # no second wait of PYKERN_TIMEOUT
        assert "is unusable" in line and "still running" in line and "set_device(" in line
    assert "fresh device works" in out, out
    if "kind: cpu" in out:  # lavapipe, where the runaway kernel ends after all
        assert "old device recovered" in out, out


def test_a_device_recovers_once_the_work_that_timed_out_finishes():
    result, _ = run_python(
        SPIN
        + dedent("""
        import time
        n = 40_000  # ~1 s of work on lavapipe, more than the timeout below
        out = device.create_buffer(4 * n)
        device.launch(spin, (n,), [out], args_for(spin_layout))
        try:
            device.sync()
            print("finished in time", flush=True)
            raise SystemExit(0)
        except rt.DeviceError:
            print("timeout", flush=True)
        deadline = time.monotonic() + 60
        while not device.usable:  # refused while the kernel still runs
            assert time.monotonic() < deadline, "the kernel never finished"
            time.sleep(0.05)
        assert not device.hung and rt.set_device(device.info.index) is device
        from rt_helpers import spin_result
        assert (out.read_into(np.empty(n, np.uint32)) == spin_result(n)).all()
        assert (kept.read_into(np.empty(100, np.uint32)) == np.arange(100)).all()
        assert (count_once(device) == 1).all()
        print("recovered", flush=True)
        """),
        timeout=90,
        PYKERN_TIMEOUT="0.2",
    )
    assert result.returncode == 0, result.stderr
    if "finished in time" in result.stdout:
        return
    assert "timeout" in result.stdout and "recovered" in result.stdout, result.stdout
