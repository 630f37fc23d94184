"""pk.Tensor creation and read-back (the foundation part of the tensor API)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.lang import dtypes


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.float64, np.int8, np.uint16])
def test_asarray_round_trip(dtype):
    a = (np.arange(1000) % 100).astype(dtype)
    t = pk.asarray(a)
    assert t.shape == a.shape and t.dtype == dtypes.from_numpy(dtype)
    assert t.strides == a.strides and t.size == a.size and t.ndim == 1
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(np.asarray(t), a)


def test_asarray_of_lists_defaults_to_32_bit():
    assert pk.asarray([1.0, 2.0]).dtype == pk.f32
    assert pk.asarray([1, 2]).dtype == pk.i32
    assert pk.asarray([1, 2], dtype=pk.f32).dtype == pk.f32
    assert pk.asarray(np.array([1, 2], np.int64)).dtype == pk.i64


def test_asarray_of_non_contiguous_numpy():
    a = np.arange(60, dtype=np.float32).reshape(6, 10)[::2, 1::3]
    np.testing.assert_array_equal(pk.asarray(a).numpy(), a)


def test_zeros_empty_like():
    z = pk.zeros((3, 4), pk.i32)
    assert z.shape == (3, 4) and z.dtype == pk.i32
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4), np.int32))
    e = pk.empty_like(z)
    assert e.shape == (3, 4) and e.dtype == pk.i32
    zl = pk.zeros_like(np.ones(5, np.float32))
    np.testing.assert_array_equal(zl.numpy(), np.zeros(5, np.float32))


def test_zero_size_tensor():
    t = pk.zeros((0, 3), pk.f32)
    assert t.size == 0
    assert t.numpy().shape == (0, 3)


def test_negative_dimension_is_an_error():
    with pytest.raises(ValueError, match="negative dimension"):
        pk.empty((2, -1))


def test_repr_shows_values():
    t = pk.asarray(np.array([1.5, 2.0], np.float32))
    assert repr(t) == "pk.Tensor([1.5, 2. ], dtype=pk.f32)"


def test_tensor_written_by_kernel_reads_back_after_queueing():
    @pk.kernel
    def iota(out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = i

    t = pk.empty(10_000, pk.i32)
    iota[t.size](t)  # queued
    np.testing.assert_array_equal(t.numpy(), np.arange(10_000))  # waits for it
