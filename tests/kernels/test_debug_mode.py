"""Debug mode on the device: out-of-bounds accesses and failed asserts are reported on the host
with the kernel, the source line, the invocation, the index and the shape; afterwards tensors
are intact and the next launch works."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import pykern as pk


def line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


def reads_past_the_end(x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = x[i + 2]  # marker: read


def test_out_of_bounds_read_is_reported():
    k = pk.kernel(reads_past_the_end, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelIndexError) as info:
        k[8](x, np.zeros(8, np.float32))
    text = str(info.value)
    assert f"test_debug_mode.py:{line_of(reads_past_the_end, 'marker: read')}:" in text
    assert "reads_past_the_end" in text
    assert "index (8,)" in text or "index (9,)" in text
    assert "shape (8,)" in text
    assert "out[i] = x[i + 2]" in text


def test_out_of_bounds_write_on_2d_is_reported_and_does_not_write():
    @pk.kernel(debug=True)
    def transpose_wrong(a: pk.f32[:, :], out: pk.f32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        out[i, j] = a[i, j]  # out is (3, 4): i runs to 3

    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = pk.zeros((3, 4), pk.f32)
    with pytest.raises(pk.KernelIndexError, match=r"for 'out' with shape \(3, 4\)"):
        transpose_wrong[4, 3](a, out)
    assert np.isfinite(out.numpy()).all()


def test_negative_index_is_reported():
    @pk.kernel(debug=True)
    def backwards(x: pk.i32[:]):
        x[pk.global_id(0) - 1] = 1

    with pytest.raises(pk.KernelIndexError, match=r"index \(-1,\)"):
        backwards[4](np.zeros(4, np.int32))


def test_failed_assert_is_reported_with_message():
    @pk.kernel(debug=True)
    def check(x: pk.f32[:]):
        i = pk.global_id(0)
        assert x[i] >= 0.0, "inputs must be non-negative"

    check[4](np.ones(4, np.float32))
    with pytest.raises(pk.KernelAssertionError, match="inputs must be non-negative"):
        check[4](np.array([1, 2, -3, 4], np.float32))


def test_without_debug_no_check_and_asserts_are_skipped():
    @pk.kernel
    def check(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        assert x[i] >= 0.0
        out[i] = x[i] * 2.0

    out = np.zeros(3, np.float32)
    check[3](np.array([-1, 2, 3], np.float32), out)
    np.testing.assert_array_equal(out, [-2, 4, 6])


def test_after_a_reported_error_tensors_are_intact_and_launches_work():
    x = pk.asarray(np.arange(8, dtype=np.float32))
    out = pk.zeros(8, pk.f32)
    with pytest.raises(pk.KernelIndexError):
        pk.kernel(reads_past_the_end, debug=True)[8](x, out)
    np.testing.assert_array_equal(x.numpy(), np.arange(8))
    pk.kernel(reads_past_the_end, debug=True)[6](x, out)
    np.testing.assert_array_equal(out.numpy()[:6], np.arange(2, 8))


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_a_store_evaluates_its_value_before_its_indices(interpret):
    """`out[j] = x[k]` with both out of bounds: the read of the value fails first, as Python
    evaluates it, in the interpreter as on the device."""
    @pk.kernel(debug=True, interpret=interpret)
    def copy_past(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i + 8] = x[i + 8]

    x = np.ones(4, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(pk.KernelIndexError, match="out of bounds for 'x'"):
        copy_past[1](x, out)
    np.testing.assert_array_equal(out, np.zeros(4))
