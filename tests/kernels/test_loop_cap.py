"""Loops the driver cuts short are reported, never silent.

lavapipe ends every loop of an invocation once it has run 65,535 loop iterations, all its loops
together, as if the loops' conditions had become false. On such a device every loop pykern
emits checks whether it was cut, and the wait for the launch's results raises pk.DeviceError
naming the kernel and the loop. The tests that need the cap run where the device has one; the
compile-only ones run everywhere, for a target with and without a cap.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import pykern as pk
from pykern.spirv.binding_plan import LOOP_STATUS_BUFFER
from pykern.spirv.loopcap import FOR, WHILE, sites_in_module
from pykern.spirv.lower import lower
from pykern.spirv.target import Target
from pykern.spirv.encoding.validate import disassemble

CAP = pk.get_device().info.limits.loop_iteration_cap
capped = pytest.mark.skipif(CAP is None, reason="the device does not cut loops short")


def line_of(fn, marker):
    """The line number of the source line of `fn` that contains `marker`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def counting_for(out: pk.i32[:], n: pk.i32):
    s = 0
    for _ in range(n):  # the loop
        s += 1
    out[pk.global_id(0)] = s


def counting_while(out: pk.i32[:], n: pk.i32):
    s = 0
    while s < n:  # the loop
        s += 1
    out[pk.global_id(0)] = s


def run(fn, n, grid=1):
    out = np.zeros(grid, np.int32)
    pk.kernel(fn)[grid](out, n)
    return out


def test_the_device_states_its_cap():
    info = pk.get_device().info
    if "llvmpipe" in info.name:
        assert CAP == 65535
        assert "loops cut after 65,535 iterations per invocation" in str(info)
    else:
        assert CAP is None or CAP > 0


@capped
@pytest.mark.parametrize("fn, kind", [(counting_for, FOR), (counting_while, WHILE)],
                         ids=["for", "while"])
def test_a_loop_cut_short_raises_naming_kernel_loop_and_cap(fn, kind):
    with pytest.raises(pk.DeviceError) as info:
        run(fn, 100_000)  # the copy back of the numpy argument waits for the launch
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line_of(fn, '# the loop')}:")
    assert f"kernel '{fn.__name__}'" in message
    assert f"after {CAP:,} loop iterations" in message
    assert f"this {kind} was cut short in 1 invocation" in message
    assert "results of the launch are wrong" in message
    assert "# the loop" in message  # the source line


@capped
@pytest.mark.parametrize("fn", [counting_for, counting_while], ids=["for", "while"])
def test_a_loop_that_finishes_at_the_cap_does_not_report(fn):
    # the iteration that ends the loop is the last one the driver allows
    assert run(fn, CAP).tolist() == [CAP]
    assert run(fn, CAP - 1).tolist() == [CAP - 1]
    with pytest.raises(pk.DeviceError):
        run(fn, CAP + 1)


def nested(out: pk.i32[:], n: pk.i32, m: pk.i32):
    s = 0
    for _ in range(n):
        for _ in range(m):  # inner
            s += 1
    out[0] = s


def last_outer_iteration(out: pk.i32[:], m: pk.i32):
    # the cap is reached in the inner loop of the outer loop's last iteration: the outer loop
    # itself finishes, only the inner one knows it was cut
    s = 0
    for _i in range(2):
        for _ in range(m):  # inner
            s += 1
    out[0] = s


def early_exits(out: pk.i32[:], n: pk.i32, stop: pk.i32):
    # a for loop and a while loop that break: breaking is not being cut
    s = 0
    for k in range(n):
        if k == stop:
            break
        s += 1
    w = 0
    while w < n:  # while
        if w == stop:
            break
        w += 1
    out[0] = s + w


def integer_powers(out: pk.i32[:], n: pk.i32, big: pk.i32):
    # ** runs a loop over the exponent's bits: 31 iterations for `big`, mostly where the cap
    # falls
    s = 0
    for i in range(n):
        s += (i & 7) ** (big + (i & 1))  # pow
    out[0] = s


def float_remainders(out: pk.f32[:], n: pk.i32):
    s = 0.0
    for i in range(n):
        s += (pk.f32(i) * 1.5e30) % 7.0  # mod
    out[0] = s


def float_atomic_max(out: pk.f32[:], n: pk.i32):
    for i in range(n):
        pk.atomic_max(out, 0, pk.f32(i))  # cas


def wrapped_sum_of_powers(n, big):
    """What `integer_powers` computes, in i32 arithmetic."""
    total = sum(pow(i & 7, big + (i & 1), 2**32) for i in range(n)) % 2**32
    return total - 2**32 if total >= 2**31 else total


@capped
@pytest.mark.parametrize("fn, args, marker, kind", [
    (nested, (1000, 100), "# inner", FOR),
    (last_outer_iteration, (40_000,), "# inner", FOR),
    (early_exits, (100_000, 80_000), "for k in", FOR),
    (integer_powers, (3000, 1 << 30), "# pow", "loop that computes an integer **"),
    (float_remainders, (20_000,), "# mod", "loop that computes a float % or //"),
    (float_atomic_max, (70_000,), "# cas", "for loop"),
], ids=["nested", "last-outer-iteration", "break", "int-pow", "float-mod", "atomic"])
def test_every_kind_of_loop_reports(fn, args, marker, kind):
    out = np.zeros(1, np.float32 if "float" in fn.__name__ else np.int32)
    with pytest.raises(pk.DeviceError, match=re.escape(f"this {kind} was cut short")) as info:
        pk.kernel(fn)[1](out, *args)
    if fn is not float_atomic_max:  # there the for loop is cut (its body's CAS loop is short)
        assert str(info.value).startswith(f"{__file__}:{line_of(fn, marker)}:")


@capped
@pytest.mark.parametrize("fn, args, expected", [
    (nested, (100, 500), 50_000),
    (last_outer_iteration, (30_000,), 60_000),
    (early_exits, (100_000, 10), 20),
    (early_exits, (100_000, 30_000), 60_000),
    (integer_powers, (1000, 1 << 30), wrapped_sum_of_powers(1000, 1 << 30)),
], ids=["nested", "last-outer-iteration", "break", "break-late", "int-pow"])
def test_loops_within_the_cap_give_the_right_answer_and_no_report(fn, args, expected):
    out = np.zeros(1, np.int32)
    pk.kernel(fn)[1](out, *args)
    assert out.tolist() == [expected]


@capped
def test_only_the_invocations_cut_short_are_counted_and_tensors_stay_intact():
    kernel = pk.kernel(counting_for)
    keep = pk.asarray(np.arange(10, dtype=np.float32))
    out = pk.zeros(8, pk.i32)
    n = np.array([10, 100_000, 5, CAP, CAP + 1, 3, 0, 70_000], np.int32)

    @pk.kernel
    def per_invocation(out: pk.i32[:], n: pk.i32[:]):
        i = pk.global_id(0)
        s = 0
        for _ in range(n[i]):
            s += 1
        out[i] = s

    per_invocation[8](out, pk.asarray(n))
    with pytest.raises(pk.DeviceError, match="cut short in 3 invocations"):
        out.numpy()  # the wait for the tensor raises
    # nothing else is lost: earlier tensors, the next launches of this and other kernels
    assert keep.numpy().tolist() == list(range(10))
    assert out.numpy()[[0, 2, 3, 5, 6]].tolist() == [10, 5, CAP, 3, 0]
    small = pk.zeros(1, pk.i32)
    kernel[1](small, 1000)
    per_invocation[8](out, pk.asarray(np.full(8, 7, np.int32)))
    assert small.numpy().tolist() == [1000]
    assert out.numpy().tolist() == [7] * 8


@capped
def test_sync_raises_the_report_of_a_tensor_launch():
    out = pk.zeros(1, pk.i32)
    pk.kernel(counting_while)[1](out, 100_000)
    with pytest.raises(pk.DeviceError, match="was cut short"):
        pk.sync()
    pk.sync()  # reported once


@capped
def test_loop_sites_come_back_from_the_disk_cache():
    from pykern.jit.kernel import disk_cache

    if disk_cache() is None:
        pytest.skip("the compile cache is off (PYKERN_CACHE=0)")
    first = pk.kernel(counting_for)
    first[1](np.zeros(1, np.int32), 10)
    again = pk.kernel(counting_for)  # a new kernel object: its variant comes from the disk
    with pytest.raises(pk.DeviceError) as info:
        again[1](np.zeros(1, np.int32), 100_000)
    variant = next(iter(again._variants.values()))
    assert variant.from_disk_cache  # kernels with loops are cached on such devices too
    assert str(info.value).startswith(f"{__file__}:{line_of(counting_for, '# the loop')}:")


# ---------------------------------------------------------------- compiled for a target


def compiled(fn, target, *args):
    return lower(pk.kernel(fn).ir(*args), target)


ARGS = (np.zeros(1, np.int32), 1)


def test_without_a_cap_loops_have_no_status_buffer_and_no_checks():
    module = compiled(counting_while, Target(), *ARGS)
    assert [s.name for s in module.layout.buffers] == ["out"]
    assert module.loop_sites == ()
    assert "OpAtomicIAdd" not in disassemble(module.words)


def test_with_a_cap_each_loop_has_a_site_named_in_the_module():
    def two_loops(out: pk.i32[:], n: pk.i32):
        s = 0
        for _ in range(n):
            s += 1
        while s > 3:
            s -= 2
        out[0] = s

    module = compiled(two_loops, Target(loop_iteration_cap=65535), *ARGS)
    status = module.layout.buffers[-1]
    assert status.name == LOOP_STATUS_BUFFER and not status.readable and not status.writable
    assert [s.what for s in module.loop_sites] == [FOR, WHILE]
    assert [s.loc.line for s in module.loop_sites] == [line_of(two_loops, "for _ in"),
                                                       line_of(two_loops, "while s")]
    assert sites_in_module(module.words) == module.loop_sites  # what the disk cache keeps


def test_with_a_cap_a_kernel_without_loops_has_no_status_buffer():
    def no_loop(out: pk.i32[:], n: pk.i32):
        out[0] = n * 2

    module = compiled(no_loop, Target(loop_iteration_cap=65535), *ARGS)
    assert [s.name for s in module.layout.buffers] == ["out"]


@capped
def test_thousands_of_launches_with_loops_are_checked_at_one_wait():
    """Every batch with a launch of a kernel with loops leaves a check for the next wait; a
    wait that finds thousands due runs them one after the other (each reads its report, which
    waits itself), not one inside the other (a RecursionError once)."""
    import pykern.runtime as rt
    from pykern.runtime.selection import running_on

    own = rt.open_device(pk.get_device().info.index, batch_launches=1)  # a batch per launch
    try:
        kernel = pk.kernel(counting_for)
        with running_on(own):
            out = pk.zeros(1, dtype=pk.i32)
            for _ in range(1500):
                kernel[1](out, 3)
            own.sync()
            assert out.numpy()[0] == 3
    finally:
        own.close()
