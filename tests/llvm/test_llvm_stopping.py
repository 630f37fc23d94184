"""Stopping a kernel on the host device, as on a Vulkan device: a launch that runs past
PYKERN_TIMEOUT raises `pk.DeviceError` (naming PYKERN_TIMEOUT), Ctrl-C raises
KeyboardInterrupt within a second; either way the device goes on working, the next launch is
right and tensors that existed are intact (what the stopped launch wrote is unspecified).

Each case runs in a subprocess with a timeout of its own: a kernel that is not stopped would
hang the test run. Runaway kernels: a `while` loop that never ends (one invocation, many
workgroups, in a workgroup with barriers, in a device function), a `range` loop of 2**62
iterations, a debug-mode kernel.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

PRELUDE = textwrap.dedent("""
    import signal, sys, threading, time
    # Ctrl-C raises KeyboardInterrupt even where the test run was started with SIGINT ignored
    # (a background job of a non-interactive shell, nohup): Python keeps an inherited SIG_IGN
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import pykern as pk
    pk.set_device("host")

    @pk.kernel
    def spin(flag: pk.i32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        k = 0
        while flag[0] == 0:  # never set: never ends
            k += 1
        out[i] = pk.f32(k)

    @pk.kernel(workgroup=(64, 1, 1))
    def spin_with_barrier(flag: pk.i32[:], out: pk.f32[:]):
        s = pk.shared(pk.f32, 64)
        t = pk.local_id(0)
        s[t] = 1.0
        pk.barrier()
        k = 0
        while flag[0] == 0 and t != 1000:
            k += 1
        pk.barrier()
        out[pk.global_id(0)] = s[t] + pk.f32(k)

    @pk.func
    def forever(flag):
        k = 0
        while flag[0] == 0:
            k += 1
        return k

    @pk.kernel
    def spin_in_function(flag: pk.i32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = pk.f32(forever(flag))

    @pk.kernel
    def long_range(out: pk.f32[:], n: pk.i64):
        i = pk.global_id(0)
        total = 0.0
        for k in range(n):  # 2**62 iterations: no end in sight
            total += 1.0
        out[i] = total

    @pk.kernel
    def double(x: pk.f32[:], y: pk.f32[:]):
        i = pk.global_id(0)
        y[i] = 2.0 * x[i]

    flag = pk.zeros(1, dtype=pk.i32)
    kept = pk.asarray(np.arange(1000, dtype=np.float32))
    kept_before = kept.numpy().copy()

    def next_launch_works():
        y = pk.zeros(1000)
        double[1000](kept, y)
        assert np.array_equal(y.numpy(), 2 * kept_before), "the next launch is wrong"
        assert np.array_equal(kept.numpy(), kept_before), "a tensor changed"
        print("next launch ok", flush=True)

    RUNAWAY = {
        "one invocation": lambda: spin[1](flag, pk.zeros(1)),
        "many workgroups": lambda: spin[1 << 16](flag, pk.zeros(1 << 16)),
        "barriers": lambda: spin_with_barrier[256](flag, pk.zeros(256)),
        "function": lambda: spin_in_function[8](flag, pk.zeros(8)),
        "range loop": lambda: long_range[4](pk.zeros(4), 1 << 62),
    }
""")


def script(directory: pathlib.Path, body: str) -> str:
    """A file with the prelude and `body` (kernels need their source in a file)."""
    path = directory / "runaway.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    return str(path)


def run(directory: pathlib.Path, body: str, timeout: float = 120,
        **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script(directory, body)], capture_output=True,
                          text=True, timeout=timeout, check=False, env={**os.environ, **env})


CASES = ["one invocation", "many workgroups", "barriers", "function", "range loop"]


@pytest.mark.parametrize("case", CASES)
def test_pykern_timeout_stops_a_runaway_kernel_with_a_device_error(tmp_path, case):
    result = run(tmp_path, f"""
        start = time.monotonic()
        try:
            RUNAWAY[{case!r}]()
            print("finished?", flush=True)
        except pk.DeviceError as e:
            print("device error after", round(time.monotonic() - start, 2), flush=True)
            print("message:", e, flush=True)
        next_launch_works()
        try:  # and again: the device is not left hung
            RUNAWAY[{case!r}]()
        except pk.DeviceError:
            print("second timeout", flush=True)
        next_launch_works()
    """, PYKERN_TIMEOUT="1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "device error after" in out and "second timeout" in out, out
    seconds = float(out.split("device error after")[1].split()[0])
    assert 0.9 <= seconds < 10, out
    assert "PYKERN_TIMEOUT" in out and "may not terminate" in out, out
    assert out.count("next launch ok") == 2, out


def test_a_kernel_quick_before_and_runaway_now_is_stopped_on_the_calling_thread(tmp_path):
    """A kernel that ran briefly over a grid runs there on the calling thread next time (no
    hand-off to the pool); the watchdog still stops it at PYKERN_TIMEOUT."""
    result = run(tmp_path, """
        for _ in range(3):  # the flag set: the loop ends at once, and the grid is known fast
            flag[...] = 1
            spin[64](flag, pk.zeros(64))
        flag[...] = 0
        start = time.monotonic()
        try:
            spin[64](flag, pk.zeros(64))
            print("finished?", flush=True)
        except pk.DeviceError:
            print("device error after", round(time.monotonic() - start, 2), flush=True)
        next_launch_works()
    """, PYKERN_TIMEOUT="1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "device error after" in out, out
    assert 0.9 <= float(out.split("device error after")[1].split()[0]) < 10, out
    assert "next launch ok" in out, out


def test_a_replayed_kernel_quick_when_recorded_and_runaway_now_is_stopped(tmp_path):
    """A graph's replays make their small launches by one native call (the launch list);
    the watchdog still stops a kernel of it at PYKERN_TIMEOUT, the error names it, and the
    graph replays again once the kernel can end."""
    result = run(tmp_path, """
        x = pk.asarray(np.arange(64, dtype=np.float32))
        y, out = pk.zeros(64), pk.zeros(64)
        flag[...] = 1
        with pk.graph() as g:
            double[64](x, y)
            spin[64](flag, out)
            double[64](y, x)
        for _ in range(4):  # the grids' threads decided: later replays use the list
            g.replay()
        x[...] = pk.asarray(np.arange(64, dtype=np.float32))
        flag[...] = 0
        start = time.monotonic()
        try:
            g.replay()
            print("finished?", flush=True)
        except pk.DeviceError as e:
            print("device error after", round(time.monotonic() - start, 2), flush=True)
            print("message:", e, flush=True)
        next_launch_works()
        x[...] = pk.asarray(np.arange(64, dtype=np.float32))
        flag[...] = 1
        g.replay()
        assert np.array_equal(x.numpy(), 4 * np.arange(64, dtype=np.float32)), x.numpy()
        print("replays again", flush=True)
    """, PYKERN_TIMEOUT="1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "device error after" in out, out
    assert 0.9 <= float(out.split("device error after")[1].split()[0]) < 10, out
    assert "'spin'" in out and "PYKERN_TIMEOUT" in out, out
    assert "next launch ok" in out and "replays again" in out, out


@pytest.mark.parametrize("case", ["one invocation", "many workgroups", "barriers"])
def test_ctrl_c_stops_a_runaway_kernel_within_a_second(tmp_path, case):
    """SIGINT raised from another thread (as a terminal's Ctrl-C reaches some thread)."""
    result = run(tmp_path, f"""
        sent = []
        def interrupt():
            sent.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)
        threading.Timer(1.0, interrupt).start()
        try:
            RUNAWAY[{case!r}]()
            print("finished?", flush=True)
        except KeyboardInterrupt:
            print("interrupted after", round(time.monotonic() - sent[0], 3), flush=True)
        next_launch_works()
    """, PYKERN_TIMEOUT="600")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "interrupted after" in out, out
    assert float(out.split("interrupted after")[1].split()[0]) < 1.0, out
    assert "next launch ok" in out, out


def test_sigint_from_another_process(tmp_path):
    child = subprocess.Popen(
        [sys.executable, script(tmp_path, """
            print("running", flush=True)
            try:
                RUNAWAY["many workgroups"]()
            except KeyboardInterrupt:
                print("interrupted", flush=True)
            next_launch_works()
        """)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYKERN_TIMEOUT": "600"})
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "running"
        time.sleep(1.0)  # into the launch (compiling it takes a moment)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        waited = time.monotonic() - sent
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert "interrupted" in out and "next launch ok" in out, out
    assert waited < 30  # the whole rest of the child (its exit included)


def test_a_debug_kernel_times_out_too(tmp_path):
    result = run(tmp_path, """
        try:
            RUNAWAY["one invocation"]()
        except pk.DeviceError as e:
            print("device error", flush=True)
        next_launch_works()
    """, PYKERN_TIMEOUT="1", PYKERN_DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert "device error" in result.stdout and "next launch ok" in result.stdout


def test_the_backend_stops_a_launch_past_its_timeout(tmp_path):
    """`pykern.llvm.launch(..., timeout=)` on numpy arrays: `LaunchTimedOut`."""
    result = run(tmp_path, """
        from pykern.llvm import launch
        from pykern.llvm.pool import LaunchTimedOut
        flag, out = np.zeros(1, np.int32), np.zeros(4, np.float32)
        try:
            launch(spin, 4, flag, out, timeout=0.5)
        except LaunchTimedOut as e:
            print("stopped:", e, flush=True)
        y = np.zeros(4, np.float32)
        launch(double, 4, np.ones(4, np.float32), y)
        print("then", y.tolist(), flush=True)
    """)
    assert result.returncode == 0, result.stderr
    assert "stopped: the launch did not finish within 0.5 s" in result.stdout
    assert "then [2.0, 2.0, 2.0, 2.0]" in result.stdout


def test_loops_that_end_are_not_stopped():
    """Polls and chunked loops give the same results: a loop of many chunks, a while loop,
    a loop whose body has loops."""
    import pykern as pk

    previous = pk.get_device()
    pk.set_device("host")
    try:
        @pk.kernel
        def sums(out: pk.i64[:], n: pk.i64):
            i = pk.global_id(0)
            total = pk.i64(0)
            for k in range(n):
                total += k % 7
            j = pk.i64(0)
            while j < n // 1000:
                for m in range(3):
                    total += m
                j += 1
            out[i] = total

        n = 300_007  # several chunks
        out = pk.zeros(3, dtype=pk.i64)
        sums[3](out, n)
        expected = sum(k % 7 for k in range(n)) + 3 * (n // 1000)
        np.testing.assert_array_equal(out.numpy(), [expected] * 3)
    finally:
        pk.set_device(previous.info.index)
