"""Complex reductions (sum, mean, prod, var, std, any, all), cumsum, matmul / vecdot /
tensordot, and the ops that move elements (concat, stack, take, take_along_axis, roll, tile,
repeat, flip, scatter_add), against numpy over hypothesis-drawn shapes and layouts.

Tolerances: sums of n terms in c64 within ~log2(n) * 2^-24 * sum|x| (TESTING.md), so
rtol 1e-5 with an absolute term for cancellation; products and matmul likewise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_support import sample, views

import pykern as pk

SETTINGS = settings(max_examples=6, deadline=None)
rng = np.random.default_rng(7)
TOL = {pk.c64: 1e-5, pk.c128: 1e-12}
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def assert_close(result, expected, tol):
    result = np.asarray(result)
    assert result.shape == np.shape(expected)
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * scale)


@SETTINGS
@given(st.data(), shapes, st.sampled_from([pk.c64, pk.c128]), st.booleans())
def test_reductions_match_numpy(data, shape, dtype, keepdims):
    a, t = data.draw(views(shape, dtype, -2, 2))
    axis = data.draw(st.sampled_from([None, 0, -1, tuple(range(len(shape)))[:2]]))
    for name in ("sum", "mean", "prod", "var", "std"):
        result = getattr(pk, name)(t, axis=axis, keepdims=keepdims)
        expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        assert result.dtype.numpy == expected.dtype, name
        assert_close(result.numpy(), expected, TOL[dtype] * 10)
    np.testing.assert_array_equal(pk.any(t, axis=axis).numpy(), np.any(a, axis=axis))
    np.testing.assert_array_equal(pk.all(t, axis=axis).numpy(), np.all(a, axis=axis))


def test_reduction_edges():
    z = pk.asarray(np.array([[1 + 1j, 0j], [2j, 3]], np.complex64))
    assert pk.prod(pk.zeros((0,), pk.c64)).item() == 1
    assert pk.sum(pk.zeros((2, 0), pk.c128), axis=1).numpy().tolist() == [0, 0]
    assert pk.all(z, axis=1).numpy().tolist() == [False, True]
    assert pk.sum(pk.asarray([1.0, 2.5]), dtype=pk.c64).dtype == pk.c64
    with pytest.raises(TypeError, match="imaginary part"):
        pk.sum(z, dtype=pk.f32)
    with pytest.raises(TypeError, match="argmax is not defined for complex"):
        z.argmax()


@SETTINGS
@given(st.data(), shapes, st.sampled_from([pk.c64, pk.c128]))
def test_cumsum_along_any_axis(data, shape, dtype):
    a, t = data.draw(views(shape, dtype, -2, 2))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    assert_close(pk.cumsum(t, axis=axis).numpy(), np.cumsum(a, axis=axis), TOL[dtype] * 10)
    assert_close(pk.cumsum(t).numpy(), np.cumsum(a), TOL[dtype] * 10)


@pytest.mark.parametrize("dtype, other", [(pk.c64, pk.c64), (pk.c128, pk.f64),
                                          (pk.c64, pk.f32)])
def test_matmul_vecdot_tensordot(dtype, other):
    a = sample(rng, dtype, (2, 3, 4), -1, 1)
    b = sample(rng, other, (4, 5), -1, 1)
    ta, tb = pk.asarray(a), pk.asarray(b)
    result = ta @ tb
    assert result.dtype.numpy == (a @ b).dtype
    assert_close(result.numpy(), a @ b, TOL[dtype] * 10)
    assert_close(pk.matmul(ta.mT, ta[0]).numpy(), a.transpose(0, 2, 1) @ a[0], TOL[dtype] * 10)
    xp = pk.array_api
    assert_close(xp.vecdot(ta, ta[0]).numpy(), np.vecdot(a, a[0]), TOL[dtype] * 10)
    assert_close(xp.tensordot(ta, tb, axes=1).numpy(), np.tensordot(a, b, axes=1),
                 TOL[dtype] * 10)


@SETTINGS
@given(st.data(), shapes)
def test_ops_that_move_elements(data, shape):
    a, t = data.draw(views(shape, pk.c64))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    b = sample(rng, pk.f32, shape)
    np.testing.assert_array_equal(pk.concat([t, pk.asarray(b)], axis=axis).numpy(),
                                  np.concatenate([a, b], axis=axis))
    np.testing.assert_array_equal(pk.concat([t, t], axis=None).numpy(),
                                  np.concatenate([a, a], axis=None))
    np.testing.assert_array_equal(pk.stack([t, t], axis=axis).numpy(),
                                  np.stack([a, a], axis=axis))
    idx = rng.integers(0, shape[axis], 3)
    np.testing.assert_array_equal(pk.take(t, pk.asarray(idx), axis=axis).numpy(),
                                  np.take(a, idx, axis=axis))
    order = np.argsort(a.real, axis=axis)
    np.testing.assert_array_equal(pk.take_along_axis(t, pk.asarray(order), axis=axis).numpy(),
                                  np.take_along_axis(a, order, axis=axis))
    xp = pk.array_api
    np.testing.assert_array_equal(xp.roll(t, 1, axis=axis).numpy(), np.roll(a, 1, axis=axis))
    np.testing.assert_array_equal(xp.flip(t, axis=axis).numpy(), np.flip(a, axis=axis))
    np.testing.assert_array_equal(xp.tile(t, (2,)).numpy(), np.tile(a, (2,)))
    np.testing.assert_array_equal(xp.repeat(t, 2, axis=axis).numpy(),
                                  np.repeat(a, 2, axis=axis))
    np.testing.assert_array_equal(t.reshape(-1).numpy(), a.reshape(-1))


def test_scatter_add_of_complex():
    out = pk.scatter_add(pk.asarray(np.array([1j, 0, 0], np.complex64)), 0,
                         pk.asarray([0, 2, 2]), pk.asarray([1 + 1j, 2, -3j]))
    assert out.numpy().tolist() == [1 + 2j, 0, 2 - 3j]


@SETTINGS
@given(st.data())
def test_unique_of_complex_in_numpys_order(data):
    # numpy orders complex values by real part, then imaginary part; few distinct parts so
    # that values repeat and ties on the real part are common
    dtype = data.draw(st.sampled_from([pk.c64, pk.c128]))
    n = data.draw(st.integers(1, 12))
    parts = data.draw(st.lists(st.sampled_from([-1.0, 0.0, 2.5]), min_size=2 * n,
                               max_size=2 * n))
    a = (np.array(parts[:n]) + 1j * np.array(parts[n:])).astype(dtype.numpy)
    got = pk.array_api.unique_all(pk.asarray(a))
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                               return_counts=True)
    np.testing.assert_array_equal(got.values.numpy(), values)
    np.testing.assert_array_equal(got.indices.numpy(), index)
    np.testing.assert_array_equal(got.inverse_indices.numpy(), inverse)
    np.testing.assert_array_equal(got.counts.numpy(), counts)
