"""Creating tensors on the device: zeros/ones/full/empty and *_like, arange, linspace, eye,
tril/triu, and pk.random (Philox-4x32-10: known answers, reproducibility, independence from the
launch shape, distribution checks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_support import ALL, sample

import pykern as pk

rng = np.random.default_rng(11)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_zeros_ones_full_every_dtype(dtype):
    np.testing.assert_array_equal(pk.zeros((2, 3), dtype).numpy(), np.zeros((2, 3), dtype.numpy))
    np.testing.assert_array_equal(pk.ones(4, dtype).numpy(), np.ones(4, dtype.numpy))
    value = True if dtype == pk.bool_ else 3 if not dtype.is_float else 2.5
    f = pk.full((3, 1), value, dtype)
    assert f.dtype == dtype
    np.testing.assert_array_equal(f.numpy(), np.full((3, 1), value, dtype.numpy))


def test_defaults_and_like():
    assert pk.zeros(3).dtype == pk.f32 and pk.ones((2,)).dtype == pk.f32
    assert pk.full(2, 7).dtype == pk.i32 and pk.full(2, 7.0).dtype == pk.f32
    assert pk.full(2, True).dtype == pk.bool_ and pk.full(2, np.int8(3)).dtype == pk.i8
    x = pk.asarray(np.zeros((2, 5), np.uint16))
    for like, value in ((pk.zeros_like, 0), (pk.ones_like, 1)):
        t = like(x)
        assert t.shape == (2, 5) and t.dtype == pk.u16
        np.testing.assert_array_equal(t.numpy(), np.full((2, 5), value))
    f = pk.full_like(x, 9, dtype=pk.f64)
    assert f.dtype == pk.f64 and f.numpy().tolist() == [[9.0] * 5] * 2
    assert pk.empty_like(x).shape == (2, 5)
    assert pk.zeros((0, 3)).numpy().shape == (0, 3) and pk.zeros(()).shape == ()
    with pytest.raises(ValueError, match="negative dimension"):
        pk.zeros((2, -1))
    with pytest.raises(TypeError, match="not a pykern dtype"):
        pk.zeros(3, "U4")


@settings(max_examples=30, deadline=None)
@given(start=st.integers(-50, 50), stop=st.integers(-50, 50),
       step=st.integers(-7, 7).filter(lambda s: s != 0),
       dtype=st.sampled_from([None, pk.i32, pk.i64, pk.i16, pk.f32]))
def test_arange_integers(start, stop, step, dtype):
    t = pk.arange(start, stop, step, dtype=dtype)
    expected = np.arange(start, stop, step, dtype=(dtype or pk.i32).numpy)
    assert t.dtype == (dtype or pk.i32)
    np.testing.assert_array_equal(t.numpy(), expected)


@settings(max_examples=30, deadline=None)
@given(start=st.floats(-10, 10), span=st.floats(-20, 20), step=st.floats(0.05, 3),
       dtype=st.sampled_from([pk.f32, pk.f64, pk.f16]))
def test_arange_floats(start, span, step, dtype):
    step = step if span >= 0 else -step
    t = pk.arange(start, start + span, step, dtype=dtype)
    expected = np.arange(start, start + span, step)  # computed in f64
    assert t.shape == expected.shape and t.dtype == dtype
    tol = 2e-2 if dtype == pk.f16 else 1e-5 if dtype == pk.f32 else 1e-12
    np.testing.assert_allclose(t.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


@settings(max_examples=40, deadline=None)
@given(start=st.floats(-50, 50), stop=st.floats(-50, 50),
       step=st.floats(0.05, 7) | st.floats(-7, -0.05) | st.integers(-7, 7).filter(bool),
       dtype=st.sampled_from([pk.i32, pk.i64, pk.i8, pk.u8]))
def test_arange_integer_dtype_of_float_arguments_follows_numpy(start, stop, step, dtype):
    # numpy: the first value is int(start), the step int(start + step) - int(start), the
    # length ceil((stop - start) / step). Values beyond the dtype are an OverflowError, as
    # for integer arguments (numpy raises for the first two values and wraps the others)
    exact = np.arange(start, stop, step, dtype=np.int64)
    info = np.iinfo(dtype.numpy)
    if exact.size and not info.min <= exact.min() <= exact.max() <= info.max:
        with pytest.raises(OverflowError, match=f"out of bounds for {dtype.name}"):
            pk.arange(start, stop, step, dtype=dtype)
        return
    expected = np.arange(start, stop, step, dtype=dtype.numpy)
    t = pk.arange(start, stop, step, dtype=dtype)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), expected)


def test_arange_integer_dtype_of_a_fractional_step():
    for args in [(0, 3, 0.5), (0.5, 3, 0.5), (-1, 3, 0.7), (5, -10, -2.5), (0.0, 3.0, 1.0)]:
        t = pk.arange(*args, dtype=pk.i32)
        np.testing.assert_array_equal(t.numpy(), np.arange(*args, dtype=np.int32))
    np.testing.assert_array_equal(pk.arange(0, 3, 0.5, dtype=pk.i32).numpy(), np.zeros(6))


def test_arange_forms_and_errors():
    np.testing.assert_array_equal(pk.arange(5).numpy(), np.arange(5))
    np.testing.assert_array_equal(pk.arange(1, 2, 0.25).numpy(), np.arange(1, 2, 0.25))
    assert pk.arange(0.5).dtype == pk.f32 and pk.arange(3).dtype == pk.i32
    assert pk.arange(5, 1).shape == (0,)
    big = pk.arange(2**40, 2**40 + 3, dtype=pk.i64)
    np.testing.assert_array_equal(big.numpy(), np.arange(2**40, 2**40 + 3))
    with pytest.raises(ValueError, match="step must not be 0"):
        pk.arange(0, 5, 0)
    with pytest.raises(OverflowError, match="out of bounds for i8"):
        pk.arange(0, 300, dtype=pk.i8)
    # a negative step of an unsigned dtype, and a step beyond the dtype between values in it
    for args, dtype in [((10, 2, -3), pk.u8), ((255, 0, -100), pk.u32), ((10, 0, -1), pk.u64),
                        ((2**64 - 1, 0, -2**63), pk.u64), ((-100, 100, 150), pk.i8)]:
        np.testing.assert_array_equal(pk.arange(*args, dtype=dtype).numpy(),
                                      np.arange(*args, dtype=dtype.numpy))


@settings(max_examples=25, deadline=None)
@given(start=st.floats(-100, 100), stop=st.floats(-100, 100), num=st.integers(0, 40),
       endpoint=st.booleans(), dtype=st.sampled_from([pk.f32, pk.f64, pk.i32]))
def test_linspace(start, stop, num, endpoint, dtype):
    t = pk.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
    expected = np.linspace(start, stop, num, endpoint=endpoint)
    assert t.dtype == dtype and t.shape == (num,)
    if dtype.is_float:
        tol = 2e-5 if dtype == pk.f32 else 1e-12
        np.testing.assert_allclose(t.numpy(), expected, rtol=tol, atol=tol * 100)
        if endpoint and num > 1:
            assert t.numpy()[-1] == (np.float32(stop) if dtype == pk.f32 else stop)
    else:
        # integer linspace takes the floor (numpy 2); allow a value on an exact integer to
        # land either side after f32 rounding
        got = t.numpy()
        assert np.all(np.abs(got - np.floor(expected)) <= 1)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (4, 6, 1), (5, 3, -2), (3, 3, 5), (0, 2, 0)])
def test_eye(n, m, k):
    np.testing.assert_array_equal(pk.eye(n, m, k=k).numpy(), np.eye(n, m, k=k, dtype=np.float32))
    assert pk.eye(2, dtype=pk.i8).dtype == pk.i8


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_triu(k):
    a = sample(rng, pk.f32, (2, 4, 5))
    t = pk.asarray(a)
    np.testing.assert_array_equal(pk.tril(t, k=k).numpy(), np.tril(a, k))
    np.testing.assert_array_equal(pk.triu(t[:, ::-1], k=k).numpy(), np.triu(a[:, ::-1], k))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        pk.tril(pk.zeros(3))


# ---------------------------------------------------------------- random


def test_philox_known_answer():
    pk.random.seed(0)  # key 0, counter 0: the Random123 known-answer vector
    words = pk.random.randint(0, 2**32, 4, dtype=pk.u32).numpy()
    assert [int(w) for w in words] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.parametrize("fn,dtype", [(pk.random.rand, pk.f32), (pk.random.randn, pk.f16),
                                      (pk.random.rand, pk.f64)])
def test_random_reproducible_and_independent_of_shape(fn, dtype):
    pk.random.seed(1234)
    a = fn(6, 5, dtype=dtype).numpy()
    b = fn(30, dtype=dtype).numpy()
    pk.random.seed(1234)
    a2 = fn((3, 10), dtype=dtype).numpy()  # same elements, another shape
    np.testing.assert_array_equal(a.reshape(-1), a2.reshape(-1))
    assert not np.array_equal(a.reshape(-1), b)  # the position moved on
    state = pk.random.get_state()
    c = fn(7, dtype=dtype).numpy()
    pk.random.set_state(state)
    np.testing.assert_array_equal(fn(7, dtype=dtype).numpy(), c)


def test_uniform_and_normal_distributions():
    pk.random.seed(7)
    u = pk.random.rand(200_000).numpy()
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    counts = np.histogram(u, 20, (0, 1))[0]
    assert counts.min() > 9000 and counts.max() < 11000
    assert np.all((u * 2**24) == np.round(u * 2**24))  # multiples of 2**-24
    z = pk.random.randn(200_000).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.005
    d = pk.random.rand(50_000, dtype=pk.f64).numpy()
    assert d.dtype == np.float64 and len(np.unique(d)) == d.size
    h = pk.random.rand(1000, dtype=pk.f16).numpy()
    assert h.dtype == np.float16 and h.max() < 1
    g = pk.random.normal(3.0, 0.5, (100_000,)).numpy()
    assert abs(g.mean() - 3) < 0.01 and abs(g.std() - 0.5) < 0.01
    v = pk.random.uniform(-2.0, 4.0, (100_000,)).numpy()
    assert v.min() >= -2 and v.max() < 4 and abs(v.mean() - 1) < 0.05


@pytest.mark.parametrize("dtype,low,high", [(pk.i32, -5, 10), (pk.u8, 0, 256), (pk.i8, -128, -120),
                                            (pk.i64, -2**40, 2**40), (pk.u64, 0, 2**64),
                                            (pk.i16, 100, 101)])
def test_randint_bounds_and_coverage(dtype, low, high):
    pk.random.seed(99)
    r = pk.random.randint(low, high, (20_000,), dtype=dtype).numpy()
    assert r.dtype == dtype.numpy
    assert r.min() >= low and r.max() <= high - 1
    span = high - low
    if span <= 256:
        assert len(np.unique(r)) == span  # every value drawn
    else:
        assert abs(r.astype(np.float64).mean() - (low + high - 1) / 2) < span * 0.01


def test_randint_forms_and_errors():
    r = pk.random.randint(5, shape=(3, 3))
    assert r.shape == (3, 3) and r.dtype == pk.i32 and r.numpy().max() < 5
    with pytest.raises(ValueError, match="must be below high"):
        pk.random.randint(3, 3)
    with pytest.raises(ValueError, match="outside the range of u8"):
        pk.random.randint(0, 300, 3, dtype=pk.u8)
    with pytest.raises(TypeError, match="makes floats"):
        pk.random.rand(3, dtype=pk.i32)
    with pytest.raises(ValueError, match="seed must be"):
        pk.random.seed(-1)
    assert pk.random.rand(0).shape == (0,)


@pytest.mark.parametrize("args", [(0, 2), (0, 1), (1, 3), (0.5, 2), (2, 0, -1), (0, 0),
                                  (0, 3), (0, 3, 0.5), (-1, 5, 2)])
def test_arange_of_bools_as_numpy(args):
    """numpy's bool range: start and start + step as truths, at most two values; a longer
    one is a TypeError."""
    try:
        expected = np.arange(*args, dtype=bool)
    except TypeError:
        with pytest.raises(TypeError, match="at most 2 values"):
            pk.arange(*args, dtype=pk.bool_)
        return
    got = pk.arange(*args, dtype=pk.bool_)
    assert got.dtype == pk.bool_
    np.testing.assert_array_equal(got.numpy(), expected)


def test_repeated_fills_keep_each_value_sign_and_dtype():
    # zeros/ones/full replay a plan per (shape, dtype, value): a plan must never serve another
    # value, nor -0.0 for 0.0
    values = [0, 1, 2, -3, 1.5, -0.0, 0.0, True, False, np.inf, -np.inf, np.nan]
    for _ in range(3):  # the first call of each captures, the later ones replay
        for v in values:
            got = pk.full((2, 3), v)
            want = np.full((2, 3), v, dtype=got.dtype.numpy)
            np.testing.assert_array_equal(got.numpy(), want)
            assert np.array_equal(np.signbit(got.numpy()), np.signbit(want)), v
            f16 = pk.full((4,), v, dtype=pk.f16)
            np.testing.assert_array_equal(f16.numpy(), np.full((4,), v, np.float16))
        np.testing.assert_array_equal(pk.zeros((3,), dtype=pk.i64).numpy(), np.zeros(3, np.int64))
        np.testing.assert_array_equal(pk.ones((2, 2), dtype=pk.u8).numpy(),
                                      np.ones((2, 2), np.uint8))
