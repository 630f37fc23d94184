"""pk.linalg.vector_norm, matrix_norm and numpy's norm against numpy.linalg.norm: every ord,
axes and keepdims, integer input, values that would overflow a naive sum of squares, and the
errors for a bad ord or axis. Tolerances: a few ulps of the dtype times the reduced length."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

VECTOR_ORDS = [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1]
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@settings(max_examples=12, deadline=None)
@given(ord=st.sampled_from(VECTOR_ORDS), keepdims=st.booleans(),
       axis=st.sampled_from([None, -1, 0, (0, 2), (2, 0, 1)]), seed=st.integers(0, 2**16))
def test_vector_norm_matches_numpy(ord, keepdims, axis, seed):  # noqa: A002
    # one rank and dtype (f32; f64 in the tests below): the elementwise kernels compile once
    # per rank and dtype
    shape, dtype = (2, 3, 4), np.float32
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x[..., 0] = 0  # zeros count for ord=0 and give 0 for negative p
    got = pk.linalg.vector_norm(pk.asarray(x), axis=axis, keepdims=keepdims, ord=ord)
    flat_axis = tuple(range(len(shape))) if axis is None else axis
    with np.errstate(divide="ignore"):
        want = _numpy_vector_norm(x.astype(np.float64), flat_axis, keepdims, ord)
    assert got.dtype == pk.asarray(x).dtype and got.shape == want.shape
    tol = 50 * np.finfo(dtype).eps
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def _numpy_vector_norm(x: np.ndarray, axis: object, keepdims: bool, ord: float) -> np.ndarray:  # noqa: A002
    axes = (axis,) if isinstance(axis, int) else tuple(axis)  # type: ignore[arg-type]
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,))
    out = np.linalg.norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = np.expand_dims(out, tuple(a % x.ndim for a in axes))
    return out


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_matches_numpy(ord):  # noqa: A002
    x = np.random.default_rng(5).standard_normal((2, 4, 3))
    got = pk.linalg.matrix_norm(pk.asarray(x), ord=ord)
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(x, ord=ord, axis=(-2, -1)),
                               rtol=1e-12)
    kept = pk.linalg.matrix_norm(pk.asarray(x), ord=ord, keepdims=True)
    assert kept.shape == (2, 1, 1)


def test_norm_follows_numpy():
    x = np.random.default_rng(6).standard_normal((3, 4))
    t = pk.asarray(x)
    cases = [dict(), dict(ord=1), dict(ord="nuc"), dict(axis=0), dict(axis=1, ord=math.inf),
             dict(axis=(1, 0), ord=1), dict(axis=(0, 1), keepdims=True), dict(keepdims=True)]
    for kw in cases:
        np.testing.assert_allclose(pk.linalg.norm(t, **kw).numpy(), np.linalg.norm(x, **kw),
                                   rtol=1e-12, err_msg=str(kw))
    np.testing.assert_allclose(pk.linalg.norm(t[0], ord=3).numpy(),
                               np.linalg.norm(x[0], ord=3), rtol=1e-12)


def test_norms_of_huge_tiny_and_integer_values():
    big = pk.asarray(np.array([3e30, 4e30], dtype=np.float32))
    np.testing.assert_allclose(pk.linalg.vector_norm(big).numpy(), 5e30, rtol=1e-6)
    tiny = pk.asarray(np.array([3e-30, 4e-30], dtype=np.float32))
    np.testing.assert_allclose(pk.linalg.vector_norm(tiny).numpy(), 5e-30, rtol=1e-6)
    ints = pk.linalg.vector_norm(pk.asarray(np.array([3, -4], dtype=np.int32)))
    assert ints.dtype == pk.f32 and ints.item() == 5.0
    with_inf = pk.asarray(np.array([1.0, math.inf]))
    assert pk.linalg.vector_norm(with_inf).item() == math.inf


def test_norm_errors_name_the_argument():
    t = pk.zeros((2, 3))
    with pytest.raises(ValueError, match="vector_norm: ord"):
        pk.linalg.vector_norm(t, ord="fro")
    with pytest.raises(ValueError, match="matrix_norm: ord"):
        pk.linalg.matrix_norm(t, ord=3)
    with pytest.raises(ValueError, match="matrix_norm: x must have at least 2"):
        pk.linalg.matrix_norm(pk.zeros((3,)))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        pk.linalg.vector_norm(t, axis=2)
    with pytest.raises(ValueError, match="repeats an axis"):
        pk.linalg.vector_norm(t, axis=(0, -2))
    with pytest.raises(ValueError, match="norm: ord=1 with axis=None needs a 1-d or 2-d"):
        pk.linalg.norm(pk.zeros((2, 2, 2)), ord=1)
    with pytest.raises(ValueError, match="norm: axis must be an int or a pair"):
        pk.linalg.norm(pk.zeros((2, 2, 2)), axis=(0, 1, 2))


def test_norms_of_complex_input_are_real():
    rng = np.random.default_rng(8)
    z = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    t = pk.asarray(z)
    for ord in (2, 1, math.inf, 3):  # noqa: A001
        got = pk.linalg.vector_norm(t, axis=-1, ord=ord)
        assert got.dtype == pk.f64
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(z, ord=ord, axis=-1),
                                   rtol=1e-12)
    for ord in MATRIX_ORDS:  # noqa: A001
        np.testing.assert_allclose(pk.linalg.matrix_norm(t, ord=ord).numpy(),
                                   np.linalg.norm(z, ord=ord, axis=(-2, -1)), rtol=1e-12)
    assert pk.linalg.vector_norm(pk.asarray(z.astype(np.complex64))).dtype == pk.f32


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 4, 0), (2, 0, 4), (0, 0)])
def test_matrix_norms_of_empty_matrices_follow_numpy(shape):
    # ord=2 raised an IndexError, ord=1 of a matrix without columns a max() error: the largest
    # of no values is 0 (numpy's); the smallest (-1, -2, -inf) is a ValueError naming the ord
    x = np.zeros(shape)
    for order in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        try:
            want = np.linalg.norm(x, order, axis=(-2, -1))
        except ValueError:
            with pytest.raises(ValueError, match=f"ord={order}"):
                pk.linalg.matrix_norm(pk.asarray(x), ord=order)
            continue
        got = pk.linalg.matrix_norm(pk.asarray(x), ord=order)
        assert got.shape == want.shape and np.array_equal(got.numpy(), want)
