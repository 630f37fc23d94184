"""Debug mode on the host backend: every array access bounds-checked and asserts evaluated,
reported as pk.KernelIndexError / pk.KernelAssertionError with the very message the Vulkan
debug path (lavapipe) gives, and the interpreter where it reports the same failure. A failing
access touches no memory, the rest of the launch runs as on Vulkan, and the next launch works.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import pykern as pk
import pykern.llvm


def host_error(kernel: pk.Kernel, grid, *args, threads: int | None = None) -> BaseException:
    with pytest.raises((pk.KernelIndexError, pk.KernelAssertionError)) as info:
        pykern.llvm.launch(kernel, grid, *args, threads=threads)
    return info.value


def vulkan_error(kernel: pk.Kernel, grid, *args) -> BaseException:
    with pytest.raises((pk.KernelIndexError, pk.KernelAssertionError)) as info:
        kernel[grid](*args)
    return info.value


def interpreter_error(kernel: pk.Kernel, grid, *args) -> BaseException:
    interpreted = pk.kernel(kernel.__wrapped__, workgroup=kernel.workgroup, debug=True,
                            interpret=True)
    with pytest.raises((pk.KernelIndexError, pk.KernelAssertionError)) as info:
        interpreted[grid](*args)
    return info.value


def copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def same_report(kernel: pk.Kernel, grid, *args, interpreter: bool = True) -> str:
    """The host's error, checked to be the Vulkan path's (and the interpreter's) to the
    letter, of the same type; its message."""
    host = host_error(kernel, grid, *copies(args))
    device = vulkan_error(kernel, grid, *copies(args))
    assert type(host) is type(device)
    assert str(host) == str(device)
    if interpreter:
        ref = interpreter_error(kernel, grid, *copies(args))
        assert type(host) is type(ref) and str(host) == str(ref)
    return str(host)


def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


# ------------------------------------------------------------------ out-of-bounds accesses


def reads_past_the_end(x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = x[i + 1]  # marker: read


def test_a_read_past_the_end_is_reported_as_on_vulkan():
    k = pk.kernel(reads_past_the_end, debug=True)
    text = same_report(k, 8, np.arange(8, dtype=np.float32), np.zeros(8, np.float32))
    line = line_of(reads_past_the_end, "marker: read")
    assert text.startswith(f"{__file__}:{line}:")
    assert "kernel 'reads_past_the_end', invocation (7, 0, 0): index (8,) is out of bounds " \
           "for 'x' with shape (8,)" in text
    assert text.endswith("\n    out[i] = x[i + 1]  # marker: read")


@pk.kernel(workgroup=(4, 4), debug=True)
def shifted(a: pk.f32[:, :], out: pk.f32[:, :], bi: int, bj: int, di: int, dj: int,
            write: bool):
    # invocation (bi, bj) alone reads (or writes) its element shifted by (di, dj)
    i = pk.global_id(0)
    j = pk.global_id(1)
    if i == bi and j == bj:
        if write:
            out[i + di, j + dj] = a[i, j]
        else:
            out[i, j] = a[i + di, j + dj]
    else:
        out[i, j] = a[i, j]


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
@pytest.mark.parametrize("at, shift, index", [
    ((4, 1), (1, 0), (5, 1)),  # the first index past its dimension
    ((2, 2), (0, 1), (2, 3)),  # the second
    ((4, 2), (1, 1), (5, 3)),  # both
    ((0, 0), (-1, 0), (-1, 0)),  # a negative first index
    ((1, 0), (0, -1), (1, -1)),  # a negative second index
    ((3, 1), (0, -7), (3, -6)),  # negative, and inside the buffer as a flat address
], ids=["first", "second", "both", "negative-first", "negative-second", "negative-inside"])
def test_each_index_of_a_2d_access_is_checked(at, shift, index, write):
    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    out = np.zeros((5, 3), np.float32)
    text = same_report(shifted, (5, 3), a, out, *at, *shift, write)
    array = "out" if write else "a"
    assert f"invocation ({at[0]}, {at[1]}, 0): index {index} is out of bounds for " \
           f"'{array}' with shape (5, 3)" in text


def test_the_interpreter_reports_a_bad_first_index_of_a_2d_access():
    a = np.zeros((5, 3), np.float32)
    error = interpreter_error(shifted, (5, 3), a, a.copy(), 4, 1, 1, 0, False)
    assert "index (5, 1) is out of bounds for 'a'" in str(error)


def test_a_failing_access_touches_no_memory_and_the_rest_runs_as_on_vulkan():
    # the arrays are views into larger buffers: what lies around them must stay untouched
    def run(launch) -> tuple[np.ndarray, np.ndarray]:
        base_a = np.arange(100, dtype=np.float32).reshape(10, 10)
        base_out = np.full((10, 10), -1.0, np.float32)
        a, out = base_a[2:7, 3:6], base_out[2:7, 3:6]
        with pytest.raises(pk.KernelIndexError):
            launch(shifted, (5, 3), a, out, 4, 2, 1, 1, True)
        return base_a, base_out

    def vulkan(kernel, grid, *args):
        tensors = [pk.asarray(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
                   for v in args]
        try:
            kernel[grid](*tensors)
        finally:
            for view, t in zip(args, tensors):
                if isinstance(view, np.ndarray):
                    view[...] = t.numpy()

    host_a, host_out = run(pykern.llvm.launch)
    device_a, device_out = run(vulkan)
    expected_out = np.full((10, 10), -1.0, np.float32)
    expected_out[2:7, 3:6] = host_a[2:7, 3:6]
    expected_out[6, 5] = -1.0  # the failing invocation's write went nowhere
    np.testing.assert_array_equal(host_out, expected_out)
    np.testing.assert_array_equal(host_a, np.arange(100).reshape(10, 10))
    np.testing.assert_array_equal(host_out, device_out)
    np.testing.assert_array_equal(host_a, device_a)


def test_a_failing_read_gives_zero_and_the_launch_goes_on():
    out = np.full(8, -1.0, np.float32)
    k = pk.kernel(reads_past_the_end, debug=True)
    with pytest.raises(pk.KernelIndexError):
        pykern.llvm.launch(k, 8, np.arange(1, 9, dtype=np.float32), out)
    np.testing.assert_array_equal(out, [2, 3, 4, 5, 6, 7, 8, 0])


def test_after_an_error_the_next_launch_works():
    k = pk.kernel(reads_past_the_end, debug=True)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(pk.KernelIndexError):
        pykern.llvm.launch(k, 8, x, out)
    np.testing.assert_array_equal(x, np.arange(8))
    out[:] = 0
    pykern.llvm.launch(k, 7, x, out)  # every access inside: no error
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 5, 6, 7, 0])
    with pytest.raises(pk.KernelIndexError, match=r"invocation \(7, 0, 0\)"):
        pykern.llvm.launch(k, 8, x, out)  # and a failing one again reports afresh


@pk.kernel(workgroup=(8,), debug=True)
def local_and_shared(n: int, which: int, out: pk.f32[:]):
    buf = pk.local(pk.f32, 4)
    tile = pk.shared(pk.f32, (2, 8))
    i = pk.global_id(0)
    k = i if i != 5 else n  # invocation 5 alone indexes with n
    if which == 0:
        buf[k % 4 if i != 5 else k] = 1.0
        out[i] = buf[i % 4]
    elif which == 1:
        out[i] = buf[k % 4 if i != 5 else k]
    elif which == 2:
        tile[1, k] = 2.0
        out[i] = tile[1, i]
    else:
        out[i] = pk.atomic_add(tile, (0, k), 1.0)


@pytest.mark.parametrize("which, n, array, index, shape", [
    (0, 4, "buf", "(4,)", "(4,)"), (1, -1, "buf", "(-1,)", "(4,)"),
    (2, 8, "tile", "(1, 8)", "(2, 8)"), (3, -3, "tile", "(0, -3)", "(2, 8)"),
], ids=["local-write", "local-read", "shared-write", "shared-atomic"])
def test_local_and_shared_arrays_are_checked(which, n, array, index, shape):
    text = same_report(local_and_shared, 8, n, which, np.zeros(8, np.float32))
    assert f"invocation (5, 0, 0): index {index} is out of bounds for '{array}' with " \
           f"shape {shape}" in text


def test_a_failing_atomic_gives_zero_and_changes_nothing():
    @pk.kernel(debug=True)
    def count(hits: pk.i32[:], slot: pk.i32[:], old: pk.i32[:]):
        i = pk.global_id(0)
        old[i] = pk.atomic_add(hits, slot[i], 1)

    hits = np.full(4, 10, np.int32)
    old = np.full(3, -1, np.int32)
    text = str(host_error(count, 3, hits, np.array([1, 4, 1], np.int32), old, threads=1))
    assert "invocation (1, 0, 0): index (4,) is out of bounds for 'hits' with shape (4,)" \
        in text
    np.testing.assert_array_equal(hits, [10, 12, 10, 10])
    assert sorted(old.tolist()) == [0, 10, 11]


@pk.func
def element(x, i):
    return x[i]  # marker: func


def test_an_access_inside_a_device_function_names_its_line():
    @pk.kernel(debug=True)
    def via_func(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = element(x, i + 1)

    text = same_report(via_func, 4, np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert f":{line_of(element, 'marker: func')}:" in text.splitlines()[0]
    assert "'via_func', invocation (3, 0, 0): index (4,)" in text


def test_an_access_past_the_grid_of_a_barrier_kernel_names_the_rule():
    @pk.kernel(workgroup=(64,), debug=True)
    def unguarded(x: pk.f32[:], total: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        t = pk.local_id(0)
        buf[t] = x[pk.global_id(0)]
        pk.barrier()
        if t == 0:
            pk.atomic_add(total, 0, buf[0])

    x = np.ones(100, np.float32)
    total = np.zeros(1, np.float32)
    host = str(host_error(unguarded, 100, x, total, threads=1))
    assert host.startswith(f"{__file__}:")
    assert "invocation (100, 0, 0): index (100,) is out of bounds for 'x' with shape (100,) " \
           "(invocation (100, 0, 0) lies outside the grid (100, 1, 1)" in host
    assert str(interpreter_error(unguarded, 100, x, total)) == host
    pykern.llvm.launch(unguarded, 128, np.ones(128, np.float32), total)  # no error


def test_one_access_past_the_grid_of_a_barrier_kernel_is_reported_as_on_vulkan():
    @pk.kernel(workgroup=(64,), debug=True)
    def one_past(x: pk.f32[:], out: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        t = pk.local_id(0)
        i = pk.global_id(0)
        buf[t] = x[i if i == 101 else min(i, 99)]  # only invocation 101 reads past x
        pk.barrier()
        if i < pk.grid(0):
            out[i] = buf[(t + 1) % 64]

    text = same_report(one_past, 100, np.ones(100, np.float32), np.zeros(100, np.float32))
    assert "invocation (101, 0, 0): index (101,) is out of bounds for 'x' with shape (100,) " \
           "(invocation (101, 0, 0) lies outside the grid (100, 1, 1)" in text


@pytest.mark.parametrize("dtype", [pk.bool_, pk.u8, pk.i16, pk.f16, pk.i64, pk.f64])
def test_a_failing_read_of_any_dtype_gives_zero(dtype):
    @pk.kernel(debug=True)
    def shift(x: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = x[i + 1]

    x = np.ones(4, dtype.numpy)
    out = np.full(4, 7, dtype.numpy) if dtype != pk.bool_ else np.ones(4, np.bool_)
    text = same_report(shift, 4, x, out.copy())
    assert "invocation (3, 0, 0): index (4,) is out of bounds for 'x' with shape (4,)" in text
    with pytest.raises(pk.KernelIndexError):
        pykern.llvm.launch(shift, 4, x, out)
    np.testing.assert_array_equal(out, np.array([1, 1, 1, 0]).astype(dtype.numpy))


# ------------------------------------------------------------------ first failure wins


def test_the_first_failure_in_launch_order_wins_on_any_number_of_threads():
    @pk.kernel(workgroup=(4,), debug=True)
    def many(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = x[x[i]]  # x[i] > len(x) from invocation 37 on

    n = 400
    x = np.where(np.arange(n) < 37, 0, n + np.arange(n)).astype(np.int32)
    messages = {str(host_error(many, n, x, np.zeros(n, np.int32), threads=t))
                for t in (1, 2, 3, None)}
    assert len(messages) == 1, messages
    (text,) = messages
    assert "invocation (37, 0, 0): index (437,) is out of bounds for 'x'" in text
    assert text == str(interpreter_error(many, n, x, np.zeros(n, np.int32)))


def test_an_assert_after_a_failing_access_of_the_same_invocation_is_not_reported():
    @pk.kernel(debug=True)
    def both(x: pk.f32[:]):
        i = pk.global_id(0)
        v = x[i + 1]
        assert v > 0.0, "never reached"

    text = str(host_error(both, 4, np.ones(4, np.float32)))
    assert "index (4,)" in text and "invocation (3, 0, 0)" in text


# ------------------------------------------------------------------ asserts


def test_a_failed_assert_with_a_message_is_reported_as_on_vulkan():
    @pk.kernel(debug=True)
    def check(x: pk.f32[:]):
        i = pk.global_id(0)
        assert x[i] >= 0.0, "inputs must be non-negative"  # marker: assert

    pykern.llvm.launch(check, 4, np.ones(4, np.float32))  # passes
    text = same_report(check, 4, np.array([1, 2, -3, 4], np.float32))
    assert text.startswith(f"{__file__}:{line_of(check.__wrapped__, 'marker: assert')}:")
    assert "kernel 'check', invocation (2, 0, 0): assertion failed: inputs must be " \
           "non-negative\n" in text


def test_a_failed_assert_without_a_message_names_its_condition():
    @pk.kernel(workgroup=(2, 2), debug=True)
    def ordered(a: pk.i32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        assert j == 2 or a[i, j] <= a[i, j + 1]  # short-circuit: never a[i, 3]

    a = np.array([[1, 2, 3], [4, 6, 5]], np.int32)
    text = same_report(ordered, (2, 3), a)
    assert "invocation (1, 1, 0): assertion failed: j == 2 or a[i, j] <= a[i, j + 1]" in text


def test_an_assert_goes_on_after_it_fails():
    @pk.kernel(debug=True)
    def check_then_write(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        assert x[i] >= 0.0
        out[i] = x[i] * 2.0

    out = np.zeros(3, np.float32)
    with pytest.raises(pk.KernelAssertionError, match=r"invocation \(0, 0, 0\)"):
        pykern.llvm.launch(check_then_write, 3, np.array([-1, 2, 3], np.float32), out)
    np.testing.assert_array_equal(out, [-2, 4, 6])  # as on Vulkan: the launch runs on


@pk.func
def checked_sqrt(v):
    assert v >= 0.0, "sqrt of a negative number"  # marker: func assert
    return pk.sqrt(v)


def test_an_assert_in_a_device_function_and_in_a_barrier_kernel():
    @pk.kernel(workgroup=(4,), debug=True)
    def roots(x: pk.f32[:], out: pk.f32[:]):
        buf = pk.shared(pk.f32, 4)
        t = pk.local_id(0)
        buf[t] = checked_sqrt(x[pk.global_id(0)])
        pk.barrier()
        assert buf[(t + 1) % 4] < 3.0, "neighbour too large"
        out[pk.global_id(0)] = buf[(t + 1) % 4]

    x = np.array([1, 4, -1, 9, 1, 1, 1, 1], np.float32)
    # invocation 2 fails the first assert, before the barrier (so before invocation 1, whose
    # neighbour is now NaN, fails the second)
    text = same_report(roots, 8, x, np.zeros(8, np.float32))
    assert text.startswith(f"{__file__}:{line_of(checked_sqrt, 'marker: func assert')}:")
    assert "invocation (2, 0, 0): assertion failed: sqrt of a negative number" in text
    x[2] = 1.0  # now invocation 2 alone sees a neighbour (sqrt(9)) too large
    text = same_report(roots, 8, x, np.zeros(8, np.float32))
    assert "invocation (2, 0, 0): assertion failed: neighbour too large" in text


def test_without_debug_asserts_are_compiled_out_and_nothing_is_checked():
    @pk.kernel
    def check(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        assert x[i] >= 0.0
        out[i] = x[i] * 2.0

    out = np.zeros(3, np.float32)
    pykern.llvm.launch(check, 3, np.array([-1, 2, 3], np.float32), out)
    np.testing.assert_array_equal(out, [-2, 4, 6])
    host = pykern.llvm.compile_for(check, 3, np.zeros(3, np.float32), out)
    assert host.debug_sites == () and host.layout.report_slot is None


PYKERN_DEBUG_PROGRAM = """
import numpy as np
import pykern as pk
import pykern.llvm

@pk.kernel
def shift(x: pk.f32[:], out: pk.f32[:]):
    out[pk.global_id(0)] = x[pk.global_id(0) + 1]

try:
    pykern.llvm.launch(shift, 4, np.zeros(4, np.float32), np.zeros(4, np.float32))
except pk.KernelIndexError as e:
    print(e)
"""


def test_pykern_debug_turns_debug_mode_on(tmp_path):
    # in a process of its own: the configuration is read once per process
    program = tmp_path / "debug_by_env.py"  # a file: pykern reads a kernel's source
    program.write_text(PYKERN_DEBUG_PROGRAM)
    env = {**os.environ, "PYKERN_DEBUG": "1"}
    result = subprocess.run([sys.executable, str(program)], env=env,
                            capture_output=True, text=True, timeout=300, check=True)
    assert "kernel 'shift', invocation (3, 0, 0): index (4,) is out of bounds for 'x' with " \
           "shape (4,)" in result.stdout, result.stdout + result.stderr


def test_debug_kernels_are_not_taken_from_the_disk_cache():
    args = (np.zeros(8, np.float32), np.zeros(8, np.float32))
    first = pykern.llvm.compile_for(pk.kernel(reads_past_the_end, debug=True), 8, *args)
    again = pykern.llvm.compile_for(pk.kernel(reads_past_the_end, debug=True), 8, *args)
    assert not first.from_disk_cache and not again.from_disk_cache
    assert [s.array for s in again.debug_sites] == ["x", "out"]
